-- Where a row goes: INSERT and shard_fdw_key ask the same function, under
-- every strategy.  Each row written is looked up by the key the tool gives
-- for it; NULL key and shard_by columns are refused naming the option.
\ir sql/include/server.sql
SELECT ddb_create_table('route_tab', 'pk', 'sk') AS status;
SELECT ddb_create_table('route_meta', 'base') AS status;

CREATE FOREIGN TABLE calc (game text, player text, score int, region text) SERVER ddb OPTIONS (
  table 'route_tab', partition_key 'pk', partition_key_format 'calc#{game}#{shard}',
  sort_key 'sk', sort_key_format '{score:010}#{player}',
  shard_strategy 'calculated', shards '7', shard_by 'region,player', shard_hash 'md5');
CREATE FOREIGN TABLE ranged (game text, player text, score int, region text) SERVER ddb OPTIONS (
  table 'route_tab', partition_key 'pk', partition_key_format 'range#{game}#{shard:02}',
  sort_key 'sk', sort_key_format '{player}', shard_strategy 'range',
  shard_by 'player', range_boundaries '["", "f", "p3", "p7"]', shard_base '1');
CREATE FOREIGN TABLE plain (game text, player text, score int, region text) SERVER ddb OPTIONS (
  table 'route_tab', partition_key 'pk', partition_key_format 'plain#{game}',
  sort_key 'sk', sort_key_format '{player}');
CREATE FOREIGN TABLE rand (game text, player text, score int, region text) SERVER ddb OPTIONS (
  table 'route_tab', partition_key 'pk', partition_key_format 'rand#{game}#{shard}',
  sort_key 'sk', sort_key_format '{player}', shard_strategy 'random', shards '5');
CREATE FOREIGN TABLE dyn (game text, player text, score int, region text) SERVER ddb OPTIONS (
  table 'route_tab', partition_key 'pk', partition_key_format 'dyn#{game}#{shard}',
  sort_key 'sk', sort_key_format '{player}', shard_strategy 'dynamic',
  metadata_table 'route_meta', metadata_key 'base');

-- every row the INSERT wrote is where the tool says
CREATE TEMP TABLE rows AS
  SELECT 'g' || (i % 3) AS game, 'p' || i AS player, i * 7 % 50 AS score,
         CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END AS region
  FROM generate_series(1, 60) i;
INSERT INTO calc SELECT * FROM rows;
INSERT INTO ranged SELECT * FROM rows;
INSERT INTO plain SELECT * FROM rows;
INSERT INTO rand SELECT * FROM rows;
INSERT INTO dyn SELECT * FROM rows;
CREATE FUNCTION stored(pk text, sk text) RETURNS boolean LANGUAGE sql AS $$
  SELECT shard_fdw_request('ddb', 'GetItem', jsonb_build_object(
    'TableName', 'route_tab', 'Key', jsonb_build_object(
      'pk', jsonb_build_object('S', pk), 'sk', jsonb_build_object('S', sk)))) ? 'Item'
$$;
SELECT tab, count(*) AS rows,
       count(*) FILTER (WHERE stored(k.partition_key, k.sort_key)) AS found_where_the_tool_says,
       count(DISTINCT k.shard) AS shards, min(k.shard) AS first_shard, max(k.shard) AS last_shard
  FROM rows, unnest(ARRAY['calc', 'ranged', 'plain', 'dyn']) tab,
       LATERAL shard_fdw_key(tab::regclass, to_jsonb(rows)) k
 GROUP BY tab ORDER BY tab;
-- random: the tool draws among the shards, as INSERT did
SELECT count(DISTINCT k.shard) BETWEEN 2 AND 5 AS spread, min(k.shard) >= 0 AND max(k.shard) < 5 AS in_range
  FROM rows, LATERAL shard_fdw_key('rand', to_jsonb(rows)) k;
SELECT count(*) AS rand_rows FROM rand WHERE game IN ('g0', 'g1', 'g2');
-- a dynamic key without metadata counts as one shard and writes none
SELECT shard, partition_key FROM shard_fdw_key('dyn', '{"game": "new", "player": "x"}');
SELECT shard_fdw_request('ddb', 'GetItem', '{"TableName": "route_meta",
  "Key": {"base": {"S": "dyn#new"}}}') ? 'Item' AS metadata_written;

-- NULLs name the option that needs the column
INSERT INTO calc VALUES ('g', NULL, 1, 'eu');
INSERT INTO calc VALUES (NULL, 'p', 1, 'eu');
INSERT INTO calc VALUES ('g', 'p', 1, NULL);
INSERT INTO plain VALUES ('g', 'p', NULL), ('g', NULL, 2);
SELECT * FROM shard_fdw_key('ranged', '{"game": "g"}');

DROP FOREIGN TABLE calc, ranged, plain, rand, dyn;
DROP FUNCTION stored;
SELECT ddb_delete_table('route_tab') AS deleted;
SELECT ddb_delete_table('route_meta') AS deleted;
DROP SERVER ddb CASCADE;

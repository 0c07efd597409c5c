-- Changing a table's layout (shard count, strategy, hash, template) keeps
-- the earlier layouts readable until shard_fdw_reshard has moved their
-- items; counts, top-N and point lookups are exact at every step.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\set lb_table Reshard
\ir sql/include/leaderboard.sql
CREATE TABLE local_lb AS
  SELECT 'g' AS game_id, 'p' || lpad(i::text, 5, '0') AS player_id,
         (i * 7919) % 1000 AS score
    FROM generate_series(0, 299) i;
INSERT INTO lb SELECT * FROM local_lb;

-- where each row is, as the DynamoDB keys say
CREATE FUNCTION stored_keys() RETURNS TABLE (pk text, sk text)
LANGUAGE sql AS $$
  SELECT i #>> '{pk,S}', i #>> '{sk,S}'
    FROM jsonb_array_elements(shard_fdw_request('ddb', 'Scan',
           '{"TableName": "Reshard", "ConsistentRead": true}') -> 'Items') i
$$;
-- rows whose stored key is not the one the table's newest layout gives
CREATE FUNCTION misplaced() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM stored_keys() s
   WHERE s.pk <> (SELECT k.partition_key FROM shard_fdw_key('lb', jsonb_build_object(
                    'game_id', 'g', 'player_id', split_part(s.sk, '#', 2))) k)
$$;
-- the checks repeated at every step: count, top 10, point lookups
CREATE FUNCTION same_as_local() RETURNS TABLE (check_name text, ok boolean)
LANGUAGE sql AS $$
  SELECT 'count', (SELECT count(*) FROM lb WHERE game_id = 'g') =
                  (SELECT count(*) FROM local_lb)
  UNION ALL
  SELECT 'whole-table count', (SELECT count(*) FROM lb) = (SELECT count(*) FROM local_lb)
  UNION ALL
  SELECT 'top 10', (SELECT array_agg(player_id || ':' || score) FROM
                     (SELECT player_id, score FROM lb WHERE game_id = 'g'
                       ORDER BY score DESC, player_id DESC LIMIT 10) a) =
                   (SELECT array_agg(player_id || ':' || score) FROM
                     (SELECT player_id, score FROM local_lb
                       ORDER BY score DESC, player_id DESC LIMIT 10) b)
  UNION ALL
  SELECT 'point lookups', (SELECT count(*) FROM local_lb l
                            WHERE (SELECT f.score FROM lb f WHERE f.game_id = 'g'
                                      AND f.player_id = l.player_id) = l.score) =
                           (SELECT count(*) FROM local_lb)
$$;
SELECT * FROM same_as_local();

-- 10 to 20 shards: p00000 stays readable where it was written
ALTER FOREIGN TABLE lb OPTIONS (SET shards '20');
SELECT option_value FROM pg_options_to_table(
  (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'lb'::regclass))
 WHERE option_name = 'layout_history';
EXPLAIN (COSTS OFF)
  SELECT score FROM lb WHERE game_id = 'g' AND player_id = 'p00000';
SELECT score FROM lb WHERE game_id = 'g' AND player_id = 'p00000';
SELECT score FROM local_lb WHERE player_id = 'p00000';
-- an UPDATE finds it, and moves it into the newest layout
UPDATE lb SET score = 1 WHERE game_id = 'g' AND player_id = 'p00000';
UPDATE local_lb SET score = 1 WHERE player_id = 'p00000';
SELECT * FROM same_as_local();
-- writes use the newest layout
INSERT INTO lb VALUES ('g', 'p00300', 555);
INSERT INTO local_lb VALUES ('g', 'p00300', 555);
SELECT pk FROM stored_keys() WHERE sk LIKE '%#p00300';
SELECT partition_key FROM shard_fdw_key('lb', '{"game_id": "g", "player_id": "p00300"}');
-- a conditional INSERT refuses a row stored under an earlier layout's key:
-- one by one, in a batch, by COPY, and ON CONFLICT DO NOTHING skips it
SELECT pk FROM stored_keys() WHERE sk LIKE '%#p00002';
SELECT partition_key FROM shard_fdw_key('lb', '{"game_id": "g", "player_id": "p00002"}');
EXPLAIN (COSTS OFF) INSERT INTO lb VALUES ('g', 'p00002', 838);
INSERT INTO lb VALUES ('g', 'p00002', 838);
INSERT INTO lb SELECT * FROM local_lb WHERE player_id = 'p00002'
  UNION ALL SELECT 'g', 'p00304', 102;
-- (without the error's context, which PostgreSQL 17 and later end with
-- the COPY's own line)
\set SHOW_CONTEXT never
COPY lb FROM stdin;
g	p00302	100
g	p00002	838
\.
\set SHOW_CONTEXT errors
INSERT INTO lb SELECT * FROM local_lb WHERE player_id BETWEEN 'p00002' AND 'p00009'
  ON CONFLICT DO NOTHING;
INSERT INTO lb VALUES ('g', 'p00002', 838), ('g', 'p00303', 101) ON CONFLICT DO NOTHING;
INSERT INTO local_lb VALUES ('g', 'p00302', 100), ('g', 'p00303', 101), ('g', 'p00304', 102);
SELECT count(*) FROM stored_keys() WHERE sk LIKE '%#p0000_';
SELECT * FROM same_as_local();
-- a DELETE finds a row of an earlier layout
DELETE FROM lb WHERE game_id = 'g' AND player_id = 'p00001';
DELETE FROM local_lb WHERE player_id = 'p00001';
SELECT * FROM same_as_local();
-- while layouts remain, a read keeps the identity of each row it returned
-- (an item met in two layouts is one row), and nothing else per row
BEGIN;
DECLARE every_row CURSOR FOR SELECT player_id FROM lb WHERE game_id = 'g';
MOVE 1 IN every_row;
SELECT sum(total_bytes) AS scan_bytes FROM pg_backend_memory_contexts
 WHERE name = 'shard_fdw scan' \gset
MOVE ALL IN every_row;
SELECT (sum(total_bytes) - :scan_bytes) / (SELECT count(*) - 1 FROM local_lb) < 1000
       AS under_1000_bytes_a_row
  FROM pg_backend_memory_contexts WHERE name = 'shard_fdw scan';
COMMIT;
-- while layouts remain, reads are strongly consistent: a page must show
-- every move made before it was asked for.  They cost twice the read
-- units, unless the table sets consistent_read itself.
CREATE FUNCTION read_units(query text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'DynamoDB Consumed Capacity')::numeric;
END
$$;
SELECT read_units($$SELECT player_id FROM lb WHERE game_id = 'g'$$) AS consistent \gset
ALTER FOREIGN TABLE lb OPTIONS (ADD consistent_read 'false');
SELECT read_units($$SELECT player_id FROM lb WHERE game_id = 'g'$$) AS eventual \gset
ALTER FOREIGN TABLE lb OPTIONS (DROP consistent_read);
SELECT :eventual > 0 AS units_counted, :consistent = 2 * :eventual AS twice_the_units;

-- 20 to 5 shards: three layouts are read, a partition key two share once
ALTER FOREIGN TABLE lb OPTIONS (SET shards '5');
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb WHERE game_id = 'g' ORDER BY score DESC LIMIT 10;
SELECT * FROM explain_analyze($$SELECT count(*) FROM lb WHERE game_id = 'g'$$) p
 WHERE p ~ 'Shards Read';
SELECT * FROM same_as_local();
SELECT count(*) FROM lb WHERE game_id = 'g';
-- a whole-table read: two passes, earlier layouts' keys first
EXPLAIN (COSTS OFF) SELECT player_id, score FROM lb WHERE score > 500;
SELECT * FROM explain_analyze($$SELECT player_id FROM lb$$) p
 WHERE p ~ 'Scan Passes|Items Scanned|Items Returned';

-- moving one partition, then the rest: idempotent, and the layouts go
SELECT misplaced();
SELECT * FROM shard_fdw_reshard('lb', '{"game_id": "g"}');
SELECT * FROM same_as_local();
SELECT misplaced();
INSERT INTO lb VALUES ('g', 'p00301', 556);
INSERT INTO local_lb VALUES ('g', 'p00301', 556);
SELECT * FROM shard_fdw_reshard('lb');
SELECT * FROM shard_fdw_reshard('lb');
SELECT count(*) AS layout_history FROM pg_options_to_table(
  (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'lb'::regclass))
 WHERE option_name = 'layout_history';
SELECT misplaced();
SELECT count(*) FROM stored_keys();
SELECT * FROM same_as_local();
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb WHERE game_id = 'g' ORDER BY score DESC LIMIT 10;
-- no layout left: one pass
EXPLAIN (COSTS OFF) SELECT player_id, score FROM lb WHERE score > 500;

-- another partition key template: read across, then moved
ALTER FOREIGN TABLE lb OPTIONS (SET partition_key_format 'game_{game_id}#{shard}');
SELECT * FROM same_as_local();
SELECT moved, remaining FROM shard_fdw_reshard('lb');
SELECT misplaced();
SELECT * FROM same_as_local();

-- changes reads could not cover are refused
ALTER FOREIGN TABLE lb OPTIONS (SET sort_key_format '{score:030}#{player_id}');
ALTER FOREIGN TABLE lb OPTIONS (SET partition_key 'other');
ALTER FOREIGN TABLE lb OPTIONS (SET shard_strategy 'dynamic');
ALTER FOREIGN TABLE lb OPTIONS (ADD layout_history '{"shards": "3"}');
ALTER FOREIGN TABLE lb OPTIONS (ADD layout_history '[{"table": "x"}]');
-- a row that earlier layouts may store under more keys than a transaction
-- checks cannot be inserted only where its key is free: 100 random shards
-- are checked (the newest key is one of them), 120 are too many
CREATE FOREIGN TABLE wide (game_id text NOT NULL, player_id text NOT NULL, score bigint)
  SERVER ddb OPTIONS (table 'Reshard', partition_key 'pk',
    partition_key_format 'w{game_id}#{shard}', sort_key 'sk', sort_key_format '{player_id}',
    shards '100', shard_strategy 'random');
ALTER FOREIGN TABLE wide OPTIONS (SET shards '5', SET shard_strategy 'calculated',
                                  ADD shard_by 'player_id');
INSERT INTO wide VALUES ('g', 'p1', 1);
INSERT INTO wide VALUES ('g', 'p1', 1) ON CONFLICT DO NOTHING;
DELETE FROM wide;
ALTER FOREIGN TABLE wide OPTIONS (SET layout_history
  '[{"shards": "120", "shard_strategy": "random", "partition_key_format": "w{game_id}#{shard}"}]');
INSERT INTO wide VALUES ('g', 'p1', 1);
DROP FOREIGN TABLE wide;
-- a table with no earlier layout has nothing to move
SELECT * FROM shard_fdw_reshard('lb');
SELECT * FROM shard_fdw_reshard('local_lb');

-- read through an index, a table with earlier layouts tells rows apart by
-- their whole items, not by the index key, which rows share; a partition
-- two layouts share is read twice, and its items returned once
SELECT shard_fdw_request('ddb', 'CreateTable', '{
  "TableName": "ReshardIndexed", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "gpk", "AttributeType": "S"},
                           {"AttributeName": "gsk", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byScore",
    "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"},
                  {"AttributeName": "gsk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}]
}') #>> '{TableDescription,TableName}' AS created;
CREATE FOREIGN TABLE scores (game_id text, player_id text, bucket int, score int)
  SERVER ddb OPTIONS (table 'ReshardIndexed', partition_key 'pk',
    partition_key_format '{game_id}#{player_id}',
    index_partition_key 'gpk', index_partition_key_format '{game_id}#{bucket}',
    index_sort_key 'gsk', index_sort_key_format '{score:04}');
INSERT INTO scores SELECT 'g', 'p' || i, i % 4, i % 3 FROM generate_series(1, 24) i;
CREATE FOREIGN TABLE scores_by_bucket (game_id text, player_id text, score int)
  SERVER ddb OPTIONS (table 'ReshardIndexed', index 'byScore',
    partition_key 'gpk', partition_key_format '{game_id}#{shard}',
    shards '4', shard_strategy 'random', sort_key 'gsk', sort_key_format '{score:04}');
SELECT count(*), count(DISTINCT player_id) FROM scores_by_bucket WHERE game_id = 'g';
-- (index keys repeat: an IN list on the index's whole sort key is no list
-- of items to get, and each of its values matches rows)
SELECT score, count(*) FROM scores_by_bucket
 WHERE game_id = 'g' AND score IN (1, 2) GROUP BY score ORDER BY score;
ALTER FOREIGN TABLE scores_by_bucket OPTIONS (SET shards '8');
SELECT count(*), count(DISTINCT player_id) FROM scores_by_bucket WHERE game_id = 'g';
SELECT score, count(*) FROM (SELECT score FROM scores_by_bucket WHERE game_id = 'g'
                              ORDER BY score DESC LIMIT 10) top GROUP BY score ORDER BY score;
DROP FOREIGN TABLE scores, scores_by_bucket;
SELECT ddb_delete_table('ReshardIndexed') AS deleted;

DROP FUNCTION same_as_local(), misplaced(), stored_keys();
DROP TABLE local_lb;
DROP FOREIGN TABLE lb;
SELECT ddb_delete_table('Reshard') AS deleted;
DROP SERVER ddb CASCADE;

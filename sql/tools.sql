-- Tools for the people who run shard_fdw: where a row goes, how a logical
-- key's items spread over its shards, how many shards a load needs, and
-- range boundaries from a sample.
\ir sql/include/server.sql
SELECT ddb_create_table('tools_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE board (game_id text, player_id text, score bigint)
  SERVER ddb OPTIONS (table 'tools_tab',
    partition_key 'pk', partition_key_format '{game_id}#{shard}',
    sort_key 'sk', sort_key_format '{score:020}#{player_id}',
    shards '4', shard_strategy 'calculated', shard_by 'player_id',
    shard_hash 'fnv1a_32');

-- where a row goes, and that INSERT puts it there
SELECT * FROM shard_fdw_key('board', '{"game_id": "g", "player_id": "ann", "score": 42}');
INSERT INTO board VALUES ('g', 'ann', 42);
SELECT shard_fdw_request('ddb', 'GetItem', jsonb_build_object(
         'TableName', 'tools_tab', 'Key', jsonb_build_object(
           'pk', jsonb_build_object('S', k.partition_key),
           'sk', jsonb_build_object('S', k.sort_key)))) #>> '{Item,player_id,S}' AS found
  FROM shard_fdw_key('board', '{"game_id": "g", "player_id": "ann", "score": 42}') k;
SELECT * FROM shard_fdw_key('board', '{"game_id": "g", "score": 42}');
SELECT * FROM shard_fdw_key('board', '{"game_id": "g", "player": "x"}');

-- per-shard counts and skew of one logical key
INSERT INTO board SELECT 'g', 'p' || i, i FROM generate_series(1, 200) i;
SELECT shard, partition_key, items, round(share::numeric, 3) AS share
  FROM shard_fdw_shard_counts('board', '{"game_id": "g"}') ORDER BY shard;
SELECT sum(items) AS total FROM shard_fdw_shard_counts('board', '{"game_id": "g"}');

-- the leaderboard's load: 5,000 WCU/s sustained (7,000 peak) of 1 KB items,
-- 12,000 reads/s
SELECT shard_fdw_recommend_shards(7000, 12000, 1000) AS shards_for_peak;
SELECT shard_fdw_recommend_shards(5000, 0, 1000, false, 1.0) AS shards_at_limit;
SELECT shard_fdw_recommend_shards(10, 90000, 4096, true) AS shards_for_reads;
SELECT shard_fdw_recommend_shards(1, 1, 500000);
-- a rate that is no number, or a load beyond any shard count, is refused
SELECT shard_fdw_recommend_shards('NaN', 0, 1000);
SELECT shard_fdw_recommend_shards(0, 'Infinity', 1000);
SELECT shard_fdw_recommend_shards(1, 1, 1000, true, 'NaN');
SELECT shard_fdw_recommend_shards(1e300, 0, 1000);

-- range boundaries from a sample (the range-sharded catalog's recipe)
SELECT shard_fdw_range_boundaries(ARRAY['Zebra', 'apple', 'Mango', 'banana',
  'Über', 'cherry', 'kiwi', 'Lemon', 'grape', 'fig', 'date', 'Élan'], 4);
SELECT shard_fdw_range_boundaries(ARRAY['b', 'a', 'c', 'd'], 2, false, 1);

DROP FOREIGN TABLE board;
SELECT ddb_delete_table('tools_tab') AS deleted;
DROP SERVER ddb CASCADE;

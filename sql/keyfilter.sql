-- Conditions on the columns that key templates hold: seed 002's leaderboard
-- keeps player_id in its sort key and chooses the shard by it, and a lookup
-- of one player reads that shard.  "Items Returned" shows what DynamoDB
-- sent back.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\set lb_table KeyFilterBoards
\ir sql/include/leaderboard.sql
INSERT INTO lb SELECT 'game_X', 'p' || lpad(i::text, 5, '0'), (i * 7919) % 100000
  FROM generate_series(1, 300) i;

-- an equality that only chose the shard is not in the key DynamoDB checks,
-- so a LIMIT is not each shard's Limit (which would read the shard a page
-- of one item at a time)
SELECT explain_analyze($$SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042' LIMIT 1$$);
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042' LIMIT 1;

-- nor is any equality of a Scan: here the partition key is not fixed
CREATE FOREIGN TABLE lb_by_region (game_id text, region text, player_id text, score bigint)
  SERVER ddb OPTIONS (table 'KeyFilterBoards', partition_key 'pk',
                      partition_key_format '{game_id}#{region}', sort_key 'sk',
                      sort_key_format '{score:020}#{player_id}');
EXPLAIN (COSTS OFF) SELECT player_id FROM lb_by_region WHERE game_id = 'game_X' LIMIT 1;

DROP FOREIGN TABLE lb, lb_by_region;
SELECT ddb_delete_table('KeyFilterBoards') AS deleted;
DROP FUNCTION explain_analyze(text);
DROP SERVER ddb CASCADE;

-- Conditions on the columns that key templates hold: the leaderboard hashed on player_id
-- keeps player_id in its sort key and chooses the shard by it, and a lookup
-- of one player reads that shard.  DynamoDB filters the shard on the
-- player_id attribute that every item written here has, keeping the items
-- that lack it (or hold another type), whose player_id the sort key gives;
-- PostgreSQL checks every row.  "Items Returned" shows what DynamoDB sent.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\ir sql/include/same_rows.sql
\set lb_table KeyFilterBoards
\ir sql/include/leaderboard.sql
CREATE TABLE local_lb (game_id text, player_id text, score bigint);
INSERT INTO local_lb SELECT 'game_X', 'p' || lpad(i::text, 5, '0'), (i * 7919) % 100000
  FROM generate_series(1, 300) i;
INSERT INTO lb SELECT * FROM local_lb;

-- the player's own position: a lookup, and a rank whose InitPlan is one
SELECT explain_analyze($$SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042'$$);
SELECT explain_analyze($$SELECT count(*) + 1 FROM lb WHERE game_id = 'game_X' AND score >
  (SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042')$$);
SELECT count(*) + 1 AS rank FROM lb WHERE game_id = 'game_X' AND score >
  (SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042');
SELECT count(*) + 1 AS rank FROM local_lb WHERE game_id = 'game_X' AND score >
  (SELECT score FROM local_lb WHERE game_id = 'game_X' AND player_id = 'p00042');

-- an equality that only chose the shard is not in the key DynamoDB checks,
-- so a LIMIT is not each shard's Limit (which would read the shard a page
-- of one item at a time)
SELECT explain_analyze($$SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042' LIMIT 1$$);
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p00042' LIMIT 1;

-- items another application wrote: the player only in the sort key, as a
-- number, or as NULL; the first two are found, the NULL is a NULL player
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'KeyFilterBoards',
         'Item', jsonb_build_object('pk', jsonb_build_object('S', k.partition_key),
                                    'sk', jsonb_build_object('S', k.sort_key))))
  FROM shard_fdw_key('lb', '{"game_id": "game_X", "player_id": "p09001", "score": 5}') k;
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'KeyFilterBoards',
         'Item', jsonb_build_object('pk', jsonb_build_object('S', k.partition_key),
                                    'sk', jsonb_build_object('S', k.sort_key),
                                    'player_id', jsonb_build_object('N', '9002'))))
  FROM shard_fdw_key('lb', '{"game_id": "game_X", "player_id": "9002", "score": 6}') k;
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'KeyFilterBoards',
         'Item', jsonb_build_object('pk', jsonb_build_object('S', k.partition_key),
                                    'sk', jsonb_build_object('S', k.sort_key),
                                    'player_id', jsonb_build_object('NULL', true))))
  FROM shard_fdw_key('lb', '{"game_id": "game_X", "player_id": "p09003", "score": 7}') k;
INSERT INTO local_lb VALUES ('game_X', 'p09001', 5), ('game_X', '9002', 6), ('game_X', NULL, 7);
SELECT explain_analyze($$SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p09001'$$);
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p09001';
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = '9002';
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id = 'p09003';
SELECT score FROM lb WHERE game_id = 'game_X' AND player_id IS NULL;

-- every kind of condition on a decoded column goes to DynamoDB in the form
-- that keeps those items: IN (which chooses no single shard), a prefix, a
-- range under a byte-order collation, IS NOT NULL
SELECT explain_analyze($$SELECT player_id FROM lb WHERE game_id = 'game_X'
  AND player_id IN ('p00042', 'p09001', '9002', 'p00999')$$);
SELECT same_rows($$SELECT player_id, score FROM %s WHERE game_id = 'game_X'
  AND player_id IN ('p00042', 'p09001', '9002', 'p00999') ORDER BY player_id$$, 'lb', 'local_lb');
SELECT same_rows($$SELECT player_id FROM %s WHERE game_id = 'game_X' AND player_id LIKE 'p090%%'
  ORDER BY player_id$$, 'lb', 'local_lb');
SELECT same_rows($$SELECT player_id FROM %s WHERE game_id = 'game_X'
  AND player_id COLLATE "C" > 'p00290' ORDER BY player_id$$, 'lb', 'local_lb');
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'game_X' AND player_id IS NOT NULL$$,
                 'lb', 'local_lb');
EXPLAIN (COSTS OFF) SELECT player_id FROM lb WHERE game_id = 'game_X'
  AND player_id COLLATE "C" > 'p00290' AND player_id LIKE 'p00%' AND player_id IS NOT NULL;
-- a second bound on the leading field, beyond the key condition's one: a
-- number, compared as one
SELECT same_rows($$SELECT player_id FROM %s WHERE game_id = 'game_X'
  AND score > 90000 AND score > 95000 ORDER BY player_id$$, 'lb', 'local_lb');
EXPLAIN (COSTS OFF) SELECT player_id FROM lb WHERE game_id = 'game_X' AND score > 90000 AND score > 95000;
-- an order DynamoDB does not share, or an equality it does not (a
-- nondeterministic collation), stays with PostgreSQL
CREATE COLLATION keyfilter_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT player_id FROM lb WHERE game_id = 'game_X' AND player_id = 'P00042' COLLATE keyfilter_ci;
EXPLAIN (COSTS OFF) SELECT player_id FROM lb WHERE game_id = 'game_X'
  AND player_id = 'P00042' COLLATE keyfilter_ci AND player_id COLLATE "und-x-icu" > 'p';

-- a Scan sends no key: its equalities are filters, and not exact, so that
-- a LIMIT is not each segment's Limit either
CREATE FOREIGN TABLE lb_by_region (game_id text, region text, player_id text, score bigint)
  SERVER ddb OPTIONS (table 'KeyFilterBoards', partition_key 'pk',
                      partition_key_format '{game_id}#{region}', sort_key 'sk',
                      sort_key_format '{score:020}#{player_id}');
EXPLAIN (COSTS OFF) SELECT player_id FROM lb_by_region WHERE game_id = 'game_X' LIMIT 1;
SELECT explain_analyze($$SELECT score FROM lb_by_region WHERE game_id = 'game_X' AND region = '3'
  AND player_id = 'p00042'$$);

DROP COLLATION keyfilter_ci;
DROP TABLE local_lb;
DROP FOREIGN TABLE lb, lb_by_region;
SELECT ddb_delete_table('KeyFilterBoards') AS deleted;
DROP FUNCTION explain_analyze(text), same_rows(text, text, text);
DROP SERVER ddb CASCADE;

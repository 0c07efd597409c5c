-- The write path: multi-row INSERTs that repeat a key or meet stored
-- ones, UPDATEs that set NULLs, row counts when an applied write's answer
-- is lost, and what EXPLAIN ANALYZE shows of the requests.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('writes_lb', 'pk', 'sk') AS status;
SELECT ddb_create_table('writes_small', 'id') AS status;
-- the leaderboard hashed on player_id, as the README's quick start has it
CREATE FOREIGN TABLE lb (
  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL, note text
) SERVER ddb OPTIONS (
  table 'writes_lb',
  partition_key 'pk', partition_key_format '{game_id}#{shard}',
  sort_key 'sk',      sort_key_format '{score:020}#{player_id}',
  shards '10', shard_strategy 'calculated', shard_by 'player_id', shard_hash 'fnv1a_32');
CREATE FOREIGN TABLE small (id text NOT NULL, n integer, name text)
  SERVER ddb OPTIONS (table 'writes_small', partition_key 'id');
CREATE FOREIGN TABLE small_upsert (id text NOT NULL, n integer, name text)
  SERVER ddb OPTIONS (table 'writes_small', partition_key 'id', insert_mode 'upsert');

-- ON CONFLICT DO NOTHING with a stored key before a new one in one batch
INSERT INTO lb VALUES ('g', 'p5', 5, 'first');
INSERT INTO lb VALUES ('g', 'p5', 5, 'dup'), ('g', 'new1', 1, 'x') ON CONFLICT DO NOTHING;
\echo inserted :ROW_COUNT
INSERT INTO lb VALUES ('g', 'p5', 5, 'dup'), ('g', 'p5', 5, 'dup2'), ('g', 'new2', 2, 'y'),
  ('g', 'new1', 1, 'dup3'), ('g', 'new3', 3, 'z') ON CONFLICT DO NOTHING;
\echo inserted :ROW_COUNT
SELECT * FROM lb ORDER BY player_id;

-- an UPDATE that sets every assigned column to NULL
INSERT INTO small VALUES ('a', 1, 'one'), ('b', 2, 'two');
UPDATE small SET n = NULL, name = NULL WHERE id = 'b';
\echo updated :ROW_COUNT
UPDATE small SET n = NULL, name = NULL WHERE id = 'b' RETURNING *;
SELECT * FROM small ORDER BY id;

-- a key twice in one INSERT: the first row is written, the second is a
-- duplicate, as when the rows go one after the other (every time)
\set VERBOSITY terse
INSERT INTO small SELECT 'd' || i, 1 FROM generate_series(1, 20) i
  UNION ALL SELECT 'd' || i, 2 FROM generate_series(1, 20) i;
\set VERBOSITY default
SELECT count(*), min(n), max(n) FROM small WHERE id LIKE 'd%';
DELETE FROM small WHERE id LIKE 'd%';
INSERT INTO small SELECT 'd' || i, 1 FROM generate_series(1, 20) i
  UNION ALL SELECT 'd' || i, 2 FROM generate_series(1, 20) i ON CONFLICT DO NOTHING;
\echo inserted :ROW_COUNT
SELECT count(*), min(n), max(n) FROM small WHERE id LIKE 'd%';
-- upsert mode: the last row wins
INSERT INTO small_upsert SELECT 'd' || i, 3 FROM generate_series(1, 20) i
  UNION ALL SELECT 'd' || i, 4 FROM generate_series(1, 20) i;
\echo inserted :ROW_COUNT
SELECT count(*), min(n), max(n) FROM small WHERE id LIKE 'd%';
-- COPY, which does not wait for each row
\set VERBOSITY terse
COPY small FROM stdin;
c1	1	\N
c2	1	\N
c1	2	\N
c3	1	\N
\.
\set VERBOSITY default
SELECT * FROM small WHERE id LIKE 'c%' ORDER BY id;
DELETE FROM small WHERE id LIKE 'c%' OR id LIKE 'd%';

-- writes whose answer is lost after DynamoDB applied them count once
INSERT INTO lb SELECT 'm', 'q' || i, i, NULL FROM generate_series(1, 10) i;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "TransactWriteItems", "when": "after", "count": 3}'
UPDATE lb SET score = score + 100 WHERE game_id = 'm';
\echo updated :ROW_COUNT
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "TransactWriteItems", "when": "after", "count": 2}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "truncate", "action": "TransactWriteItems", "skip": 3}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "badcrc", "action": "TransactWriteItems", "skip": 5}'
WITH u AS (UPDATE lb SET score = score + 100 WHERE game_id = 'm' RETURNING player_id, score)
SELECT * FROM u ORDER BY score;
SELECT count(*), min(score), max(score) FROM lb WHERE game_id = 'm';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "UpdateItem", "when": "after", "count": 3}'
UPDATE lb SET note = 'seen' WHERE game_id = 'm';
\echo updated :ROW_COUNT
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "DeleteItem", "when": "after", "count": 2}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "truncate", "action": "DeleteItem", "skip": 3}'
WITH d AS (DELETE FROM lb WHERE game_id = 'm' AND score < 206 RETURNING player_id, score, note)
SELECT * FROM d ORDER BY score;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "badcrc", "action": "DeleteItem", "count": 2}'
DELETE FROM lb WHERE game_id = 'm' AND score < 209;
\echo deleted :ROW_COUNT
SELECT player_id, score, note FROM lb WHERE game_id = 'm' ORDER BY score;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "PutItem", "when": "after", "count": 2}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "badcrc", "action": "PutItem", "skip": 3}'
INSERT INTO lb SELECT 'm', 'r' || i, i, NULL FROM generate_series(1, 6) i;
\echo inserted :ROW_COUNT
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "BatchWriteItem", "when": "after"}'
INSERT INTO small_upsert SELECT 'u' || i, i FROM generate_series(1, 30) i;
\echo inserted :ROW_COUNT
SELECT count(*) FROM lb WHERE game_id = 'm';
SELECT count(*) FROM small WHERE id LIKE 'u%';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"

-- upsert mode under ON CONFLICT DO NOTHING: a stored key is not overwritten
INSERT INTO small_upsert VALUES ('a', 9, 'nine'), ('v1', 1, NULL), ('a', 8, 'eight')
  ON CONFLICT DO NOTHING;
\echo inserted :ROW_COUNT
SELECT * FROM small WHERE id IN ('a', 'v1') ORDER BY id;

-- a failed INSERT counts the row whose applied put was retried
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "PutItem", "when": "after", "skip": 1}'
INSERT INTO small VALUES ('a', 2, NULL), ('z1', 1, NULL);
SELECT * FROM small WHERE id = 'z1';

-- a dynamically sharded table retries server errors like any other
SELECT ddb_create_table('writes_dyn', 'pk', 'id') AS status;
SELECT ddb_create_table('writes_dyn_meta', 'base') AS status;
CREATE FOREIGN TABLE dyn (grp text NOT NULL, id text NOT NULL, n integer)
  SERVER ddb OPTIONS (table 'writes_dyn',
    partition_key 'pk', partition_key_format '{grp}_{shard}', sort_key 'id',
    shard_strategy 'dynamic', metadata_table 'writes_dyn_meta', metadata_key 'base');
INSERT INTO dyn VALUES ('g', 'a', 1);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "PutItem", "count": 3}'
INSERT INTO dyn VALUES ('g', 'b', 2);
\echo inserted :ROW_COUNT
SELECT * FROM dyn ORDER BY id;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"

-- EXPLAIN ANALYZE of the writes shows their requests, retries, throttles
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "PutItem", "count": 2}'
SELECT explain_analyze($$INSERT INTO lb VALUES ('x', 'a', 1, NULL), ('x', 'b', 2, NULL), ('x', 'a', 1, NULL) ON CONFLICT DO NOTHING$$);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 503, "action": "UpdateItem"}'
SELECT explain_analyze($$UPDATE lb SET note = 'n' WHERE game_id = 'x'$$);
SELECT explain_analyze($$UPDATE lb SET score = 7 WHERE game_id = 'x' AND player_id = 'a'$$);
SELECT explain_analyze($$DELETE FROM lb WHERE game_id = 'x' RETURNING player_id$$);
SELECT explain_analyze($$INSERT INTO small_upsert SELECT 'e' || i, i FROM generate_series(1, 30) i$$);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"

DROP FOREIGN TABLE lb, small, small_upsert, dyn;
SELECT ddb_delete_table('writes_lb') AS deleted;
SELECT ddb_delete_table('writes_small') AS deleted;
SELECT ddb_delete_table('writes_dyn') AS deleted;
SELECT ddb_delete_table('writes_dyn_meta') AS deleted;
DROP SERVER ddb CASCADE;

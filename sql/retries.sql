-- What DynamoDB leaves unprocessed in a batch is asked again as a retry of
-- its request, under the one retry policy of every request: with backoff,
-- within max_retries unless the batch made progress, and as a clear error
-- when the policy allows no more.
\ir sql/include/server.sql
ALTER SERVER ddb OPTIONS (ADD max_retries '3');
SELECT ddb_create_table('retries_tab', 'k') AS status;
CREATE FOREIGN TABLE kv (k text, v int)
  SERVER ddb OPTIONS (table 'retries_tab', partition_key 'k', insert_mode 'upsert');
INSERT INTO kv SELECT 'k' || i, i FROM generate_series(1, 5) i;

-- BatchGetItem: keys left unprocessed twice are read on the third attempt
SELECT retries AS before FROM shard_fdw_stats() \gset
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchGetItem", "count": 2}'
SELECT k, v FROM kv WHERE k IN ('k1', 'k2', 'k3') ORDER BY k;
SELECT retries - :before AS retries FROM shard_fdw_stats();
-- ... and left unprocessed for ever, they are an error after max_retries
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchGetItem", "count": 1000}'
SELECT k, v FROM kv WHERE k IN ('k1', 'k2', 'k3') ORDER BY k;
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"

-- BatchWriteItem: the same
SELECT retries AS before FROM shard_fdw_stats() \gset
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchWriteItem", "count": 2}'
INSERT INTO kv SELECT 'w' || i, i FROM generate_series(1, 5) i;
SELECT retries - :before AS retries FROM shard_fdw_stats();
SELECT count(*) AS written FROM kv WHERE k IN ('w1', 'w2', 'w3', 'w4', 'w5');
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchWriteItem", "count": 1000}'
INSERT INTO kv SELECT 'x' || i, i FROM generate_series(1, 5) i;
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
SELECT count(*) AS written FROM kv WHERE k IN ('x1', 'x2', 'x3', 'x4', 'x5');

-- a batch that makes progress on every attempt is not cut short: one key
-- or item a time for four or five attempts, then the rest, takes more
-- attempts than max_retries allows
SELECT retries AS before FROM shard_fdw_stats() \gset
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchGetItem", "processed": 1, "count": 4}'
SELECT k, v FROM kv WHERE k IN ('k1', 'k2', 'k3', 'k4', 'k5', 'k6') ORDER BY k;
SELECT retries - :before AS retries FROM shard_fdw_stats();
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchWriteItem", "processed": 1, "count": 5}'
INSERT INTO kv SELECT 's' || i, i FROM generate_series(1, 6) i;
SELECT retries - :before AS retries FROM shard_fdw_stats();
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
SELECT count(*) AS written FROM kv WHERE k LIKE 's%';

DROP FOREIGN TABLE kv;
SELECT ddb_delete_table('retries_tab') AS deleted;
DROP SERVER ddb CASCADE;

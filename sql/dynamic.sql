-- Dynamic sharding as the audit log does it: the metadata table, a new key
-- starting with one shard, growth when DynamoDB throttles the key, and
-- reads of every shard the key ever had.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('audit_log', 'pk', 'ts:N') AS status;
SELECT ddb_create_table('audit_shards', 'file_path') AS status;
CREATE FOREIGN TABLE audit (file_path text, ts bigint, who text)
  SERVER ddb OPTIONS (table 'audit_log',
    partition_key 'pk', partition_key_format '{file_path}_{shard}', sort_key 'ts',
    shard_strategy 'dynamic', metadata_table 'audit_shards', metadata_key 'file_path',
    cooldown_s '0', max_shards '4', metadata_cache_ms '0');

-- a new key: its metadata item is created with one shard
INSERT INTO audit VALUES ('/shared/firetvGen2.txt', 123456789101, 'ann');
SELECT base_key, number_of_shards, last_updated > 1500000000 AS recent,
       array_length(shard_history, 1) AS history,
       shard_history[1] = last_updated || ':1' AS history_entry
  FROM shard_fdw_metadata('audit', '{"file_path": "/shared/firetvGen2.txt"}');
SELECT jsonb_object_keys(shard_fdw_request('ddb', 'GetItem', '{"TableName": "audit_shards",
  "Key": {"file_path": {"S": "/shared/firetvGen2.txt"}}}') -> 'Item') AS attribute ORDER BY 1;
SELECT shard_fdw_request('ddb', 'GetItem', '{"TableName": "audit_log",
  "Key": {"pk": {"S": "/shared/firetvGen2.txt_1"}, "ts": {"N": "123456789101"}}}') #>> '{Item,who,S}' AS in_shard_1;

-- DynamoDB throttles the key (a KeyRangeThroughputExceeded reason): the
-- count doubles and the row is written into the larger space
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "PutItem", "table": "audit_log", "count": 3, "reasons": ["TableWriteKeyRangeThroughputExceeded"]}'
INSERT INTO audit VALUES ('/shared/firetvGen2.txt', 123456789102, 'bob');
SELECT number_of_shards, array_length(shard_history, 1) AS history
  FROM shard_fdw_metadata('audit', '{"file_path": "/shared/firetvGen2.txt"}');
SELECT metadata_created, key_throttles, shard_growths FROM shard_fdw_stats();
-- a table-level throttle only backs off
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "PutItem", "table": "audit_log", "count": 2, "reasons": ["TableWriteProvisionedThroughputExceeded"]}'
INSERT INTO audit VALUES ('/shared/firetvGen2.txt', 123456789103, 'cy');
SELECT number_of_shards FROM shard_fdw_metadata('audit', '{"file_path": "/shared/firetvGen2.txt"}');
-- throttles without reasons that the retries cannot clear count as the key's
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "PutItem", "table": "audit_log", "count": 3}'
INSERT INTO audit VALUES ('/shared/firetvGen2.txt', 123456789104, 'di');
SELECT number_of_shards, array_length(shard_history, 1) AS history
  FROM shard_fdw_metadata('audit', '{"file_path": "/shared/firetvGen2.txt"}');
-- max_shards caps growth
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "PutItem", "table": "audit_log", "count": 3, "reasons": ["TableWriteKeyRangeThroughputExceeded"]}'
INSERT INTO audit VALUES ('/shared/firetvGen2.txt', 123456789105, 'ed');
SELECT number_of_shards FROM shard_fdw_metadata('audit', '{"file_path": "/shared/firetvGen2.txt"}');

-- readers query every shard the history names: nothing missed
EXPLAIN (COSTS OFF) SELECT ts, who FROM audit WHERE file_path = '/shared/firetvGen2.txt';
SELECT ts, who FROM audit WHERE file_path = '/shared/firetvGen2.txt' ORDER BY ts;
SELECT explain_analyze($$SELECT ts, who FROM audit WHERE file_path = '/shared/firetvGen2.txt'$$);
-- a key nobody wrote has no metadata and no rows
SELECT count(*) FROM audit WHERE file_path = '/never/written';
SELECT count(*) FROM shard_fdw_metadata('audit', '{"file_path": "/never/written"}');
-- a metadata item that another writer left without its shard count is
-- refused, by readers and by the tool alike
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "audit_shards",
  "Item": {"file_path": {"S": "/broken"}, "shard_history": {"SS": ["1700000000:2"]}}}');
SELECT * FROM shard_fdw_metadata('audit', '{"file_path": "/broken"}');
SELECT count(*) FROM audit WHERE file_path = '/broken';

DROP FOREIGN TABLE audit;
SELECT ddb_delete_table('audit_log') AS deleted;
SELECT ddb_delete_table('audit_shards') AS deleted;
DROP SERVER ddb CASCADE;

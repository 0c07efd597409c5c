-- shard_fdw_stat: what the requests of every backend came to, per
-- database, foreign table and server, in shared memory (the test cluster
-- preloads shard_fdw; test/scripts/test_stat.py checks a cluster that does
-- not, and one whose entries run out).
\ir sql/include/server.sql
SELECT ddb_create_table('stat_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE stat_kv (grp text, n int, kind text, pad text)
  SERVER ddb OPTIONS (table 'stat_tab', partition_key 'pk', partition_key_format '{grp}',
    sort_key 'sk', sort_key_format '{n:04}', insert_mode 'upsert');
CREATE VIEW stat_kv_counts AS
  SELECT server, requests, items_read, items_returned, read_units, write_units,
         throttles, retries, errors
    FROM shard_fdw_stat WHERE ftable = 'stat_kv'::regclass;

-- the counters start empty, at the reset's time
SELECT shard_fdw_stat_reset() AS reset_at \gset
SELECT count(*) AS rows, bool_and(stats_reset = :'reset_at') AS since_reset
  FROM shard_fdw_stat;
-- 20 items of about 900 bytes in one BatchWriteItem: a write unit each
INSERT INTO stat_kv
  SELECT 'a', i, CASE WHEN i % 4 = 0 THEN 'four' END, repeat('x', 900)
    FROM generate_series(1, 20) i;
SELECT * FROM stat_kv_counts;
-- a Query reads the 20 items (18 KB, 2.5 read units eventually
-- consistent) and returns the 5 its filter keeps
SELECT count(*) FROM (SELECT * FROM stat_kv WHERE grp = 'a' AND kind = 'four' OFFSET 0) s;
SELECT * FROM stat_kv_counts;
-- a GetItem reads and returns its item: half a unit
SELECT n FROM stat_kv WHERE grp = 'a' AND n = 3;
SELECT * FROM stat_kv_counts;
-- a throttled attempt and its retry, then a request that fails for good
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "GetItem", "table": "stat_tab"}'
SELECT n FROM stat_kv WHERE grp = 'a' AND n = 4;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "ValidationException", "action": "GetItem", "table": "stat_tab"}'
SELECT n FROM stat_kv WHERE grp = 'a' AND n = 4;
SELECT * FROM stat_kv_counts;
-- a request of no foreign table counts under its server alone
SELECT shard_fdw_request('ddb', 'DescribeTable', '{"TableName": "stat_tab"}')
  #>> '{Table,TableName}' AS described;
SELECT database = current_database() AS here, server, requests, errors
  FROM shard_fdw_stat WHERE ftable IS NULL AND server = 'ddb';
-- what a statement cost, from the difference it made
SELECT read_units AS before FROM stat_kv_counts \gset
SELECT count(*) FROM stat_kv WHERE grp = 'a';
SELECT read_units - :before AS read_units FROM stat_kv_counts;

-- a reset empties every row; anyone may read the view, only a superuser
-- may reset
SELECT shard_fdw_stat_reset() > :'reset_at' AS later;
SELECT count(*) AS rows FROM shard_fdw_stat;
CREATE ROLE stat_reader;
SET ROLE stat_reader;
SELECT count(*) AS rows FROM shard_fdw_stat;
SELECT shard_fdw_stat_reset();
RESET ROLE;
DROP ROLE stat_reader;

DROP VIEW stat_kv_counts;
SELECT ddb_delete_table('stat_tab');
DROP SERVER ddb CASCADE;

-- ANALYZE: a sample read by parallel Scan segments, reltuples, the
-- columns' statistics, and the estimates and plans that follow from them.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('Events', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE events (
  owner text NOT NULL, seq int NOT NULL, kind text
) SERVER ddb OPTIONS (
  table 'Events', partition_key 'pk', partition_key_format 'owner#{owner}',
  sort_key 'sk', sort_key_format '{seq:06}', insert_mode 'upsert');
-- two owners of 5,000 events each
INSERT INTO events SELECT 'o' || (i % 2), i / 2, 'k' || (i % 3)
  FROM generate_series(0, 9999) i;
CREATE TABLE few_owners AS SELECT 'o' || i AS owner FROM generate_series(0, 1) i;
ANALYZE few_owners;

-- never analyzed: no row count, and the defaults (100 rows a partition)
SELECT reltuples, relpages FROM pg_class WHERE oid = 'events'::regclass;
EXPLAIN (COSTS OFF) SELECT f.owner, e.seq FROM few_owners f JOIN events e USING (owner);

ANALYZE events;
-- reltuples within 20 % of the items (DynamoDB Local's ItemCount is live);
-- relpages is DynamoDB's TableSizeBytes in 8 kB pages
SELECT abs(reltuples - 10000) <= 2000 AS close, relpages FROM pg_class
 WHERE oid = 'events'::regclass;
SELECT attname, n_distinct FROM pg_stats
 WHERE tablename = 'events' ORDER BY attname;
-- the rows of one partition and of the table come from the statistics
EXPLAIN SELECT * FROM events WHERE owner = 'o1';
EXPLAIN SELECT * FROM events;
-- two partitions of 5,000 items: one parallel Scan beats two Queries of
-- three pages each, so the plan is now a hash join over the Scan
EXPLAIN (COSTS OFF) SELECT f.owner, e.seq FROM few_owners f JOIN events e USING (owner);
SELECT count(*), sum(e.seq) FROM few_owners f JOIN events e USING (owner);

-- a sample smaller than the table: a statistics target of 1 samples 300
-- rows and reads about 1,200 items, a few segments at a time
ALTER SERVER ddb OPTIONS (ADD max_concurrency '2');
ALTER TABLE events ALTER COLUMN owner SET STATISTICS 1,
  ALTER COLUMN seq SET STATISTICS 1, ALTER COLUMN kind SET STATISTICS 1;
ANALYZE events;
SELECT abs(reltuples - 10000) <= 2000 AS close FROM pg_class
 WHERE oid = 'events'::regclass;

-- a table DescribeTable gives no size of and an ItemCount of 0 (a new
-- table on AWS, whose figures are six hours late): the row count is the
-- sample's, scaled by the segments read (it may come out at 5000 exactly:
-- 1,250 items in 16 of the 64 segments)
SELECT ddb_create_table('ManyOwners', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE many_owners (owner text NOT NULL, seq int NOT NULL)
  SERVER ddb OPTIONS (table 'ManyOwners', partition_key 'pk',
    partition_key_format 'owner#{owner}', sort_key 'sk', sort_key_format '{seq:06}',
    insert_mode 'upsert');
INSERT INTO many_owners SELECT 'o' || (i % 1000), i FROM generate_series(1, 5000) i;
ALTER TABLE many_owners ALTER COLUMN owner SET STATISTICS 1,
  ALTER COLUMN seq SET STATISTICS 1;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "malformed", "action": "DescribeTable", "body": "{\"Table\": {\"TableName\": \"ManyOwners\", \"ItemCount\": 0}}"}'
ANALYZE many_owners;
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
SELECT reltuples < 5000 * 1.2 AND reltuples > 5000 * 0.8 AS close, reltuples > 0 AS not_item_count
  FROM pg_class WHERE oid = 'many_owners'::regclass;
ALTER SERVER ddb OPTIONS (DROP max_concurrency);

-- an empty table: zero rows, analyzed
SELECT ddb_create_table('EmptyEvents', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE empty_events (pk text NOT NULL, sk text NOT NULL)
  SERVER ddb OPTIONS (table 'EmptyEvents', partition_key 'pk', sort_key 'sk');
ANALYZE empty_events;
SELECT reltuples, relpages FROM pg_class WHERE oid = 'empty_events'::regclass;

SELECT ddb_delete_table('Events');
SELECT ddb_delete_table('EmptyEvents');
SELECT ddb_delete_table('ManyOwners');
DROP TABLE few_owners;
DROP SERVER ddb CASCADE;

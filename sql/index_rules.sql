-- When a read may not go through a secondary index, and how the reads
-- that do keep to the table's answer: a sparse index only where the
-- conditions say that every row is in it, never a global index of a
-- table that reads consistently, the items an index lacks got from the
-- table (and passed over when the index lags behind it), writes on the
-- table's own keys, and earlier layouts.
\ir sql/include/server.sql
\ir sql/include/ddb_indexes.sql
\ir sql/include/explain_analyze.sql
\ir sql/include/same_rows.sql
\ir sql/include/explain_lines.sql

-- People of several organisations, some without an email, a signup, a
-- last seen time or a vip mark: the indexes on those are sparse.
SELECT ddb_create_indexed_table('idx_rules', 'org', 'user',
  ARRAY[ddb_index('byEmail', 'email', NULL, 'name'),
        ddb_index('byCountry', 'country', 'signup', 'KEYS_ONLY'),
        ddb_index('byVip', 'vip', NULL, 'KEYS_ONLY')],
  ARRAY[ddb_index('bySeen', 'org', 'seen:N', 'KEYS_ONLY')]) AS status;
CREATE FOREIGN TABLE people (org text, "user" text, email text, country text, signup text,
  seen bigint, vip text, name text, plan text)
  SERVER ddb OPTIONS (table 'idx_rules', insert_mode 'upsert');
CREATE TABLE local_people AS
  SELECT 'o' || (i % 8) AS org, 'u' || i AS "user",
         CASE WHEN i % 17 > 0 THEN 'u' || i || '@x.test' END AS email,
         (ARRAY['FR', 'DE', 'US'])[1 + i % 3] AS country,
         CASE WHEN i % 13 > 0 THEN '2021-' || lpad((1 + i % 12)::text, 2, '0') || '-' || lpad(i::text, 5, '0') END AS signup,
         CASE WHEN i % 11 > 0 THEN ((i * 7919) % 100000)::bigint END AS seen,
         CASE WHEN i % 10 = 0 THEN 'Y' END AS vip, 'n' || i AS name, 'p' || (i % 3) AS plan
    FROM generate_series(1, 2400) i;
INSERT INTO people SELECT * FROM local_people;
ANALYZE people;

-- Sparse indexes.  The newest signups of a country: the rows without a
-- signup come first (DESC puts NULLs first), and the index has none of
-- them, so the table is read and sorted
EXPLAIN (COSTS OFF)
  SELECT "user", signup FROM people WHERE country = 'FR' ORDER BY signup DESC, "user" LIMIT 5;
SELECT same_rows($$SELECT "user", signup FROM %s WHERE country = 'FR'
   ORDER BY signup DESC, "user" LIMIT 5$$, 'people', 'local_people');
-- a condition no NULL passes says every row has a signup: the index
EXPLAIN (COSTS OFF)
  SELECT "user", signup FROM people WHERE country = 'FR' AND signup IS NOT NULL
   ORDER BY signup DESC LIMIT 5;
SELECT same_rows($$SELECT "user", signup FROM %s WHERE country = 'FR' AND signup IS NOT NULL
   ORDER BY signup DESC LIMIT 5$$, 'people', 'local_people');
SELECT same_rows($$SELECT "user", signup FROM %s WHERE country = 'DE' AND signup < '2021-03'
   ORDER BY signup LIMIT 5$$, 'people', 'local_people');
-- as does an equality on a sparse index's partition key, or an IN list
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
SELECT same_rows($$SELECT "user" FROM %s WHERE vip IN ('Y', 'Z') ORDER BY 1$$,
                 'people', 'local_people');
-- not IS NULL, nor an OR with another column
EXPLAIN (COSTS OFF) SELECT count(*) FROM people WHERE vip IS NULL;
SELECT same_rows($$SELECT count(*) FROM %s WHERE vip IS NULL$$, 'people', 'local_people');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y' OR name = 'n5';
SELECT same_rows($$SELECT "user" FROM %s WHERE vip = 'Y' OR name = 'n5' ORDER BY 1$$,
                 'people', 'local_people');
-- nor a count of rows some of which lack the index's sort key
EXPLAIN (COSTS OFF) SELECT count(*) FROM people WHERE country = 'US';
SELECT same_rows($$SELECT count(*) FROM %s WHERE country = 'US'$$, 'people', 'local_people');
-- the LSI on seen: the partition's rows without it would be missed
EXPLAIN (COSTS OFF)
  SELECT "user" FROM people WHERE org = 'o1' ORDER BY seen DESC, "user" LIMIT 3;
SELECT same_rows($$SELECT "user", seen FROM %s WHERE org = 'o1' ORDER BY seen DESC, "user"
   LIMIT 3$$, 'people', 'local_people');
EXPLAIN (COSTS OFF)
  SELECT "user" FROM people WHERE org = 'o1' AND seen > 0 ORDER BY seen DESC LIMIT 3;
SELECT same_rows($$SELECT "user", seen FROM %s WHERE org = 'o1' AND seen > 0
   ORDER BY seen DESC LIMIT 3$$, 'people', 'local_people');

-- Consistency.  A global index is only eventually consistent: a table
-- that reads consistently reads none, and a local one consistently (a
-- strongly consistent read takes twice the read units)
SELECT trim(explain_lines($$SELECT "user", seen FROM people WHERE org = 'o2' AND seen > 0
   ORDER BY seen LIMIT 3$$, 'Consumed Capacity|DynamoDB Index')) AS capacity;
ALTER FOREIGN TABLE people OPTIONS (ADD consistent_read 'true');
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('people');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
SELECT trim(explain_lines($$SELECT "user", seen FROM people WHERE org = 'o2' AND seen > 0
   ORDER BY seen LIMIT 3$$, 'Consumed Capacity|DynamoDB Index')) AS capacity;
SELECT same_rows($$SELECT "user", seen FROM %s WHERE org = 'o2' AND seen > 0
   ORDER BY seen LIMIT 3$$, 'people', 'local_people');
-- the server's consistent_read, which a table without its own follows
ALTER FOREIGN TABLE people OPTIONS (DROP consistent_read);
ALTER SERVER ddb OPTIONS (ADD consistent_read 'true');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
ALTER FOREIGN TABLE people OPTIONS (ADD consistent_read 'false');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
ALTER FOREIGN TABLE people OPTIONS (DROP consistent_read);
ALTER SERVER ddb OPTIONS (DROP consistent_read);

-- use_indexes 'false': every read is the table's own, on the table or
-- on its server
ALTER FOREIGN TABLE people OPTIONS (ADD use_indexes 'false');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('people') WHERE index_name = 'byVip';
ALTER FOREIGN TABLE people OPTIONS (DROP use_indexes);
ALTER SERVER ddb OPTIONS (ADD use_indexes 'false');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
ALTER FOREIGN TABLE people OPTIONS (ADD use_indexes 'true');
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE vip = 'Y';
ALTER FOREIGN TABLE people OPTIONS (DROP use_indexes);
ALTER SERVER ddb OPTIONS (DROP use_indexes);

-- Projections.  byEmail holds name but not plan: the table's items are
-- got by key; the keys DynamoDB leaves unprocessed are asked again
SELECT explain_analyze($$SELECT "user", name, plan FROM people WHERE email = 'u5@x.test'$$);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "unprocessed", "action": "BatchGetItem", "processed": 0}'
SELECT "user", name, plan FROM people WHERE email IN ('u5@x.test', 'u6@x.test') ORDER BY 1;
-- an index lags behind its table: an item whose email the table no
-- longer has where the index found it is passed over (one key is got by
-- GetItem)
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "set_attribute", "action": "GetItem", "attribute": "email", "value": {"S": "moved@x.test"}}'
SELECT "user", name, plan FROM people WHERE email = 'u5@x.test';
SELECT "user", name, plan FROM people WHERE email = 'u5@x.test';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "set_attribute", "action": "BatchGetItem", "attribute": "email", "value": {"S": "moved@x.test"}}'
SELECT "user", name, plan FROM people WHERE email IN ('u5@x.test', 'u6@x.test');
-- so is one whose signup changed: the order is the index's, which that
-- item no longer has (the first three are passed over, the next three
-- come from the next batch)
SELECT "user", signup, plan FROM people WHERE country = 'DE' AND signup IS NOT NULL
 ORDER BY signup DESC LIMIT 3;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "set_attribute", "action": "BatchGetItem", "attribute": "signup", "value": {"S": "2099-01-01"}}'
SELECT "user", signup, plan FROM people WHERE country = 'DE' AND signup IS NOT NULL
 ORDER BY signup DESC LIMIT 3;
-- what the index holds needs no item of the table
EXPLAIN (COSTS OFF) SELECT "user", name FROM people WHERE email = 'u5@x.test';
-- a filter on a column the index lacks is checked on the table's items
EXPLAIN (COSTS OFF) SELECT "user" FROM people WHERE email = 'u5@x.test' AND plan = 'p2';
SELECT same_rows($$SELECT "user" FROM %s WHERE email = 'u5@x.test' AND plan = 'p2'$$,
                 'people', 'local_people');
SELECT same_rows($$SELECT "user" FROM %s WHERE email = 'u6@x.test' AND plan = 'p0'$$,
                 'people', 'local_people');

-- Writes.  UPDATE and DELETE find their rows and address their items by
-- the table's keys, and so does a query for ctid
EXPLAIN (COSTS OFF) UPDATE people SET plan = 'p9' WHERE email = 'u7@x.test';
UPDATE people SET plan = 'p9' WHERE email = 'u7@x.test';
UPDATE local_people SET plan = 'p9' WHERE email = 'u7@x.test';
EXPLAIN (COSTS OFF) DELETE FROM people WHERE email = 'u8@x.test';
DELETE FROM people WHERE email = 'u8@x.test';
DELETE FROM local_people WHERE email = 'u8@x.test';
EXPLAIN (COSTS OFF) SELECT ctid, "user" FROM people WHERE email = 'u9@x.test';
SELECT same_rows($$SELECT "user", plan FROM %s WHERE email IN ('u7@x.test', 'u8@x.test')$$,
                 'people', 'local_people');
-- a read in the same statement as a write reads the index all the same
EXPLAIN (COSTS OFF)
  UPDATE local_people l SET name = p.name FROM people p WHERE p.email = 'u10@x.test'
     AND l."user" = p."user";

-- Earlier layouts.  While a sharded table's items move to a new shard
-- count, an LSI (whose partitions are the table's) is not read, and a
-- GSI only where the table says it may read inconsistently
SELECT ddb_create_indexed_table('idx_layouts', 'pk', 'player',
  ARRAY[ddb_index('byLevel', 'level:N')],
  ARRAY[ddb_index('byScore', 'pk', 'score:N')]) AS status;
CREATE FOREIGN TABLE scores (game text, player text, score bigint NOT NULL, level bigint NOT NULL)
  SERVER ddb OPTIONS (table 'idx_layouts', partition_key 'pk', partition_key_format '{game}#{shard}',
  sort_key 'player', shard_strategy 'calculated', shards '2', shard_by 'player',
  shard_hash 'fnv1a_32');
CREATE TABLE local_scores AS
  SELECT 'g' || (i % 2) AS game, 'p' || i AS player, ((i * 7919) % 10000)::bigint AS score,
         (i % 9)::bigint AS level
    FROM generate_series(1, 300) i;
INSERT INTO scores SELECT * FROM local_scores;
ANALYZE scores;
EXPLAIN (COSTS OFF) SELECT player FROM scores WHERE game = 'g1' ORDER BY score DESC LIMIT 3;
EXPLAIN (COSTS OFF) SELECT player FROM scores WHERE level = 4;
ALTER FOREIGN TABLE scores OPTIONS (SET shards '3');
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('scores');
EXPLAIN (COSTS OFF) SELECT player FROM scores WHERE game = 'g1' ORDER BY score DESC LIMIT 3;
EXPLAIN (COSTS OFF) SELECT player FROM scores WHERE level = 4;
SELECT same_rows($$SELECT player, score FROM %s WHERE game = 'g1' ORDER BY score DESC LIMIT 3$$,
                 'scores', 'local_scores');
-- half the items moved: read inconsistently through the GSI, each row once
SELECT moved > 0 AS some_moved FROM shard_fdw_reshard('scores', '{"game": "g1"}');
ALTER FOREIGN TABLE scores OPTIONS (ADD consistent_read 'false');
EXPLAIN (COSTS OFF) SELECT player FROM scores WHERE level = 4;
SELECT same_rows($$SELECT player, game, score FROM %s WHERE level = 4 ORDER BY 1$$,
                 'scores', 'local_scores');
SELECT same_rows($$SELECT count(*) FROM %s WHERE level = 5$$, 'scores', 'local_scores');
EXPLAIN (COSTS OFF) SELECT count(*) FROM scores WHERE level = 5;

-- an index dropped from DynamoDB after the table recorded it: a read
-- through it says so, until the indexes are learnt again
SELECT shard_fdw_request('ddb', 'UpdateTable', '{"TableName": "idx_rules",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "byVip"}}]}')
  #>> '{TableDescription,TableName}' AS updated;
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    EXIT WHEN NOT shard_fdw_request('ddb', 'DescribeTable', '{"TableName": "idx_rules"}')
              @? '$.Table.GlobalSecondaryIndexes[*] ? (@.IndexName == "byVip")';
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
SELECT count(*) FROM people WHERE vip = 'Y';
SELECT index_name FROM shard_fdw_refresh_indexes('people');
SELECT same_rows($$SELECT count(*) FROM %s WHERE vip = 'Y'$$, 'people', 'local_people');

DROP TABLE local_people, local_scores;
DROP FOREIGN TABLE people, scores;
SELECT ddb_delete_table('idx_rules') AS deleted;
SELECT ddb_delete_table('idx_layouts') AS deleted;
DROP SERVER ddb CASCADE;

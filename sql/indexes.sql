-- A table's secondary indexes, learnt from DescribeTable when a foreign
-- table of it is declared (CREATE, ALTER, IMPORT FOREIGN SCHEMA) and
-- recorded as its option secondary_indexes, so that planning asks
-- DynamoDB nothing; shard_fdw_refresh_indexes() learns them again.
\ir sql/include/server.sql
\ir sql/include/ddb_indexes.sql
CREATE FUNCTION recorded(ftable regclass) RETURNS SETOF jsonb LANGUAGE sql AS $$
  SELECT jsonb_array_elements(substr(o, length('secondary_indexes=') + 1)::jsonb)
    FROM pg_foreign_table, unnest(ftoptions) o
   WHERE ftrelid = ftable AND o LIKE 'secondary\_indexes=%'
$$;

SELECT ddb_create_indexed_table('idx_learn', 'org', 'user',
  ARRAY[ddb_index('byEmail', 'email'),
        ddb_index('byCountry', 'country', 'signup', 'KEYS_ONLY'),
        ddb_index('byVip', 'vip:B', NULL, 'name,plan')],
  ARRAY[ddb_index('bySeen', 'org', 'seen:N')]) AS status;

-- declared: the keys and the indexes are learnt, the indexes with their
-- keys' types and projections
CREATE FOREIGN TABLE learn (org text, "user" text, email text, country text, signup text,
  seen bigint, name text)
  SERVER ddb OPTIONS (table 'idx_learn');
SELECT recorded('learn');
-- which of them queries may read, and why not: vip has no column
SELECT * FROM shard_fdw_refresh_indexes('learn');
-- a column for it, of the wrong type, then of the right one
ALTER FOREIGN TABLE learn ADD COLUMN vip text;
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('learn') WHERE index_name = 'byVip';
ALTER FOREIGN TABLE learn ALTER COLUMN vip TYPE bytea;
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('learn') WHERE index_name = 'byVip';
-- a column that may take its value from a key template cannot fix a key
CREATE FOREIGN TABLE templated (org text, "user" text, email text)
  SERVER ddb OPTIONS (table 'idx_learn', partition_key 'org', partition_key_format '{email}',
  sort_key 'user');
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('templated') WHERE index_name = 'byEmail';
DROP FOREIGN TABLE templated;

-- an ALTER learns them again: an index dropped meanwhile is forgotten
SELECT shard_fdw_request('ddb', 'UpdateTable', '{"TableName": "idx_learn",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "byVip"}}]}')
  #>> '{TableDescription,TableName}' AS updated;
ALTER FOREIGN TABLE learn OPTIONS (ADD batch_size '100');
SELECT recorded('learn') ->> 'name' AS name;
-- a recorded value set by hand is replaced by what DynamoDB says
ALTER FOREIGN TABLE learn OPTIONS (SET secondary_indexes '[]');
SELECT recorded('learn') ->> 'name' AS name;
-- DynamoDB unreachable (the first try and its two retries fail): the
-- declaration stands, and so do the indexes
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "DescribeTable", "count": 3}'
\set VERBOSITY terse
ALTER FOREIGN TABLE learn OPTIONS (SET batch_size '200');
\set VERBOSITY default
SELECT count(*) AS still_recorded FROM recorded('learn');

-- a foreign table of an index has none, and takes none
CREATE FOREIGN TABLE by_country (country text, signup text, org text, "user" text)
  SERVER ddb OPTIONS (table 'idx_learn', index 'byCountry');
SELECT count(*) AS recorded FROM recorded('by_country');
SELECT * FROM shard_fdw_refresh_indexes('by_country');
ALTER FOREIGN TABLE by_country OPTIONS (ADD use_indexes 'false');
ALTER FOREIGN TABLE by_country OPTIONS (ADD secondary_indexes '[]');
DROP FOREIGN TABLE by_country;

-- the option's value is checked, naming what is wrong
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '{"name": "x"}');
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '[{"name": "x", "kind": "near"}]');
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '[{"name": "x", "kind": "global",
    "partition_key": "a", "partition_key_type": "BOOL", "projection": "ALL"}]');
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '[{"name": "x", "kind": "global",
    "partition_key": "a", "partition_key_type": "S", "projection": "INCLUDE"}]');
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '[{"name": "x", "kind": "local",
    "partition_key": "a", "partition_key_type": "S", "projection": "ALL"}]');
CREATE FOREIGN TABLE bad (org text) SERVER ddb
  OPTIONS (table 'idx_learn', secondary_indexes '[{"name": "x", "kind": "global",
    "partition_key": "a", "partition_key_type": "S", "projection": "ALL", "status": "ACTIVE"}]');
CREATE FOREIGN TABLE bad (org text) SERVER ddb OPTIONS (table 'idx_learn', use_indexes 'maybe');
CREATE SERVER bad_srv FOREIGN DATA WRAPPER shard_fdw OPTIONS (region 'us-east-1', use_indexes 'sometimes');
SELECT * FROM shard_fdw_refresh_indexes('pg_class');

-- a foreign table declared before its DynamoDB table: nothing to learn
-- then; shard_fdw_refresh_indexes() learns them once it exists
CREATE FOREIGN TABLE early (id text, tag text) SERVER ddb
  OPTIONS (table 'idx_early', partition_key 'id');
SELECT count(*) AS recorded FROM recorded('early');
SELECT ddb_create_indexed_table('idx_early', 'id', NULL,
  ARRAY[ddb_index('byTag', 'tag', NULL, 'KEYS_ONLY')]) AS status;
SELECT * FROM shard_fdw_refresh_indexes('early');
SELECT recorded('early');

-- IMPORT FOREIGN SCHEMA records them too, and gives each index key
-- attribute a column, so that queries can read the indexes even where
-- the sample holds none of it (a sparse index)
CREATE SCHEMA imported;
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (idx_learn) FROM SERVER ddb INTO imported
  OPTIONS (sample_size '0');
\d imported.idx_learn
SELECT * FROM shard_fdw_refresh_indexes('imported.idx_learn');

DROP SCHEMA imported CASCADE;
DROP FOREIGN TABLE learn, early;
DROP FUNCTION recorded(regclass);
SELECT ddb_delete_table('idx_learn') AS deleted;
SELECT ddb_delete_table('idx_early') AS deleted;
DROP SERVER ddb CASCADE;

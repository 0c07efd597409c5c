-- DynamoDB's time to live deletes an item some time after the epoch
-- seconds in its TTL attribute, often days later, and reads return it
-- until then.  A foreign table learns the attribute when it is declared
-- (DescribeTimeToLive) or takes it from option ttl_attribute.
\ir sql/include/server.sql

-- learnt when declared, where DynamoDB has TTL enabled, and again when
-- the option is dropped; a table without TTL gets no option
SELECT ddb_create_table('ttl_learnt', 'pk') AS status;
SELECT shard_fdw_request('ddb', 'UpdateTimeToLive', '{"TableName": "ttl_learnt",
  "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires_at"}}');
CREATE FOREIGN TABLE learnt (pk text, expires_at bigint)
  SERVER ddb OPTIONS (table 'ttl_learnt');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'learnt'::regclass;
ALTER FOREIGN TABLE learnt OPTIONS (DROP ttl_attribute);
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'learnt'::regclass;
-- one given is taken as it is, without asking
ALTER FOREIGN TABLE learnt OPTIONS (SET ttl_attribute 'other');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'learnt'::regclass;
SELECT ddb_create_table('ttl_none', 'pk') AS status;
CREATE FOREIGN TABLE no_ttl (pk text) SERVER ddb OPTIONS (table 'ttl_none');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'no_ttl'::regclass;
-- DynamoDB that cannot say: the declaration stands, with a warning
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "DescribeTimeToLive"}'
CREATE FOREIGN TABLE learnt_later (pk text) SERVER ddb OPTIONS (table 'ttl_learnt');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'learnt_later'::regclass;
ALTER FOREIGN TABLE learnt_later OPTIONS (ADD include_expired 'false');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'learnt_later'::regclass;
-- the options are checked
ALTER FOREIGN TABLE no_ttl OPTIONS (ADD include_expired 'sometimes');
ALTER FOREIGN TABLE no_ttl OPTIONS (ADD ttl_attribute '');
DROP FOREIGN TABLE learnt, learnt_later, no_ttl;
SELECT ddb_delete_table('ttl_learnt') AS deleted;
SELECT ddb_delete_table('ttl_none') AS deleted;

DROP SERVER ddb CASCADE;

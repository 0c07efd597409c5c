-- DynamoDB's time to live deletes an item some time after the epoch
-- seconds in its TTL attribute, often days later, and reads return it
-- until then.  A foreign table learns the attribute when it is declared
-- (DescribeTimeToLive) or takes it from option ttl_attribute, and its reads
-- leave out the items whose time has passed: a FilterExpression on a Query
-- or Scan, and each item checked as it arrives (GetItem too).
-- include_expired reads them anyway.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql

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

-- Sessions that expire.  DynamoDB Local deletes expired items within
-- seconds where TTL is enabled, so here it is not, and the foreign table
-- names the attribute.  The items' TTLs: passed, to come, none, not a
-- number (DynamoDB's TTL ignores it), NULL, passed more than five years
-- ago (DynamoDB never deletes those), passed just under five years ago.
SELECT ddb_create_table('ttl_sessions', 'user_id', 'session') AS status;
CREATE FOREIGN TABLE sessions (user_id text, session text, note text, expires bigint)
  SERVER ddb OPTIONS (table 'ttl_sessions', partition_key 'user_id', sort_key 'session',
                      ttl_attribute 'expires');
SELECT floor(extract(epoch FROM now()))::bigint AS now \gset
INSERT INTO sessions VALUES
  ('u1', 's1', 'expired', :now - 100), ('u1', 's2', 'live', :now + 86400),
  ('u1', 's3', 'no ttl', NULL), ('u1', 's4', 'ancient', 1000),
  ('u1', 's5', 'nearly five years', :now - 5 * 365 * 86400 + 86400),
  ('u1', 's6', 'over five years', :now - 5 * 365 * 86400 - 86400),
  ('u2', 's1', 'expired', :now - 100), ('u2', 's2', 'live', :now + 3600);
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'ttl_sessions',
  'Item', jsonb_build_object('user_id', '{"S": "u1"}'::jsonb, 'session', '{"S": "s7"}'::jsonb,
                             'note', '{"S": "string ttl"}'::jsonb,
                             'expires', jsonb_build_object('S', (:now - 100)::text))));
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'ttl_sessions',
  'Item', jsonb_build_object('user_id', '{"S": "u1"}'::jsonb, 'session', '{"S": "s8"}'::jsonb,
                             'note', '{"S": "NULL ttl"}'::jsonb,
                             'expires', '{"NULL": true}'::jsonb)));
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object('TableName', 'ttl_sessions',
  'Item', jsonb_build_object('user_id', '{"S": "u1"}'::jsonb, 'session', '{"S": "s9"}'::jsonb,
                             'note', '{"S": "fraction passed"}'::jsonb,
                             'expires', jsonb_build_object('N', (:now - 100)::text || '.5'))));
-- a Query: DynamoDB filters, and counts what is left
SELECT session, note FROM sessions WHERE user_id = 'u1' ORDER BY session;
SELECT explain_analyze($$SELECT note FROM sessions WHERE user_id = 'u1'$$);
SELECT count(*) FROM sessions WHERE user_id = 'u1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM sessions WHERE user_id = 'u1';
SELECT min(session), max(session) FROM sessions WHERE user_id = 'u2';
SELECT session FROM sessions WHERE user_id = 'u2' ORDER BY session LIMIT 1;
-- a Scan
SELECT user_id, session FROM sessions ORDER BY user_id, session;
-- GetItem and BatchGetItem take no filter: the items are checked here
SELECT note FROM sessions WHERE user_id = 'u1' AND session = 's1';
SELECT note FROM sessions WHERE user_id = 'u1' AND session IN ('s1', 's2', 's7') ORDER BY note;
EXPLAIN (VERBOSE, COSTS OFF) SELECT note FROM sessions WHERE user_id = 'u1' AND session = 's1';
-- a join looks the sessions up
CREATE TABLE wanted (user_id text, session text);
INSERT INTO wanted VALUES ('u1', 's1'), ('u1', 's2'), ('u2', 's1'), ('u2', 's2');
SELECT w.user_id, w.session, s.note FROM wanted w JOIN sessions s USING (user_id, session)
 ORDER BY 1, 2;
-- writes are not filtered: an expired session's key is taken until
-- DynamoDB deletes the item, but UPDATE and DELETE do not see it
INSERT INTO sessions VALUES ('u2', 's1', 'again', :now + 60);
UPDATE sessions SET note = note || '!' WHERE user_id = 'u2' RETURNING session, note;
DELETE FROM sessions WHERE user_id = 'u2' RETURNING session;
-- include_expired reads them
ALTER FOREIGN TABLE sessions OPTIONS (ADD include_expired 'true');
SELECT session, note FROM sessions WHERE user_id = 'u2' ORDER BY session;
SELECT count(*) FROM sessions WHERE user_id = 'u1';
EXPLAIN (COSTS OFF) SELECT note FROM sessions WHERE user_id = 'u1';
ALTER FOREIGN TABLE sessions OPTIONS (SET include_expired 'false');

-- a TTL attribute that is the sort key cannot be in a Query's filter: the
-- items are checked as they arrive, and the count is PostgreSQL's
SELECT shard_fdw_request('ddb', 'CreateTable', '{"TableName": "ttl_keyed",
  "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "user_id", "KeyType": "HASH"},
                {"AttributeName": "expires", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "user_id", "AttributeType": "S"},
                           {"AttributeName": "expires", "AttributeType": "N"}]}')
  #>> '{TableDescription,TableStatus}' AS status;
CREATE FOREIGN TABLE keyed (user_id text, expires bigint)
  SERVER ddb OPTIONS (table 'ttl_keyed', partition_key 'user_id', sort_key 'expires',
                      ttl_attribute 'expires');
INSERT INTO keyed VALUES ('u1', :now - 100), ('u1', :now + 3600), ('u1', 7);
SELECT CASE WHEN expires < :now THEN 'passed' ELSE 'to come' END AS ttl
  FROM keyed WHERE user_id = 'u1' ORDER BY expires;
SELECT count(*) FROM keyed WHERE user_id = 'u1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM keyed WHERE user_id = 'u1';
DROP FOREIGN TABLE keyed;
SELECT ddb_delete_table('ttl_keyed') AS deleted;

-- secondary indexes: one projecting the TTL attribute is read, and its
-- reads leave the expired items out as the table's do; one that does not
-- project it is not read while expired items are left out
SELECT shard_fdw_request('ddb', 'CreateTable', '{"TableName": "ttl_indexed",
  "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "user_id", "KeyType": "HASH"},
                {"AttributeName": "session", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "user_id", "AttributeType": "S"},
                           {"AttributeName": "session", "AttributeType": "S"},
                           {"AttributeName": "device", "AttributeType": "S"},
                           {"AttributeName": "place", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [
    {"IndexName": "byDevice", "KeySchema": [{"AttributeName": "device", "KeyType": "HASH"}],
     "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["expires"]}},
    {"IndexName": "byPlace", "KeySchema": [{"AttributeName": "place", "KeyType": "HASH"}],
     "Projection": {"ProjectionType": "KEYS_ONLY"}}]}')
  #>> '{TableDescription,TableStatus}' AS status;
CREATE FOREIGN TABLE indexed (user_id text, session text, device text, place text,
                              expires bigint)
  SERVER ddb OPTIONS (table 'ttl_indexed', ttl_attribute 'expires');
INSERT INTO indexed VALUES ('u1', 's1', 'phone', 'home', :now - 100),
  ('u1', 's2', 'phone', 'home', :now + 3600), ('u2', 's1', 'phone', 'work', NULL);
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('indexed');
EXPLAIN (COSTS OFF) SELECT user_id, session FROM indexed WHERE device = 'phone';
SELECT user_id, session FROM indexed WHERE device = 'phone' ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT user_id, session FROM indexed WHERE place = 'home';
SELECT user_id, session FROM indexed WHERE place = 'home' ORDER BY 1, 2;
-- reading the expired items too, the index that lacks the attribute is read
ALTER FOREIGN TABLE indexed OPTIONS (ADD include_expired 'true');
SELECT index_name, unusable FROM shard_fdw_refresh_indexes('indexed');
SELECT user_id, session FROM indexed WHERE place = 'home' ORDER BY 1, 2;
DROP FOREIGN TABLE indexed;
SELECT ddb_delete_table('ttl_indexed') AS deleted;

DROP TABLE wanted;
DROP FOREIGN TABLE sessions;
SELECT ddb_delete_table('ttl_sessions') AS deleted;
DROP FUNCTION explain_analyze(text);
DROP SERVER ddb CASCADE;

-- DynamoDB errors and transport faults (injected by the test proxy):
-- retried when they may pass, reported clearly when they do not.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
ALTER SERVER ddb OPTIONS (ADD max_retries '3');
SELECT ddb_create_table('errors_tab', 'k') AS status;
CREATE FOREIGN TABLE kv (k text, v int)
  SERVER ddb OPTIONS (table 'errors_tab', partition_key 'k');
INSERT INTO kv SELECT 'k' || i, i FROM generate_series(1, 5) i;

\ir sql/include/retries.sql

-- faults that pass: each is retried and the query succeeds
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "GetItem", "count": 2}'
SELECT v FROM kv WHERE k = 'k1';
SELECT new_retries(), reset_mark();
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 503, "action": "GetItem"}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "GetItem", "reasons": ["TableReadKeyRangeThroughputExceeded"]}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "GetItem"}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "malformed", "action": "GetItem"}'
SELECT v FROM kv WHERE k = 'k2';
SELECT new_retries(), reset_mark();
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "badcrc", "action": "GetItem"}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "truncate", "action": "GetItem"}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "error": "ThrottlingException", "action": "GetItem"}'
SELECT v FROM kv WHERE k = 'k3';
SELECT new_retries(), reset_mark();
SELECT explain_analyze($$SELECT v FROM kv WHERE k = 'k3'$$);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "GetItem", "count": 2}'
SELECT explain_analyze($$SELECT v FROM kv WHERE k = 'k3'$$);
SELECT reset_mark();

-- a conditional put whose first attempt was applied but answered with a 500
-- is not taken for a duplicate of itself
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "PutItem", "when": "after"}'
INSERT INTO kv VALUES ('k6', 6);
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "PutItem", "when": "after"}'
INSERT INTO kv VALUES ('k7', 7);
SELECT new_retries(), reset_mark();
SELECT k, v FROM kv WHERE k IN ('k6', 'k7') ORDER BY k;
-- but a real duplicate still is
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "PutItem"}'
INSERT INTO kv VALUES ('k6', 60);
SELECT v FROM kv WHERE k = 'k6';

-- faults that do not pass: retries run out, the error says why
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "GetItem", "count": 4}'
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "GetItem", "count": 4, "reasons": ["TableReadProvisionedThroughputExceeded"]}'
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "malformed", "action": "GetItem", "count": 4}'
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "badcrc", "action": "GetItem", "count": 4}'
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
SELECT v FROM kv WHERE k = 'k1';

-- errors that are not retried
SELECT reset_mark();
CREATE FOREIGN TABLE missing (k text) SERVER ddb
  OPTIONS (table 'no_such_table', partition_key 'k');
SELECT * FROM missing;
INSERT INTO missing VALUES ('x');
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "com.amazonaws.dynamodb.v20120810#AccessDeniedException", "message": "User is not authorized to perform: dynamodb:GetItem", "action": "GetItem"}'
SELECT v FROM kv WHERE k = 'k1';
SELECT new_retries();

-- a slow answer runs into request_timeout_ms
ALTER SERVER ddb OPTIONS (ADD request_timeout_ms '300', SET max_retries '1');
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "slow", "action": "GetItem", "delay_ms": 2000, "count": 2}'
\set VERBOSITY terse
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
ALTER SERVER ddb OPTIONS (DROP request_timeout_ms, SET max_retries '3');

-- credentials: a wrong secret fails the signature check, a wrong key is unknown
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (SET secret_access_key 'wrong');
SELECT v FROM kv WHERE k = 'k1';
\set VERBOSITY default
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (SET access_key_id 'nobody', SET secret_access_key :'secret');
SELECT v FROM kv WHERE k = 'k1';
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (SET access_key_id :'akid');
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (ADD session_token 'token-from-sts');
SELECT v FROM kv WHERE k = 'k1';
-- a signature error repeats the canonical request: the token is blanked out
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (SET secret_access_key 'wrong');
DO $$
DECLARE
  detail text;
BEGIN
  PERFORM v FROM kv WHERE k = 'k1';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RAISE NOTICE 'canonical request in detail: %, token shown: %, blanked: %',
    position('x-amz-security-token' in detail) > 0,
    position('token-from-sts' in detail) > 0,
    position('x-amz-security-token:**************' in detail) > 0;
END
$$;
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (SET secret_access_key :'secret', DROP session_token);

-- without a user mapping: an ordinary user gets an error, and so does a
-- superuser when the server's environment holds no credentials
CREATE ROLE regress_shard_user;
GRANT SELECT ON kv TO regress_shard_user;
SET ROLE regress_shard_user;
SELECT v FROM kv WHERE k = 'k1';
RESET ROLE;
DROP USER MAPPING FOR CURRENT_USER SERVER ddb;
SELECT v FROM kv WHERE k = 'k1';
CREATE USER MAPPING FOR PUBLIC SERVER ddb
  OPTIONS (access_key_id :'akid', secret_access_key :'secret');
SET ROLE regress_shard_user;
SELECT v FROM kv WHERE k = 'k1';
RESET ROLE;

DROP FOREIGN TABLE kv, missing;
DROP FUNCTION new_retries(), reset_mark(), retries();
SELECT ddb_delete_table('errors_tab') AS deleted;
DROP SERVER ddb CASCADE;
DROP ROLE regress_shard_user;

-- Errors that say what to change: an endpoint that refuses the connection
-- is named once the retries are spent, and one that answers as no
-- DynamoDB does is named at once; a backend's first request is otherwise
-- retried as any other.  A missing table
-- or index is named; keys that do not match the table's key schema are
-- refused when declared, and name the options to set when DynamoDB refuses
-- them later; EXPLAIN tells the key
-- condition sent to DynamoDB from the columns that only chose the shard.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql

-- fails_fast(query): the error query raises, how many attempts it made
-- and whether it came within 2 seconds
CREATE FUNCTION fails_fast(query text)
RETURNS TABLE (state text, message text, hint text, attempts bigint, within_2s boolean)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  before bigint := (SELECT s.attempts FROM shard_fdw_stats() s);
BEGIN
  EXECUTE query;
  RAISE EXCEPTION 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                          hint = PG_EXCEPTION_HINT;
  message := replace(message, current_setting('regress.endpoint'), '<endpoint>');
  attempts := (SELECT s.attempts FROM shard_fdw_stats() s) - before;
  within_2s := clock_timestamp() - started < interval '2 seconds';
  RETURN NEXT;
END
$$;
SELECT set_config('regress.endpoint', :'endpoint', false) IS NOT NULL AS set;
\x on

-- nothing listens on port 1: the endpoint is named after max_retries
-- retries (here 2: 3 attempts)
CREATE SERVER refused FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (endpoint 'http://127.0.0.1:1', max_retries '2');
CREATE USER MAPPING FOR CURRENT_USER SERVER refused
  OPTIONS (access_key_id :'akid', secret_access_key :'secret');
SELECT * FROM fails_fast($$SELECT shard_fdw_request('refused', 'ListTables', '{}')$$);
-- the declaration stands, with a warning (terse: its detail is libcurl's
-- wording, which changes between libcurl's versions)
\set VERBOSITY terse
CREATE FOREIGN TABLE far (k text) SERVER refused OPTIONS (table 'far', partition_key 'k');
\set VERBOSITY default
SELECT * FROM fails_fast($$SELECT * FROM far WHERE k = 'x'$$);

-- a fresh backend's first request gets through a reset, or a front's 502,
-- as any request does
\c
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "ListTables"}'
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT attempts, retries FROM shard_fdw_stats();
\c
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "web", "status": 502, "action": "ListTables"}'
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT attempts, retries FROM shard_fdw_stats();
-- but a web server's own answer (a 404 page) is no DynamoDB's: said at once
\c
SELECT set_config('regress.endpoint', :'endpoint', false) IS NOT NULL AS set;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "web", "status": 404, "action": "ListTables"}'
SELECT * FROM fails_fast($$SELECT shard_fdw_request('ddb', 'ListTables', '{}')$$);
-- after an answer from DynamoDB, a 502 is retried as well
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT retries AS before FROM shard_fdw_stats() \gset
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "web", "status": 502, "action": "ListTables", "count": 2}'
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT retries - :before AS retries FROM shard_fdw_stats();
-- and so are a DynamoDB's 5xx and throttles on a fresh backend
\c
SELECT retries AS before FROM shard_fdw_stats() \gset
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 500, "action": "ListTables"}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "throttle", "action": "ListTables"}'
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT retries - :before AS retries FROM shard_fdw_stats();
SELECT set_config('regress.endpoint', :'endpoint', false) IS NOT NULL AS set;
\x off

-- a missing table, or index, is named
SELECT ddb_create_table('endpoint_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE nowhere (k text) SERVER ddb
  OPTIONS (table 'no_such_table', partition_key 'k');
SELECT * FROM nowhere WHERE k = 'x';
CREATE FOREIGN TABLE nowhere_ix (k text) SERVER ddb
  OPTIONS (table 'no_such_table', index 'by_k', partition_key 'k');
SELECT * FROM nowhere_ix WHERE k = 'x';
CREATE FOREIGN TABLE no_index (pk text, sk text) SERVER ddb
  OPTIONS (table 'endpoint_tab', index 'by_k', partition_key 'pk', sort_key 'sk');
SELECT * FROM no_index WHERE pk = 'x';

-- keys that are not the table's are refused when declared, naming both
CREATE FOREIGN TABLE wrong_pk (game text, sk text) SERVER ddb
  OPTIONS (table 'endpoint_tab', partition_key 'game', sort_key 'sk');
CREATE FOREIGN TABLE wrong_sk (pk text, score text) SERVER ddb
  OPTIONS (table 'endpoint_tab', partition_key 'pk', sort_key 'score');
CREATE FOREIGN TABLE wrong_both (pk text) SERVER ddb
  OPTIONS (table 'endpoint_tab', partition_key 'pk');
SELECT ddb_create_table('endpoint_players', 'gamer_tag', 'played_at:N') AS status;
CREATE FOREIGN TABLE players (player text, played_at bigint) SERVER ddb
  OPTIONS (table 'endpoint_players', partition_key 'player', sort_key 'played_at');
-- and by ALTER: the keys are checked again
CREATE FOREIGN TABLE players (gamer_tag text, played_at bigint) SERVER ddb
  OPTIONS (table 'endpoint_players', partition_key 'gamer_tag', sort_key 'played_at');
ALTER FOREIGN TABLE players OPTIONS (SET table 'endpoint_tab');
-- a table declared before its DynamoDB table exists is not checked; when
-- DynamoDB then refuses its keys, the error says what to set, without
-- asking DynamoDB again
CREATE FOREIGN TABLE later (game text, sk text) SERVER ddb
  OPTIONS (table 'endpoint_later', partition_key 'game', sort_key 'sk');
SELECT ddb_create_table('endpoint_later', 'pk', 'sk') AS status;
SELECT * FROM later WHERE game = 'g';
SELECT * FROM later WHERE game = 'g' AND sk = 's';
INSERT INTO later VALUES ('g', 's');
SELECT * FROM fails_fast($$SELECT * FROM later WHERE game = 'g' AND sk = 's'$$);

-- EXPLAIN: player_id chose the shard but is not in the key condition; the
-- items of the shard are read and filtered here
CREATE FOREIGN TABLE board (game_id text, player_id text, score bigint) SERVER ddb
  OPTIONS (table 'endpoint_tab', partition_key 'pk', partition_key_format '{game_id}#{shard}',
           sort_key 'sk', sort_key_format '{score:020}#{player_id}',
           shards '4', shard_strategy 'calculated', shard_by 'player_id', shard_hash 'fnv1a_32');
INSERT INTO board SELECT 'g', 'p' || i, i * 10 FROM generate_series(1, 20) i;
SELECT explain_analyze($$SELECT score FROM board WHERE game_id = 'g' AND player_id = 'p7'$$);
SELECT score FROM board WHERE game_id = 'g' AND player_id = 'p7';
-- with the score, player_id is part of the key too (GetItem)
EXPLAIN (COSTS OFF) SELECT 1 FROM board WHERE game_id = 'g' AND player_id = 'p7' AND score = 70;
-- a leading sort key field is in the key condition (begins_with)
EXPLAIN (COSTS OFF) SELECT player_id FROM board WHERE game_id = 'g' AND score = 70;

DROP FOREIGN TABLE far, nowhere, nowhere_ix, no_index, players, later, board;
DROP FUNCTION fails_fast(text), explain_analyze(text);
SELECT ddb_delete_table('endpoint_tab') AS deleted;
SELECT ddb_delete_table('endpoint_players') AS deleted;
SELECT ddb_delete_table('endpoint_later') AS deleted;
DROP SERVER ddb CASCADE;
DROP SERVER refused CASCADE;

-- Declaring a table: a foreign table declared without partition_key learns
-- its key attributes from DynamoDB (DescribeTable) once, when it is
-- declared, and keeps them as options; planning and EXPLAIN then read the
-- catalogs only.
\ir sql/include/server.sql
\ir sql/include/ddb_indexes.sql
SELECT ddb_create_indexed_table('declare_tab', 'game', 'player',
  ARRAY[ddb_index('byScore', 'game', 'score:N')]) AS status;

CREATE FUNCTION table_options(regclass) RETURNS text[]
LANGUAGE sql AS $$ SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = $1 $$;

-- the keys are recorded as options
CREATE FOREIGN TABLE scores (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab');
SELECT table_options('scores');
CREATE FOREIGN TABLE by_score (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab', index 'byScore');
SELECT table_options('by_score');
-- a sort_key given is kept
CREATE FOREIGN TABLE no_sort (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab', sort_key 'player');
SELECT table_options('no_sort');
-- dropping partition_key learns it again; giving it asks nothing
ALTER FOREIGN TABLE scores OPTIONS (DROP partition_key, DROP sort_key);
SELECT table_options('scores');
CREATE FOREIGN TABLE given (game text, player text)
  SERVER ddb OPTIONS (table 'no_such_table', partition_key 'game');
SELECT table_options('given');

-- what DynamoDB does not have is refused when declared, and nothing stays
\set VERBOSITY terse
CREATE FOREIGN TABLE missing (game text) SERVER ddb OPTIONS (table 'no_such_table');
CREATE FOREIGN TABLE missing (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab', index 'noIndex');
-- a learnt key needs a column like any other
CREATE FOREIGN TABLE missing (player text) SERVER ddb OPTIONS (table 'declare_tab');
\set VERBOSITY default
CREATE FOREIGN TABLE missing (game text) SERVER ddb OPTIONS (table 'no_such_table');
SELECT count(*) AS declared FROM pg_class WHERE relname = 'missing';

-- a table declared while the event trigger was off has no keys: reading it
-- is a clear error, and an ALTER with the trigger on learns them
ALTER EVENT TRIGGER shard_fdw_check_ddl DISABLE;
CREATE FOREIGN TABLE unlearnt (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab');
ALTER EVENT TRIGGER shard_fdw_check_ddl ENABLE;
SELECT * FROM unlearnt;
INSERT INTO unlearnt VALUES ('g', 'x', 1);
ALTER FOREIGN TABLE unlearnt OPTIONS (ADD consistent_read 'true');
SELECT table_options('unlearnt');
DROP FOREIGN TABLE unlearnt;

-- with check_function_bodies off, as the scripts of pg_dump and pg_restore
-- set it, DynamoDB is not asked: keys declared are not checked, keys left
-- out are not learnt, and a restore sends no request
\c
SET check_function_bodies = off;
CREATE FOREIGN TABLE restored (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab', partition_key 'player', sort_key 'game');
CREATE FOREIGN TABLE restored_unlearnt (game text, player text, score int)
  SERVER ddb OPTIONS (table 'declare_tab');
ALTER FOREIGN TABLE restored OWNER TO CURRENT_USER;
SELECT requests AS requests_sent FROM shard_fdw_stats();
SELECT table_options('restored'), table_options('restored_unlearnt');
-- the options are checked against the columns all the same
CREATE FOREIGN TABLE restored_bad (game text)
  SERVER ddb OPTIONS (table 'declare_tab', partition_key 'player');
RESET check_function_bodies;
-- with it on, the next ALTER asks
ALTER FOREIGN TABLE restored OPTIONS (ADD consistent_read 'true');
ALTER FOREIGN TABLE restored_unlearnt OPTIONS (ADD consistent_read 'true');
SELECT table_options('restored_unlearnt');
DROP FOREIGN TABLE restored, restored_unlearnt;

-- reads and writes use the learnt keys
INSERT INTO scores VALUES ('g', 'ann', 7), ('g', 'bob', 9);
SELECT * FROM scores WHERE game = 'g' ORDER BY player;
SELECT * FROM by_score WHERE game = 'g' ORDER BY score DESC;

-- EXPLAIN without ANALYZE sends no request, in a backend that has sent none
\c
SELECT requests AS before FROM shard_fdw_stats() \gset
EXPLAIN (COSTS OFF) SELECT * FROM scores WHERE game = 'g' ORDER BY player LIMIT 1;
EXPLAIN (COSTS OFF) SELECT * FROM by_score WHERE game = 'g';
EXPLAIN (COSTS OFF) INSERT INTO scores VALUES ('g', 'cy', 1);
EXPLAIN (COSTS OFF) UPDATE scores SET score = 2 WHERE game = 'g';
EXPLAIN (COSTS OFF) DELETE FROM scores WHERE game = 'g';
SELECT requests - :before AS requests_sent FROM shard_fdw_stats();

DROP FOREIGN TABLE scores, by_score, no_sort, given;
SELECT ddb_delete_table('declare_tab') AS deleted;
DROP SERVER ddb CASCADE;
DROP FUNCTION table_options;

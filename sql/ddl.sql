-- What DDL may do to shard_fdw objects: the endpoint's form when a server
-- is created or altered, column renames, drops and type changes that would
-- break a foreign table's keys, the USAGE the SQL functions need, and
-- range boundaries from a small sample.
\ir sql/include/server.sql
\set VERBOSITY terse

-- the endpoint is an http or https URL of a host and an optional port
-- (each statement built from the list and run by \gexec)
SELECT format('CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint %L)', endpoint)
  FROM unnest(ARRAY['ftp://127.0.0.1:8000', 'file:///etc/passwd', 'gopher://example.com',
                    '127.0.0.1:8000', 'http://', 'http://user:pw@example.com',
                    'https://example.com/?x=1', 'https://example.com#top',
                    'https://example.com/dynamodb', 'http://example.com:0',
                    'http://example.com:65536', 'http://example.com:80x',
                    'http://exa mple.com']) AS endpoint \gexec
ALTER SERVER ddb OPTIONS (SET endpoint 'ftp://127.0.0.1:8000');
\set VERBOSITY default
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint 'ftp://127.0.0.1:8000');
\set VERBOSITY terse
CREATE SERVER good1 FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (endpoint 'https://dynamodb.eu-west-1.amazonaws.com');
CREATE SERVER good2 FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint 'http://127.0.0.1:8000/');
CREATE SERVER good3 FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint 'http://[::1]:8000');
CREATE SERVER good4 FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint 'http://ddb-local');
DROP SERVER good1, good2, good3, good4;

-- a column an option names cannot be renamed; dropped only with the option
CREATE FOREIGN TABLE board (game_id text, player_id text, score bigint, name text)
  SERVER ddb OPTIONS (table 'ddl_tab', partition_key 'pk',
    partition_key_format '{game_id}#{shard}', sort_key 'sk',
    sort_key_format '{score:020}#{player_id}', shards '4',
    shard_strategy 'calculated', shard_by 'player_id');
CREATE FOREIGN TABLE plain (game text, seq int, note text)
  SERVER ddb OPTIONS (table 'ddl_plain', partition_key 'game', sort_key 'seq');
ALTER FOREIGN TABLE board RENAME COLUMN score TO points;
ALTER TABLE board RENAME COLUMN player_id TO player;
ALTER TABLE board RENAME COLUMN game_id TO game;
ALTER FOREIGN TABLE plain RENAME COLUMN game TO game_name;
ALTER TABLE plain RENAME seq TO position;
\set VERBOSITY default
ALTER FOREIGN TABLE board RENAME COLUMN score TO points;
ALTER FOREIGN TABLE plain RENAME COLUMN game TO game_name;
\set VERBOSITY terse
ALTER FOREIGN TABLE board DROP COLUMN score;
ALTER TABLE board DROP COLUMN player_id;
ALTER TABLE plain DROP COLUMN seq;
\set VERBOSITY default
ALTER TABLE board DROP COLUMN player_id;
\set VERBOSITY terse
SELECT attname FROM pg_attribute WHERE attrelid = 'board'::regclass AND attnum > 0
 ORDER BY attnum;
-- any other column is read from the attribute of its name: renaming it
-- would read other attributes, so it needs the option attribute first
ALTER FOREIGN TABLE plain RENAME COLUMN note TO remark;
\set VERBOSITY default
ALTER FOREIGN TABLE board RENAME COLUMN name TO nickname;
\set VERBOSITY terse
ALTER FOREIGN TABLE board ALTER COLUMN name OPTIONS (ADD attribute 'name');
ALTER FOREIGN TABLE board RENAME COLUMN name TO nickname;
ALTER TABLE board DROP COLUMN nickname;
ALTER FOREIGN TABLE plain ALTER COLUMN game OPTIONS (ADD attribute 'game');
ALTER FOREIGN TABLE plain RENAME COLUMN game TO game_name;
ALTER FOREIGN TABLE plain RENAME COLUMN game_name TO game;
ALTER FOREIGN TABLE plain ALTER COLUMN game OPTIONS (DROP attribute);
-- a drop together with the option that named the column: the sort key
-- template cannot change (reads could not cover the items stored under
-- the old one), and the earlier layout shard_by leaves names the column
ALTER FOREIGN TABLE board OPTIONS (SET sort_key_format '{score:020}'),
  DROP COLUMN player_id;
ALTER FOREIGN TABLE board OPTIONS (SET shard_by 'game_id');
ALTER FOREIGN TABLE board DROP COLUMN player_id;

-- a type change that stores a key column's values otherwise is refused
ALTER FOREIGN TABLE board ALTER COLUMN score TYPE text;
ALTER TABLE plain ALTER COLUMN seq TYPE text;
ALTER TABLE plain ALTER COLUMN game TYPE int;
ALTER TABLE board ALTER COLUMN game_id TYPE jsonb;
\set VERBOSITY default
ALTER TABLE plain ALTER COLUMN seq TYPE text;
\set VERBOSITY terse
-- one that keeps the stored type is fine, and so are other columns
ALTER TABLE board ALTER COLUMN score TYPE integer, ALTER COLUMN game_id TYPE varchar(20);
ALTER TABLE plain ALTER COLUMN seq TYPE numeric(10), ALTER COLUMN note TYPE int;
-- a zero-padded field needs a number; a field, a scalar
CREATE FOREIGN TABLE padded (k text, n text) SERVER ddb
  OPTIONS (table 'ddl_tab', partition_key 'pk', partition_key_format '{k}',
           sort_key 'sk', sort_key_format '{n:05}');
CREATE FOREIGN TABLE arrays (k text[]) SERVER ddb
  OPTIONS (table 'ddl_tab', partition_key 'pk', partition_key_format 'x#{k}');
-- with a column option ddb_type the stored type is fixed, and checked
ALTER FOREIGN TABLE plain ALTER COLUMN seq OPTIONS (ADD ddb_type 'N');
ALTER TABLE plain ALTER COLUMN seq TYPE text;
ALTER TABLE plain ALTER COLUMN seq TYPE bytea;
DROP FOREIGN TABLE board, plain;

-- the SQL functions that reach a server need USAGE on it
CREATE ROLE regress_ddl_user;
CREATE USER MAPPING FOR regress_ddl_user SERVER ddb
  OPTIONS (access_key_id :'akid', secret_access_key :'secret');
CREATE FOREIGN TABLE counted (game_id text, player_id text)
  SERVER ddb OPTIONS (table 'ddl_tab', partition_key 'pk',
    partition_key_format '{game_id}#{shard}', sort_key 'sk',
    sort_key_format '{player_id}', shards '2', shard_strategy 'calculated',
    shard_by 'player_id');
GRANT SELECT ON counted TO regress_ddl_user;
SET ROLE regress_ddl_user;
SELECT shard_fdw_request('ddb', 'ListTables', '{}');
SELECT * FROM shard_fdw_key('counted', '{"game_id": "g", "player_id": "p"}');
SELECT * FROM shard_fdw_shard_counts('counted', '{"game_id": "g"}');
SELECT * FROM shard_fdw_metadata('counted', '{"game_id": "g"}');
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER ddb TO regress_ddl_user;
SET ROLE regress_ddl_user;
SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames' AS answered;
SELECT * FROM shard_fdw_key('counted', '{"game_id": "g", "player_id": "p"}');
RESET ROLE;
DROP FOREIGN TABLE counted;
DROP USER MAPPING FOR regress_ddl_user SERVER ddb;
REVOKE USAGE ON FOREIGN SERVER ddb FROM regress_ddl_user;
DROP ROLE regress_ddl_user;

-- range boundaries: one per shard from any sample with enough distinct keys
SELECT shard_fdw_range_boundaries(ARRAY['a', 'b', 'c', 'd', 'e'], 4, false);
SELECT shard_fdw_range_boundaries(ARRAY['a', 'a', 'a', 'a', 'a', 'a', 'b', 'c'], 3, false);
SELECT shard_fdw_range_boundaries(ARRAY['apple', 'apricot', 'avocado', 'banana'], 3,
                                  false, 1);
SELECT shard_fdw_range_boundaries(ARRAY['apple', 'apricot', 'avocado', 'banana'], 3,
                                  false, 2);
SELECT shard_fdw_range_boundaries(ARRAY['x', 'x', 'y'], 3);
SELECT shard_fdw_range_boundaries(ARRAY['', 'x'], 3);
\set VERBOSITY default
SELECT shard_fdw_range_boundaries(ARRAY['Kiwi', 'kiwi', 'KIWI', 'lime'], 4);
\set VERBOSITY terse
SELECT shard_fdw_range_boundaries('{}', 2);
SELECT shard_fdw_range_boundaries('{}', 1);
SELECT shard_fdw_range_boundaries(ARRAY['Kiwi', 'kiwi', 'KIWI', 'lime'], 3);
-- what it returns is taken by the options as it is
SELECT format('CREATE FOREIGN TABLE ranged (k text) SERVER ddb OPTIONS (table %L,
                 partition_key %L, partition_key_format %L, shards %L,
                 shard_strategy %L, shard_by %L, range_boundaries %L)',
              'ddl_tab', 'pk', '{k}#{shard}', '5', 'range', 'k', to_json(b)::text)
  FROM shard_fdw_range_boundaries(ARRAY['a', 'b', 'b', 'b', 'b', 'b', 'b', 'b', 'c',
                                        'd', 'e'], 5) b \gexec
DROP FOREIGN TABLE ranged;

DROP SERVER ddb CASCADE;

-- Every option is checked when the object is created or altered, with an
-- error that names the option.
\set VERBOSITY terse

CREATE SERVER opt_srv FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (region 'eu-west-1', endpoint 'http://127.0.0.1:1', max_concurrency '8');

-- server options
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (regoin 'x');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (max_concurrency '0');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (max_concurrency 'many');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (max_retries '101');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (consistent_read 'perhaps');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint '');
ALTER SERVER opt_srv OPTIONS (ADD request_timeout_ms '-5');
ALTER SERVER opt_srv OPTIONS (ADD request_timeout_ms '2000', connect_timeout_ms '500');

-- user mapping options
CREATE USER MAPPING FOR CURRENT_USER SERVER opt_srv OPTIONS (password 'x');
CREATE USER MAPPING FOR CURRENT_USER SERVER opt_srv
  OPTIONS (access_key_id 'AKID', secret_access_key 'SECRET', session_token 'TOKEN');

-- table options
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv OPTIONS (partition_key 'a');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv OPTIONS (table 'T', tabel 'T');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', shard_strategy 'modulo');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', shard_hash 'crc32');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', shards '0');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', shards '4');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}#{shard');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a:x5}');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}{b}');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}#{shard}');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}',
           shard_strategy 'random', shards '4');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}#{shard}',
           shard_strategy 'calculated', shards '4');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', sort_key 'sk',
           sort_key_format '{a}#{shard}');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format 'x#{shard}',
           shard_strategy 'range', shard_by 'a', shards '3',
           range_boundaries '["", "m"]');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format 'x#{shard}',
           shard_strategy 'range', shard_by 'a',
           range_boundaries '["", "m", "f"]');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format 'x#{shard}',
           shard_strategy 'range', shard_by 'a', range_boundaries '["", 7]');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format 'x#{shard}',
           shard_strategy 'range', shard_by 'a', range_boundaries 'a, b');
-- a key below the first boundary would have no shard
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format 'x#{shard}',
           shard_strategy 'range', shard_by 'a', range_boundaries '["b", "m"]');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}_{shard}',
           shard_strategy 'dynamic');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', index 'byA', insert_mode 'upsert');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', insert_mode 'replace');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', batch_size '0');

-- checks that need the columns, made when the table is declared
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{game}#{shard}',
           shard_strategy 'random', shards '4');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{a}#{shard}',
           shard_strategy 'calculated', shards '4', shard_by 'a, player');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');
CREATE FOREIGN TABLE t_bad (pk text[]) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');
CREATE FOREIGN TABLE t_bad (pk text, doc int OPTIONS (attribute '*')) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');
CREATE FOREIGN TABLE t_bad (pk text, n bytea OPTIONS (ddb_type 'N')) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');
CREATE FOREIGN TABLE t_bad (pk text, n text OPTIONS (ddb_type 'X')) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');
CREATE FOREIGN TABLE t_bad (pk text, n text OPTIONS (attr 'x')) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk');

-- a good table, then changes that would break it
CREATE FOREIGN TABLE t_good (
  game_id text, player_id text, score bigint,
  achieved timestamptz OPTIONS (ddb_type 'N'),
  item jsonb OPTIONS (attribute '*')
) SERVER opt_srv OPTIONS (
  table 'Leaderboards',
  partition_key 'pk', partition_key_format '{game_id}#{shard}',
  sort_key 'sk', sort_key_format '{score:020}#{player_id}',
  shards '10', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32');
ALTER FOREIGN TABLE t_good DROP COLUMN player_id;
ALTER FOREIGN TABLE t_good OPTIONS (SET shard_hash 'sha1');
ALTER FOREIGN TABLE t_good OPTIONS (SET shards 'ten');
ALTER FOREIGN TABLE t_good OPTIONS (SET shard_by 'nobody');
ALTER FOREIGN TABLE t_good ALTER COLUMN score OPTIONS (ADD ddb_type 'BOOL');
ALTER FOREIGN TABLE t_good OPTIONS (SET shards '20');
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 't_good'::regclass;


-- the hint lists the valid options
\set VERBOSITY default
CREATE USER MAPPING FOR PUBLIC SERVER opt_srv OPTIONS (user 'x');
CREATE SERVER bad FOREIGN DATA WRAPPER shard_fdw OPTIONS (host 'localhost');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv OPTIONS (table 'T', shard_hash 'crc32');

-- each with a fitting SQLSTATE: an unknown option HV00D, a bad value
-- 22023, a column that does not exist 42703
\set VERBOSITY sqlstate
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv OPTIONS (table 'T', tabel 'T');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv OPTIONS (table 'T', shards 'x');
CREATE FOREIGN TABLE t_bad (a text) SERVER opt_srv
  OPTIONS (table 'T', partition_key 'pk', partition_key_format '{b}');
\set VERBOSITY default

DROP SERVER opt_srv CASCADE;

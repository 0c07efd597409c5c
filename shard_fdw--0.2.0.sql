/* shard_fdw--0.2.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shard_fdw" to load this file. \quit

CREATE FUNCTION shard_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION shard_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER shard_fdw
  HANDLER shard_fdw_handler
  VALIDATOR shard_fdw_validator;

-- Checks what the validator cannot see: the columns a foreign table's
-- options refer to.  Run by the event trigger below.
CREATE FUNCTION shard_fdw_check_table(regclass)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION shard_fdw_check_ddl()
RETURNS event_trigger
LANGUAGE plpgsql AS
$$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN SELECT DISTINCT objid FROM pg_event_trigger_ddl_commands()
             WHERE classid = 'pg_class'::regclass
               AND object_type IN ('foreign table', 'foreign table column')
  LOOP
    PERFORM @extschema@.shard_fdw_check_table(cmd.objid::regclass);
  END LOOP;
END
$$;

-- ALTER TABLE works on foreign tables too, and RENAME COLUMN reports the
-- column; IMPORT FOREIGN SCHEMA reports the tables it creates.
CREATE EVENT TRIGGER shard_fdw_check_ddl ON ddl_command_end
  WHEN TAG IN ('CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE', 'ALTER TABLE',
               'IMPORT FOREIGN SCHEMA')
  EXECUTE FUNCTION shard_fdw_check_ddl();

-- Refuses, before an ALTER runs, what its end cannot tell from a sound
-- table: renaming a column an option names, and a new type that stores a
-- key or shard_by column's values as another DynamoDB type.
CREATE FUNCTION shard_fdw_check_alter()
RETURNS event_trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE EVENT TRIGGER shard_fdw_check_alter ON ddl_command_start
  WHEN TAG IN ('ALTER FOREIGN TABLE', 'ALTER TABLE')
  EXECUTE FUNCTION shard_fdw_check_alter();

-- Learns again the secondary indexes of the DynamoDB table a foreign table
-- reads (option secondary_indexes), and lists them, each with why queries
-- do not read it (NULL when they may).
CREATE FUNCTION shard_fdw_refresh_indexes(ftable regclass,
  OUT index_name text, OUT kind text, OUT partition_key text,
  OUT sort_key text, OUT projection text, OUT unusable text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- One DynamoDB API call through a server, with the caller's user mapping.
CREATE FUNCTION shard_fdw_request(server name, operation text, body jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Close the cached connections of this backend.
CREATE FUNCTION shard_fdw_disconnect_all()
RETURNS bool
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- This backend's cumulative DynamoDB counters.
CREATE FUNCTION shard_fdw_stats(
  OUT requests bigint, OUT attempts bigint, OUT retries bigint,
  OUT throttles bigint, OUT consumed_capacity double precision,
  OUT metadata_created bigint, OUT key_throttles bigint,
  OUT shard_growths bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Where a row with these column values would be written.
CREATE FUNCTION shard_fdw_key(ftable regclass, column_values jsonb,
  OUT shard int, OUT partition_key text, OUT sort_key text)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Items per shard of one logical key, and each shard's share.
CREATE FUNCTION shard_fdw_shard_counts(ftable regclass, column_values jsonb,
  OUT shard int, OUT partition_key text, OUT items bigint, OUT share float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- The shard count that keeps every shard under a partition's limits.
CREATE FUNCTION shard_fdw_recommend_shards(writes_per_second float8,
  reads_per_second float8, item_bytes int,
  consistent_reads bool DEFAULT false, headroom float8 DEFAULT 0.7)
RETURNS int
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE;

-- range_boundaries computed from a sample of keys.
CREATE FUNCTION shard_fdw_range_boundaries(sample text[], shards int,
  normalize_keys bool DEFAULT true, prefix_chars int DEFAULT 20)
RETURNS text[]
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE;

-- The dynamic sharding metadata item of one logical key.
CREATE FUNCTION shard_fdw_metadata(ftable regclass, column_values jsonb,
  OUT base_key text, OUT number_of_shards int, OUT last_updated bigint,
  OUT shard_history text[])
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Moves the items of a foreign table's earlier layouts (see option
-- layout_history) to the keys its newest layout gives: those of the
-- partition column_values names, or of every item; a run over every item
-- drops the layouts nothing remains in.
CREATE FUNCTION shard_fdw_reshard(ftable regclass, column_values jsonb DEFAULT NULL,
                                  OUT moved bigint, OUT remaining bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C;

-- ---------------------------------------------------------------------
-- shard_fdw_stat: what every backend's requests to DynamoDB came to, per
-- database, foreign table and server, in shared memory, which needs
-- shard_fdw in shared_preload_libraries (without it, reading the view
-- says so).  shard_fdw--0.1--0.2.0.sql creates the same.
-- ---------------------------------------------------------------------

-- The counters themselves, by oid; the view names them.
CREATE FUNCTION shard_fdw_stat_rows(
  OUT dbid oid, OUT relid oid, OUT serverid oid,
  OUT requests bigint, OUT items_read bigint, OUT items_returned bigint,
  OUT read_units double precision, OUT write_units double precision,
  OUT throttles bigint, OUT retries bigint, OUT errors bigint,
  OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- A row per database, foreign table and server; the table and server are
-- named in the current database only (relid and serverid say which in
-- another), the table is NULL for requests of no table, and a row whose
-- dbid, relid and serverid are all 0 holds what found no room (see
-- shard_fdw.stat_max).
CREATE VIEW shard_fdw_stat AS
  SELECT s.dbid, d.datname AS database, s.relid, c.oid::regclass AS ftable,
         s.serverid, f.srvname AS server,
         s.requests, s.items_read, s.items_returned, s.read_units, s.write_units,
         s.throttles, s.retries, s.errors, s.stats_reset
    FROM shard_fdw_stat_rows() s
    LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid
    LEFT JOIN pg_catalog.pg_class c
      ON c.oid = s.relid AND d.datname = pg_catalog.current_database()
    LEFT JOIN pg_catalog.pg_foreign_server f
      ON f.oid = s.serverid AND d.datname = pg_catalog.current_database();

GRANT SELECT ON shard_fdw_stat TO PUBLIC;

-- Empty the counters of every database; returns when.
CREATE FUNCTION shard_fdw_stat_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION shard_fdw_stat_reset() FROM PUBLIC;

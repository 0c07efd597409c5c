/* shard_fdw--0.1--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shard_fdw UPDATE TO '0.2.0'" to load this file. \quit

-- The other changes of 0.2.0 are in the library, which the objects 0.1
-- created call as they are (a restore asks nothing of DynamoDB or of the
-- host's AWS settings).

-- Learns again the secondary indexes of the DynamoDB table a foreign table
-- reads (option secondary_indexes), and lists them, each with why queries
-- do not read it (NULL when they may).
CREATE FUNCTION shard_fdw_refresh_indexes(ftable regclass,
  OUT index_name text, OUT kind text, OUT partition_key text,
  OUT sort_key text, OUT projection text, OUT unusable text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- ---------------------------------------------------------------------
-- shard_fdw_stat: what every backend's requests to DynamoDB came to, per
-- database, foreign table and server, in shared memory, which needs
-- shard_fdw in shared_preload_libraries (without it, reading the view
-- says so).
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

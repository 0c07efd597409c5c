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

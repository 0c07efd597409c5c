/* shard_fdw--0.1--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shard_fdw UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0 changes no SQL object: its changes are in the library, which the
-- objects 0.1 created call as they are (a restore asks nothing of DynamoDB
-- or of the host's AWS settings).

-- retries(): this backend's retries so far; new_retries(): those since the
-- mark, which starts here and which reset_mark() moves to now.
CREATE OR REPLACE FUNCTION retries() RETURNS bigint LANGUAGE sql
  AS $$ SELECT retries FROM shard_fdw_stats() $$;
CREATE TEMP TABLE mark AS SELECT retries() AS before;
CREATE OR REPLACE FUNCTION new_retries() RETURNS bigint LANGUAGE sql
  AS $$ SELECT retries() - before FROM mark $$;
CREATE OR REPLACE FUNCTION reset_mark() RETURNS void LANGUAGE sql
  AS $$ UPDATE mark SET before = retries() $$;

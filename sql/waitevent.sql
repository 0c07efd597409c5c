-- While a backend waits for DynamoDB, pg_stat_activity shows a wait event
-- of type Extension: "Extension" itself before PostgreSQL 17, and from 17
-- on one named for what it waits for: ShardFdwRequest for answers,
-- ShardFdwBudget for a capacity budget.
\ir sql/include/server.sql
SELECT ddb_create_table('wait_tab', 'k', 'n:N') AS status;
CREATE FOREIGN TABLE wait_kv (k text, n int, pad text)
  SERVER ddb OPTIONS (table 'wait_tab', partition_key 'k', sort_key 'n');
CREATE FOREIGN TABLE wait_paced (k text, n int, pad text)
  SERVER ddb OPTIONS (table 'wait_tab', partition_key 'k', sort_key 'n',
                      max_read_units_per_second '2');
INSERT INTO wait_kv SELECT 'a', i, repeat('x', 3900) FROM generate_series(1, 10) i;
-- the wait event of another session whose query holds marker, as soon as
-- it shows one of type Extension (10 s at most), and then the end of that
-- query
CREATE FUNCTION seen_wait(marker text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  seen text;
BEGIN
  FOR i IN 1..1000 LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT a.wait_event INTO seen FROM pg_stat_activity a
     WHERE a.query LIKE '%' || marker || '%' AND a.pid <> pg_backend_pid()
       AND a.wait_event_type = 'Extension';
    EXIT WHEN seen IS NOT NULL;
    PERFORM pg_sleep(0.01);
  END LOOP;
  FOR i IN 1..2000 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity a
                           WHERE a.query LIKE '%' || marker || '%'
                             AND a.pid <> pg_backend_pid() AND a.state = 'active');
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN seen;
END
$$;
-- what the event is called on this version
CREATE FUNCTION expected_wait(name text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN current_setting('server_version_num')::int >= 170000
              THEN name ELSE 'Extension' END
$$;
SELECT current_database() AS db \gset
\setenv PGDATABASE :db
-- an answer the proxy drips over three seconds
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "slow", "action": "Query", "table": "wait_tab", "delay_ms": 3000}'
\! psql -X -q -c "SELECT count(*) /* wait_answer */ FROM (SELECT * FROM wait_kv WHERE k = 'a' OFFSET 0) s" >/dev/null 2>&1 &
SELECT seen_wait('/* wait_answer */') = expected_wait('ShardFdwRequest') AS waits_for_answers;
-- a read of about 5 units under a budget of 2 a second is held back
\! psql -X -q -c "SELECT count(*) /* wait_budget */ FROM (SELECT * FROM wait_paced WHERE k = 'a' OFFSET 0) s" >/dev/null 2>&1 &
SELECT seen_wait('/* wait_budget */') = expected_wait('ShardFdwBudget') AS waits_for_budget;
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
SELECT ddb_delete_table('wait_tab');
DROP SERVER ddb CASCADE;

-- PostgreSQL's parallel workers: a Scan of the whole table is shared out
-- among them, each segment read once by whoever claims it, under a Gather;
-- aggregates become Partial and Finalize, joins run in the workers.  The
-- planner gives the table as many workers as a heap of its rows, counted
-- and measured by ANALYZE, would get.  Keyed reads, tables with a read
-- budget and tables whose items move between layouts stay in one backend.
-- Results are checked against a local copy.
\ir sql/include/server.sql
\ir sql/include/same_rows.sql
\set lb_table ParallelBoards
\ir sql/include/leaderboard.sql
CREATE TABLE local_lb AS
  SELECT 'g' || (i % 3) AS game_id, 'p' || i AS player_id,
         ((i * 7919) % 5000)::bigint AS score
    FROM generate_series(1, 3000) i;
INSERT INTO lb SELECT * FROM local_lb;
CREATE TABLE games AS
  SELECT 'g' || i AS game_id, 'Game ' || i AS title FROM generate_series(0, 3) i;
ANALYZE local_lb, games;

\ir sql/include/explain_analyze.sql
-- explain_parallel(query): explain_analyze(query) without the rows and
-- loops of each node, which depend on how the participants shared the
-- segments
CREATE FUNCTION explain_parallel(query text) RETURNS SETOF text
LANGUAGE sql AS $$
  SELECT regexp_replace(line, ' \(actual rows=[0-9.]+ loops=\d+\)', '')
    FROM explain_analyze(query) AS line
$$;

-- the workers planned go by the table's size: before ANALYZE, 10000 rows
-- are assumed; after it, the rows counted, as many as the local copy gets
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = '8kB';
SET max_parallel_workers_per_gather = 8;
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb;
ANALYZE lb;
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb;
EXPLAIN (COSTS OFF) SELECT sum(score) FROM local_lb;
-- a small table gets no worker at the default settings
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb;

-- parallel plans wherever they may be: the workers share the segments
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT sum(score), avg(score) FROM lb;
-- every segment read once: 16 (max_concurrency) for each of 3 participants
SELECT explain_parallel($$SELECT sum(score), avg(score) FROM lb$$);
SELECT same_rows($$SELECT sum(score), avg(score), min(player_id), max(player_id), count(*) FROM %s$$,
                 'lb', 'local_lb');
-- grouped, with a filter DynamoDB evaluates
EXPLAIN (COSTS OFF)
  SELECT game_id, sum(score), count(*) FROM lb WHERE score > 2500 GROUP BY game_id;
SELECT same_rows($$SELECT game_id, sum(score), count(*) FROM %s WHERE score > 2500
                   GROUP BY game_id ORDER BY game_id$$, 'lb', 'local_lb');
-- the rows themselves, each once
SELECT same_rows($$SELECT * FROM %s ORDER BY player_id$$, 'lb', 'local_lb');
-- a join in the workers, over their share of the Scan
EXPLAIN (COSTS OFF)
  SELECT g.title, sum(l.score) FROM lb l JOIN games g USING (game_id) GROUP BY g.title;
SELECT same_rows($$SELECT g.title, sum(l.score), count(*) FROM %s l JOIN games g USING (game_id)
                   GROUP BY g.title ORDER BY g.title$$, 'lb', 'local_lb');

-- four workers: more segments, each still read once
SET max_parallel_workers_per_gather = 4;
SELECT explain_parallel($$SELECT sum(score) FROM lb$$);
SELECT same_rows($$SELECT sum(score), count(*) FROM %s$$, 'lb', 'local_lb');

-- a Gather run again (the inner side of a nested loop) hands every
-- segment out again each time
CREATE FUNCTION restricted_id(int) RETURNS int LANGUAGE plpgsql PARALLEL RESTRICTED
  AS $$BEGIN RETURN $1; END$$;
SET max_parallel_workers_per_gather = 2;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT explain_parallel($$SELECT count(*)
    FROM (SELECT restricted_id(x) AS x FROM generate_series(0, 2) x) v
    JOIN lb ON lb.score % 3 = v.x$$);
SELECT same_rows($$SELECT v.x, count(*)
    FROM (SELECT restricted_id(x) AS x FROM generate_series(0, 2) x) v
    JOIN %s t ON t.score %% 3 = v.x GROUP BY v.x ORDER BY v.x$$, 'lb', 'local_lb');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- without the leader reading: the workers read every segment
SET parallel_leader_participation = off;
SELECT same_rows($$SELECT sum(score), count(*) FROM %s$$, 'lb', 'local_lb');
RESET parallel_leader_participation;

-- keyed reads are not shared out
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb WHERE game_id = 'g1';
SELECT same_rows($$SELECT sum(score) FROM %s WHERE game_id = 'g1'$$, 'lb', 'local_lb');
-- nor UPDATE's scan
EXPLAIN (COSTS OFF) UPDATE lb SET score = score WHERE score < 0;

-- a table with a read budget (a pace or a cap) keeps to it in one backend
ALTER FOREIGN TABLE lb OPTIONS (ADD max_read_units_per_second '100000');
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb;
ALTER FOREIGN TABLE lb OPTIONS (DROP max_read_units_per_second);
ALTER FOREIGN TABLE lb OPTIONS (ADD max_read_units_per_statement '100000');
EXPLAIN (COSTS OFF) SELECT sum(score) FROM lb;
ALTER FOREIGN TABLE lb OPTIONS (DROP max_read_units_per_statement);

-- an error while reading reaches the client, whichever participant read
ALTER FOREIGN TABLE lb ADD COLUMN shard_no int OPTIONS (attribute 'pk');
\set VERBOSITY sqlstate
SELECT sum(shard_no) FROM lb;
\set VERBOSITY default
ALTER FOREIGN TABLE lb DROP COLUMN shard_no;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP FOREIGN TABLE lb;
DROP TABLE local_lb, games;
DROP FUNCTION explain_parallel(text), restricted_id(int), same_rows(text, text, text);
SELECT ddb_delete_table(:'lb_table') AS deleted;
DROP SERVER ddb CASCADE;

-- Reading an unsharded table: Scan without a key condition, Query when the
-- partition key is fixed, only the needed attributes asked for, and pages
-- followed to the end.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('scan_tab', 'game', 'seq:N') AS status;

CREATE FOREIGN TABLE events (game text, seq int, player text, points int, pad text)
  SERVER ddb OPTIONS (table 'scan_tab', partition_key 'game', sort_key 'seq');
CREATE TABLE local_events AS
  SELECT 'g' || (i % 3) AS game, i AS seq, 'p' || (i % 17) AS player,
         (i * 7919) % 1000 AS points, repeat('x', 2000) AS pad
    FROM generate_series(1, 2400) i;
INSERT INTO events SELECT * FROM local_events;

-- a full Scan, in parallel segments, every page followed
SELECT count(*), sum(points), count(DISTINCT player) FROM events;
SELECT count(*), sum(points), count(DISTINCT player) FROM local_events;
EXPLAIN (VERBOSE, COSTS OFF) SELECT player, points FROM events;

-- a Query of one partition: 800 items of about 2 KB take two pages
EXPLAIN (VERBOSE, COSTS OFF) SELECT seq, points FROM events WHERE game = 'g1';
SELECT explain_analyze($$SELECT seq, points FROM events WHERE game = 'g1'$$);
SELECT count(*), min(seq), max(seq), sum(points) FROM events WHERE game = 'g1';
SELECT count(*), min(seq), max(seq), sum(points) FROM local_events WHERE game = 'g1';

-- the partition key given as a parameter of a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE by_game(text) AS SELECT count(*) FROM events WHERE game = $1;
EXPLAIN (COSTS OFF) EXECUTE by_game('g2');
EXECUTE by_game('g2');
EXECUTE by_game('nope');
EXECUTE by_game(NULL);
RESET plan_cache_mode;

-- conditions on other columns are checked locally
SELECT seq, player, points FROM events
 WHERE game = 'g0' AND points > 990 ORDER BY seq;
SELECT seq, player, points FROM local_events
 WHERE game = 'g0' AND points > 990 ORDER BY seq;

-- a cross-type or non-equality condition on the key does not make a Query
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE game > 'g1';
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE game = 'g1' COLLATE "C";

-- a join with a local table
CREATE TABLE games (game text PRIMARY KEY, title text);
INSERT INTO games VALUES ('g0', 'Zero'), ('g2', 'Two');
SELECT g.title, count(*) FROM games g JOIN events e USING (game)
 GROUP BY g.title ORDER BY g.title;

-- the whole row, and a cursor read in parts
SELECT e FROM events e WHERE game = 'g2' AND seq = 2;
BEGIN;
DECLARE c CURSOR FOR SELECT seq FROM events WHERE game = 'g0' ORDER BY seq;
FETCH 3 FROM c;
FETCH 2 FROM c;
CLOSE c;
COMMIT;

DROP TABLE games, local_events;
DROP FOREIGN TABLE events;
SELECT ddb_delete_table('scan_tab') AS deleted;
DROP SERVER ddb CASCADE;

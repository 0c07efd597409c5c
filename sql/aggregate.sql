-- Aggregates DynamoDB computes: count(*) over a keyed read is a Query per
-- shard with Select COUNT (a player's rank is a count with a sort key
-- bound), min and max of the field leading the sort key a Query per shard
-- with Limit 1 in the right direction.  Anything DynamoDB cannot evaluate
-- exactly stays local.  Results are checked against a local copy.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\ir sql/include/same_rows.sql
\set lb_table AggBoards
\ir sql/include/leaderboard.sql
ALTER FOREIGN TABLE lb ADD COLUMN level int, ADD COLUMN ratio numeric;
CREATE TABLE local_lb AS
  SELECT 'g' || (i % 3) AS game_id, 'p' || i AS player_id,
         ((i * 7919) % 5000)::bigint AS score,
         CASE WHEN i % 5 > 0 THEN i % 7 END AS level,
         CASE WHEN i % 4 > 0 THEN (i % 9) / 4.0 END AS ratio
    FROM generate_series(1, 900) i;
INSERT INTO lb SELECT * FROM local_lb;

-- count(*) of a game: Select COUNT on every shard, no item comes back
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g1';
SELECT explain_analyze($$SELECT count(*) FROM lb WHERE game_id = 'g1'$$);
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1'$$, 'lb', 'local_lb');
-- a player's rank: the count above the player's score, a sort key bound
-- ("> v" is sk >= the key of v + 1, exact for the zero-padded field)
EXPLAIN (COSTS OFF)
  SELECT count(*) + 1 AS rank FROM lb WHERE game_id = 'g1' AND score > 2500;
SELECT explain_analyze($$SELECT count(*) + 1 AS rank FROM lb
   WHERE game_id = 'g1' AND score > 2500$$);
SELECT s AS score,
       same_rows(format($$SELECT count(*) + 1 FROM %%s WHERE game_id = 'g1' AND score > %s$$, s),
                 'lb', 'local_lb') AS gt,
       same_rows(format($$SELECT count(*) FROM %%s WHERE game_id = 'g1' AND score >= %s$$, s),
                 'lb', 'local_lb') AS ge,
       same_rows(format($$SELECT count(*) FROM %%s WHERE game_id = 'g1' AND score < %s$$, s),
                 'lb', 'local_lb') AS lt,
       same_rows(format($$SELECT count(*) FROM %%s WHERE game_id = 'g1' AND score <= %s$$, s),
                 'lb', 'local_lb') AS le
  FROM (SELECT score AS s FROM local_lb WHERE game_id = 'g1' ORDER BY player_id LIMIT 3) x;
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1' AND score BETWEEN 1000 AND 2000$$,
                 'lb', 'local_lb');
-- equality on the leading field: begins_with its text, which takes the
-- place of any bound, so a bound beside it stays local
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g1' AND score = 2919;
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1' AND score = 2919$$,
                 'lb', 'local_lb');
EXPLAIN (COSTS OFF)
  SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1' AND score = 2919 AND score > 3000$$,
                 'lb', 'local_lb');
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1' AND score = 2919 AND score > 3000$$,
                 'lb', 'local_lb');
-- a filter DynamoDB evaluates is counted by DynamoDB too
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g2' AND level = 3;
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g2' AND level = 3$$, 'lb', 'local_lb');
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g2' AND level IS NULL$$, 'lb', 'local_lb');
-- a filter that may not reach DynamoDB when the scan runs (a NaN, which
-- DynamoDB cannot hold, is checked locally; a parameter could be one)
-- keeps the count local
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g2' AND ratio < 'NaN';
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g2' AND ratio < 'NaN'$$,
                 'lb', 'local_lb');
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g2' AND ratio < 1.5$$,
                 'lb', 'local_lb');
SET plan_cache_mode = force_generic_plan;
PREPARE rank(text, bigint) AS SELECT count(*) + 1 FROM lb WHERE game_id = $1 AND score > $2;
PREPARE filtered(text, numeric) AS SELECT count(*) FROM lb WHERE game_id = $1 AND ratio < $2;
EXPLAIN (COSTS OFF) EXECUTE rank('g1', 2500);
EXPLAIN (COSTS OFF) EXECUTE filtered('g1', 'NaN');
EXECUTE rank('g1', 2500);
SELECT count(*) + 1 FROM local_lb WHERE game_id = 'g1' AND score > 2500;
EXECUTE filtered('g1', 'NaN');
SELECT count(*) FROM local_lb WHERE game_id = 'g1' AND ratio < 'NaN';
RESET plan_cache_mode;
-- one player: one shard, but the player is only its shard's choice, not
-- part of the key condition, so the count stays local
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g1' AND player_id = 'p7';
SELECT same_rows($$SELECT count(*) FROM %s WHERE game_id = 'g1' AND player_id = 'p7'$$,
                 'lb', 'local_lb');
-- nothing matches: a count of 0
SELECT count(*) FROM lb WHERE game_id = 'nope';
SELECT count(*) FROM lb WHERE game_id = 'g1' AND score < 0;

-- min and max of the leading field: one item per shard, in each direction
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT min(score), max(score) FROM lb WHERE game_id = 'g0';
SELECT explain_analyze($$SELECT max(score) FROM lb WHERE game_id = 'g0'$$);
SELECT same_rows($$SELECT count(*), min(score), max(score) FROM %s WHERE game_id = 'g0'$$,
                 'lb', 'local_lb');
SELECT same_rows($$SELECT min(score), max(score) FROM %s
   WHERE game_id = 'g0' AND score > 100 AND score < 4000$$, 'lb', 'local_lb');
SELECT min(score), max(score), count(*) FROM lb WHERE game_id = 'nope';
-- per game, as a correlated subquery (rescanned with each game)
SELECT same_rows($$SELECT g, (SELECT count(*) FROM %1$s WHERE game_id = g),
                          (SELECT max(score) FROM %1$s WHERE game_id = g)
                     FROM (VALUES ('g0'), ('g1'), ('g2'), ('g9')) v(g)$$, 'lb', 'local_lb');

-- grouped by columns the key condition fixes: one group, or none when
-- nothing matches
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT game_id, count(*), max(score) FROM lb WHERE game_id = 'g2' GROUP BY game_id;
SELECT g AS game,
       same_rows(format($$SELECT array_agg(x::text) FROM (SELECT game_id, count(*), max(score)
                         FROM %%s WHERE game_id = %L GROUP BY game_id) x$$, g),
                 'lb', 'local_lb') AS same,
       same_rows(format($$SELECT array_agg(x::text) FROM (SELECT game_id, min(score) FROM %%s
                         WHERE game_id = %L AND score > 4000 GROUP BY 1) x$$, g),
                 'lb', 'local_lb') AS same_min
  FROM unnest(ARRAY['g0', 'g2', 'g9']) g;
EXPLAIN (COSTS OFF)
  SELECT game_id, count(*) FROM lb WHERE game_id IN ('g1', 'g2') GROUP BY game_id;

-- what stays local: conditions DynamoDB cannot evaluate, a filter under
-- min or max (DynamoDB would filter after the Limit), columns that do not
-- lead the sort key, grouping, other aggregates, a Scan
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g1' AND score % 2 = 0;
EXPLAIN (COSTS OFF) SELECT max(score) FROM lb WHERE game_id = 'g1' AND level = 3;
EXPLAIN (COSTS OFF) SELECT max(level) FROM lb WHERE game_id = 'g1';
EXPLAIN (COSTS OFF) SELECT max(player_id) FROM lb WHERE game_id = 'g1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb WHERE game_id = 'g1' GROUP BY level;
EXPLAIN (COSTS OFF) SELECT count(level) FROM lb WHERE game_id = 'g1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM lb;
SELECT same_rows($$SELECT count(*), max(score) FROM %s WHERE game_id = 'g1' AND score %% 2 = 0$$,
                 'lb', 'local_lb');
SELECT same_rows($$SELECT max(score) FROM %s WHERE game_id = 'g1' AND level = 3$$,
                 'lb', 'local_lb');
SELECT same_rows($$SELECT count(*) FROM %s$$, 'lb', 'local_lb');

-- a text sort key of its own: min and max under a byte-order collation
SELECT ddb_create_table('AggNames', 'k', 'name') AS status;
CREATE FOREIGN TABLE names (k text, name text)
  SERVER ddb OPTIONS (table 'AggNames', partition_key 'k', sort_key 'name');
CREATE TABLE local_names (k text, name text);
INSERT INTO local_names VALUES ('a', 'b'), ('a', 'B'), ('a', 'é'), ('a', 'e');
INSERT INTO names SELECT * FROM local_names;
EXPLAIN (COSTS OFF) SELECT min(name), max(name) FROM names WHERE k = 'a';
EXPLAIN (COSTS OFF) SELECT max(name COLLATE "en-x-icu") FROM names WHERE k = 'a';
SELECT same_rows($$SELECT min(name), max(name), max(name COLLATE "en-x-icu") FROM %s
   WHERE k = 'a'$$, 'names', 'local_names');

-- Select COUNT answers page by page (1 MB of items each): every page counts
CREATE FOREIGN TABLE wide (k text, name text, pad text)
  SERVER ddb OPTIONS (table 'AggNames', partition_key 'k', sort_key 'name',
                      insert_mode 'upsert');
CREATE TABLE local_wide AS
  SELECT 'w' AS k, 'n' || i AS name, repeat('x', 1000) AS pad FROM generate_series(1, 2500) i;
INSERT INTO wide SELECT * FROM local_wide;
SELECT explain_analyze($$SELECT count(*) FROM wide WHERE k = 'w'$$);
SELECT same_rows($$SELECT count(*) FROM %s WHERE k = 'w'$$, 'wide', 'local_wide');

DROP FOREIGN TABLE lb, names, wide;
DROP TABLE local_lb, local_names, local_wide;
SELECT ddb_delete_table('AggBoards') AS deleted;
SELECT ddb_delete_table('AggNames') AS deleted;
DROP FUNCTION same_rows(text, text, text);
DROP SERVER ddb CASCADE;

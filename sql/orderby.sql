-- ORDER BY on several columns that follow the fields of the sort key
-- template: pushed down as the shards' merge in sort key order with each
-- shard's Limit, where the order of the key's bytes is PostgreSQL's order;
-- a prefix of the ORDER BY claimed alone leaves PostgreSQL an Incremental
-- Sort over it.  Results are checked against a local copy of the rows.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\ir sql/include/same_rows.sql
\set lb_table OrderBoards
\ir sql/include/leaderboard.sql
-- about ten players per score; names whose byte order and English order
-- differ ('P' and 'p', 'é' and 'e')
CREATE TABLE local_lb AS
  SELECT 'g' AS game_id, (ARRAY['p', 'P', 'é', 'e'])[i % 4 + 1] || i AS player_id,
         ((i * 7) % 97)::bigint AS score
    FROM generate_series(1, 1000) i;
INSERT INTO local_lb VALUES ('h', 'x', 1), ('h', 'y', 1);
INSERT INTO lb SELECT * FROM local_lb;

-- the whole ORDER BY follows the template: no Sort, each shard limited
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id DESC LIMIT 100;
SELECT explain_analyze($$SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id DESC LIMIT 100$$);
SELECT same_rows($$SELECT player_id, score FROM %s
   WHERE game_id = 'g' ORDER BY score DESC, player_id DESC LIMIT 100$$, 'lb', 'local_lb');
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score, player_id LIMIT 5 OFFSET 30;
SELECT same_rows($$SELECT player_id, score FROM %s
   WHERE game_id = 'g' ORDER BY score, player_id LIMIT 5 OFFSET 30$$, 'lb', 'local_lb');
SELECT same_rows($$SELECT * FROM %s
   WHERE game_id = 'g' ORDER BY score DESC, player_id DESC$$, 'lb', 'local_lb');
-- with a sort key condition
SELECT same_rows($$SELECT player_id, score FROM %s
   WHERE game_id = 'g' AND score < 50 ORDER BY score DESC, player_id DESC LIMIT 20$$,
   'lb', 'local_lb');

-- byte-order collations: "C", "POSIX", C.utf8, ucs_basic, and the
-- database's default (this cluster's C.UTF-8)
SELECT c AS collation,
       (SELECT count(*) FROM (SELECT 1 FROM pg_collation WHERE collname = c) x) AS present
  FROM unnest(ARRAY['C', 'POSIX', 'C.utf8', 'ucs_basic']) c;
SELECT datcollate FROM pg_database WHERE datname = current_database();
EXPLAIN (COSTS OFF)
  SELECT player_id FROM lb
   WHERE game_id = 'g' ORDER BY score, player_id COLLATE "POSIX" LIMIT 10;
EXPLAIN (COSTS OFF)
  SELECT player_id FROM lb
   WHERE game_id = 'g' ORDER BY score, player_id COLLATE "C.utf8" LIMIT 10;
SELECT c AS collation,
       same_rows(format($$SELECT player_id, score FROM %%s WHERE game_id = 'g'
                         ORDER BY score DESC, player_id COLLATE %I DESC LIMIT 25$$, c),
                 'lb', 'local_lb') AS same
  FROM unnest(ARRAY['C', 'POSIX', 'C.utf8', 'ucs_basic', 'default']) c;

-- directions that differ: the first key alone is claimed
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id LIMIT 50;
SELECT same_rows($$SELECT player_id, score FROM %s
   WHERE game_id = 'g' ORDER BY score DESC, player_id LIMIT 50$$, 'lb', 'local_lb');

-- a tie-breaker under a linguistic collation: the score order is claimed
-- and PostgreSQL sorts each score's players; the read stays bounded by
-- the LIMIT, and the players tied on the last score are all read (no
-- ANALYZE has run: a partition of 10 shards is taken to hold 1,000 items)
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id COLLATE "en-x-icu" DESC LIMIT 100;
SELECT explain_analyze($$SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id COLLATE "en-x-icu" DESC LIMIT 100$$);
SELECT n AS "limit", same_rows(format($$SELECT player_id, score FROM %%s WHERE game_id = 'g'
                         ORDER BY score DESC, player_id COLLATE "en-x-icu" DESC LIMIT %s$$, n),
                 'lb', 'local_lb') AS same
  FROM unnest(ARRAY[1, 7, 13, 50, 100]) n;
SELECT same_rows($$SELECT player_id, score FROM %s WHERE game_id = 'g'
   ORDER BY score, player_id COLLATE "en-x-icu" LIMIT 11 OFFSET 9$$, 'lb', 'local_lb');
-- a LIMIT above the rows expected: each shard's Limit grows with it, so
-- the merge reads each shard's expected 100 items in one page, as the
-- plain read would, and PostgreSQL still sorts only each score's players
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM lb
   WHERE game_id = 'g' ORDER BY score DESC, player_id COLLATE "en-x-icu" DESC LIMIT 2000;

-- a zero-padded field narrower than its type's values: a wider value is
-- written whole ("100000" under {score:05}) and sorts among the others by
-- its first digits, so no order is claimed, no bound goes into the key
-- condition and min, max and count stay with PostgreSQL
CREATE FOREIGN TABLE lb_narrow (game_id text, player_id text, score bigint)
  SERVER ddb OPTIONS (table 'OrderBoards', partition_key 'pk', partition_key_format '{game_id}',
                      sort_key 'sk', sort_key_format '{score:05}#{player_id}');
EXPLAIN (COSTS OFF)
  SELECT player_id FROM lb_narrow WHERE game_id = 'h' ORDER BY score, player_id LIMIT 10;
INSERT INTO lb_narrow VALUES ('n', 'p1', 99999), ('n', 'p2', 100000), ('n', 'p3', 5);
SELECT shard_fdw_key('lb_narrow', '{"game_id": "n", "player_id": "p2", "score": 100000}');
SELECT (SELECT array_agg(score) FROM (SELECT score FROM lb_narrow WHERE game_id = 'n'
                                      ORDER BY score) s) AS ordered,
       (SELECT array_agg(score) FROM (SELECT score FROM lb_narrow WHERE game_id = 'n'
                                      ORDER BY score DESC LIMIT 2) s) AS top2;
SELECT max(score), min(score), count(*) FILTER (WHERE score >= 50000) AS above,
       (SELECT count(*) FROM lb_narrow WHERE game_id = 'n' AND score >= 50000) AS counted
  FROM lb_narrow WHERE game_id = 'n';

-- a sort key column of its own: its order under the ORDER BY's collation
-- counts, not the column's
SELECT ddb_create_table('OrderNames', 'k', 'name') AS status;
CREATE FOREIGN TABLE names (k text, name text COLLATE "C")
  SERVER ddb OPTIONS (table 'OrderNames', partition_key 'k', sort_key 'name');
CREATE TABLE local_names (k text, name text COLLATE "C");
INSERT INTO local_names VALUES ('a', 'b'), ('a', 'B'), ('a', 'a'), ('a', 'é'), ('a', 'e');
INSERT INTO names SELECT * FROM local_names;
EXPLAIN (COSTS OFF) SELECT name FROM names WHERE k = 'a' ORDER BY name;
EXPLAIN (COSTS OFF) SELECT name FROM names WHERE k = 'a' ORDER BY name COLLATE "en-x-icu";
SELECT same_rows($$SELECT name FROM %s WHERE k = 'a' ORDER BY name COLLATE "en-x-icu"$$,
                 'names', 'local_names');
SELECT same_rows($$SELECT name FROM %s WHERE k = 'a' ORDER BY name DESC$$,
                 'names', 'local_names');

DROP FOREIGN TABLE lb, lb_narrow, names;
DROP TABLE local_lb, local_names;
SELECT ddb_delete_table('OrderBoards') AS deleted;
SELECT ddb_delete_table('OrderNames') AS deleted;
DROP FUNCTION same_rows(text, text, text);
DROP SERVER ddb CASCADE;

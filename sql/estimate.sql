-- EXPLAIN without ANALYZE estimates the read units a scan will consume
-- (Estimated Read Units, shown with the costs), from ANALYZE's row count
-- and table size; EXPLAIN ANALYZE shows it beside what DynamoDB reported.
-- A partition's items are those its key's equalities select, so a common
-- value counts as common.  One estimate is off: a BatchGetItem counts the
-- rows expected, not the keys asked.
\ir sql/include/server.sql
SELECT ddb_create_table('est_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE est (game text, player text, score int, pad text)
  SERVER ddb OPTIONS (table 'est_tab', partition_key 'pk',
    partition_key_format '{game}#{shard}', sort_key 'sk',
    sort_key_format '{score:010}#{player}', shards '4', shard_strategy 'calculated',
    shard_by 'player', shard_hash 'fnv1a_32', insert_mode 'upsert');
-- two games of 400 players, items of about 560 bytes
INSERT INTO est SELECT g, 'p' || i, (i * 7919) % 1000, repeat('x', 500)
  FROM generate_series(1, 400) i, (VALUES ('g1'), ('g2')) games(g);
-- the estimated units of a query, summed over its plan's nodes, and what
-- DynamoDB said the query consumed (EXPLAIN ANALYZE)
CREATE FUNCTION units(query text, OUT estimated float8, OUT consumed float8)
LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
  SELECT sum(u::text::float8) INTO estimated
    FROM jsonb_path_query(plan, 'strict $.**."Estimated Read Units"') u;
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF) ' || query INTO plan;
  SELECT sum(u::text::float8) INTO consumed
    FROM jsonb_path_query(plan, 'strict $.**."DynamoDB Consumed Capacity"') u;
END
$$;
-- before ANALYZE there is no estimate
SELECT * FROM units($$SELECT * FROM est WHERE game = 'g1'$$);
ANALYZE est;
SELECT relpages FROM pg_class WHERE oid = 'est'::regclass;
SELECT q AS query, u.* FROM (VALUES
  ($$SELECT * FROM est WHERE game = 'g1'$$),
  ($$SELECT * FROM est WHERE game = 'g1' AND player = 'p7'$$),
  ($$SELECT * FROM est WHERE game = 'g1' AND player = 'p7' AND score = 7919 % 1000$$),
  ($$SELECT * FROM est WHERE game = 'g1' AND player IN ('p1', 'p2', 'p3') AND score IN (919, 838, 757)$$),
  ($$SELECT * FROM est WHERE game = 'g1' ORDER BY score DESC LIMIT 10$$),
  ($$SELECT * FROM est$$),
  ($$SELECT count(*) FROM est WHERE game = 'g2'$$),
  ($$SELECT max(score) FROM est WHERE game = 'g2'$$)
) AS queries(q), units(q) u;
-- a batched lookup join: the Query of each shard its 30 players fix (the
-- four), in one batch
CREATE TABLE watch AS SELECT 'g1' AS game, 'p' || i AS player FROM generate_series(1, 30) i;
ANALYZE watch;
SELECT * FROM units($$SELECT e.score FROM watch w JOIN est e ON e.game = w.game AND e.player = w.player$$);
-- a small game beside the two large ones: its partition counts as small,
-- named in the query or by a join's outer rows
INSERT INTO est SELECT 'g3', 'p' || i, i, repeat('x', 500) FROM generate_series(1, 40) i;
ANALYZE est;
CREATE TABLE watch3 AS SELECT 'g3' AS game, 'p' || i AS player FROM generate_series(1, 30) i;
ANALYZE watch3;
SELECT q AS query, u.* FROM (VALUES
  ($$SELECT * FROM est WHERE game = 'g3'$$),
  ($$SELECT * FROM est WHERE game = 'g1'$$),
  ($$SELECT e.score FROM watch3 w JOIN est e ON e.game = w.game AND e.player = w.player$$)
) AS queries(q), units(q) u;
DROP TABLE watch3;
-- strongly consistent reads cost twice as much
ALTER FOREIGN TABLE est OPTIONS (ADD consistent_read 'true');
SELECT * FROM units($$SELECT * FROM est WHERE game = 'g1'$$);
-- text EXPLAIN shows the estimate with the costs only
EXPLAIN (COSTS OFF) SELECT * FROM est WHERE game = 'g1';
CREATE FUNCTION explain_costs(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN ' || query LOOP
    RETURN NEXT regexp_replace(line, '\(cost=.*\)', '(cost=...)');
  END LOOP;
END
$$;
SELECT explain_costs($$SELECT * FROM est WHERE game = 'g1'$$);
DROP TABLE watch;
SELECT ddb_delete_table('est_tab');
DROP SERVER ddb CASCADE;

-- Joins with local tables: the batched lookup join (BatchGetItem of whole
-- keys, concurrent Queries per partition), or a hash join over one read,
-- chosen by cost; never a round trip per outer row one after another.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('Inventory', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE inventory (
  owner text NOT NULL, item int NOT NULL, qty int
) SERVER ddb OPTIONS (
  table 'Inventory', partition_key 'pk', partition_key_format 'owner#{owner}',
  sort_key 'sk', sort_key_format '{item:06}', insert_mode 'upsert');
-- 20,000 items: 200 owners of 100 items
CREATE TABLE inventory_local AS
  SELECT 'o' || (i % 200) AS owner, i / 200 AS item, i % 7 AS qty
    FROM generate_series(0, 19999) i;
INSERT INTO inventory SELECT * FROM inventory_local;
ANALYZE inventory;
ANALYZE inventory_local;

-- 1,000 local rows naming whole keys (and a few that match nothing): ten
-- BatchGetItems in flight at once
CREATE TABLE wanted AS
  SELECT 'o' || (i % 200) AS owner, (i * 7) % 120 AS item
    FROM generate_series(1, 1000) i;
ANALYZE wanted;
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT w.owner, w.item, v.qty FROM wanted w JOIN inventory v
      ON v.owner = w.owner AND v.item = w.item;
SELECT explain_analyze($$SELECT w.owner, w.item, v.qty FROM wanted w JOIN inventory v
      ON v.owner = w.owner AND v.item = w.item$$);
SELECT count(*), sum(v.qty), sum(v.item) FROM wanted w JOIN inventory v
    ON v.owner = w.owner AND v.item = w.item;
SELECT count(*), sum(v.qty), sum(v.item) FROM wanted w JOIN inventory_local v
    ON v.owner = w.owner AND v.item = w.item;
-- the setting takes the node out of the planner's choices, and row locks
-- (whose recheck would need the joined row again) keep it out
SET shard_fdw.enable_lookup_join = off;
EXPLAIN (COSTS OFF)
  SELECT w.owner, v.qty FROM wanted w JOIN inventory v
      ON v.owner = w.owner AND v.item = w.item;
RESET shard_fdw.enable_lookup_join;
EXPLAIN (COSTS OFF)
  SELECT w.owner, v.qty FROM wanted w JOIN inventory v
      ON v.owner = w.owner AND v.item = w.item FOR UPDATE OF w;

-- a few outer rows on the partition key: their partitions, read at once;
-- NULL keys match nothing, a duplicate outer row joins twice
CREATE TABLE few (owner text, note text);
INSERT INTO few VALUES ('o1', 'a'), ('o2', 'b'), ('o2', 'c'), (NULL, 'd'), ('nobody', 'e');
ANALYZE few;
EXPLAIN (COSTS OFF)
  SELECT f.note, count(*) FROM few f JOIN inventory v USING (owner) GROUP BY f.note;
SELECT explain_analyze($$SELECT f.note, v.item FROM few f JOIN inventory v USING (owner)$$);
SELECT f.note, count(*), sum(v.qty) FROM few f JOIN inventory v USING (owner)
 GROUP BY f.note ORDER BY f.note;
SELECT f.note, count(*), sum(v.qty) FROM few f JOIN inventory_local v USING (owner)
 GROUP BY f.note ORDER BY f.note;
-- a condition of no column (pseudoconstant) gates the join, which the
-- lookup join's node could not do
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM few f JOIN inventory v
    ON v.owner = f.owner AND current_setting('work_mem') = '1kB';
SELECT count(*) FROM few f JOIN inventory v
    ON v.owner = f.owner AND current_setting('work_mem') = '1kB';
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
-- with a sort key condition and a join condition that stays local
SELECT f.note, count(*) FROM few f JOIN inventory v
    ON v.owner = f.owner AND v.item < 10 AND v.qty > length(f.note)
 GROUP BY f.note ORDER BY f.note;
SELECT f.note, count(*) FROM few f JOIN inventory_local v
    ON v.owner = f.owner AND v.item < 10 AND v.qty > length(f.note)
 GROUP BY f.note ORDER BY f.note;

-- every owner wanted: one parallel Scan and a hash join read less than
-- 200 partitions
CREATE TABLE all_owners AS SELECT DISTINCT owner FROM inventory_local;
ANALYZE all_owners;
EXPLAIN (COSTS OFF)
  SELECT count(*) FROM all_owners a JOIN inventory v USING (owner);
SELECT count(*) FROM all_owners a JOIN inventory v USING (owner);

-- small batches: the rows of each batch read in one round
SET work_mem = '64kB';
CREATE TABLE many_wanted AS
  SELECT 'o' || (i % 200) AS owner, i % 100 AS item, repeat('x', 200) AS pad
    FROM generate_series(1, 2000) i;
ANALYZE many_wanted;
SELECT explain_analyze($$SELECT v.qty FROM many_wanted w JOIN inventory v
    ON v.owner = w.owner AND v.item = w.item$$);
SELECT count(*), sum(v.qty) FROM many_wanted w JOIN inventory v
    ON v.owner = w.owner AND v.item = w.item;
SELECT count(*), sum(v.qty) FROM many_wanted w JOIN inventory_local v
    ON v.owner = w.owner AND v.item = w.item;
RESET work_mem;

-- whole keys with an empty template field, which no stored key has: asked
-- for by a lookup join or by a query, they find nothing and send nothing
SELECT ddb_create_table('JoinScores', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE join_scores (
  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL
) SERVER ddb OPTIONS (
  table 'JoinScores', partition_key 'pk', partition_key_format '{game_id}',
  sort_key 'sk', sort_key_format '{score:020}#{player_id}');
INSERT INTO join_scores VALUES ('g', 'ann', 10), ('g', 'bob', 20);
SELECT * FROM join_scores WHERE game_id = 'g' AND player_id = '' AND score = 10;
SELECT * FROM join_scores WHERE game_id = 'g' AND player_id IN ('', 'ann')
   AND score IN (10, 20);
CREATE TABLE score_keys (game_id text, player_id text, score bigint);
INSERT INTO score_keys VALUES ('g', '', 10), ('g', 'bob', 20), ('', 'ann', 10);
ANALYZE score_keys;
SELECT explain_analyze($$SELECT k.player_id, s.score FROM score_keys k JOIN join_scores s
    USING (game_id, player_id, score)$$);
DROP TABLE score_keys;
DROP FOREIGN TABLE join_scores;
SELECT ddb_delete_table('JoinScores');

SELECT ddb_delete_table('Inventory');
DROP TABLE inventory_local, wanted, few, all_owners, many_wanted;
DROP SERVER ddb CASCADE;

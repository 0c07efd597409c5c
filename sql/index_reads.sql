-- Reads through a table's secondary indexes: where the conditions fix an
-- index's partition key, the planner also costs a Query of that index
-- (its sort key's conditions, its order under a LIMIT, aggregates, the
-- table's items it lacks got by key) and reads the cheapest.  Each
-- result is checked against a local copy.
\ir sql/include/server.sql
\ir sql/include/ddb_indexes.sql
\ir sql/include/explain_analyze.sql
\ir sql/include/same_rows.sql

-- The users of several organisations: 3,000 items under org (HASH) and
-- user (RANGE), with a GSI on email, a KEYS_ONLY GSI on country and
-- signup, a sparse GSI on vip that also holds name, a KEYS_ONLY GSI on
-- user (the table's sort key), and an LSI on seen that holds name.
SELECT ddb_create_indexed_table('idx_users', 'org', 'user',
  ARRAY[ddb_index('byEmail', 'email'),
        ddb_index('byCountry', 'country', 'signup', 'KEYS_ONLY'),
        ddb_index('byVip', 'vip', NULL, 'name'),
        ddb_index('byUser', 'user', NULL, 'KEYS_ONLY')],
  ARRAY[ddb_index('bySeen', 'org', 'seen:N', 'name')]) AS status;
-- every user has an email, a country, a signup and a last seen time,
-- which the columns declare (NOT NULL): each index but byVip holds
-- every item
CREATE FOREIGN TABLE users (org text, "user" text, email text NOT NULL,
  country text NOT NULL, signup text NOT NULL, seen bigint NOT NULL,
  vip text, name text, plan text)
  SERVER ddb OPTIONS (table 'idx_users', insert_mode 'upsert');
SELECT index_name, kind, projection, unusable FROM shard_fdw_refresh_indexes('users');
CREATE TABLE local_users AS
  SELECT 'o' || (i % 20) AS org, 'u' || i AS "user", 'u' || i || '@x.test' AS email,
         (ARRAY['FR', 'DE', 'US', 'JP', 'BR'])[1 + i % 5] AS country,
         '2020-01-' || lpad((1 + i % 28)::text, 2, '0') || 'T' || lpad(i::text, 5, '0') AS signup,
         ((i * 7919) % 100000)::bigint AS seen,
         CASE WHEN i % 10 = 0 THEN 'Y' END AS vip, 'n' || i AS name, 'p' || (i % 3) AS plan
    FROM generate_series(1, 3000) i;
INSERT INTO users SELECT * FROM local_users;
ANALYZE users;

-- one user by email: a Query of the GSI that reads one item, not a Scan
-- of 3,000
SELECT explain_analyze($$SELECT * FROM users WHERE email = 'u1234@x.test'$$);
SELECT same_rows($$SELECT * FROM %s WHERE email = 'u1234@x.test'$$, 'users', 'local_users');
-- an IN list: a Query of the index per value
EXPLAIN (COSTS OFF)
  SELECT "user" FROM users WHERE email IN ('u7@x.test', 'u8@x.test', 'u9@x.test');
SELECT same_rows($$SELECT "user" FROM %s WHERE email IN ('u7@x.test', 'u8@x.test', 'u9@x.test')
   ORDER BY 1$$, 'users', 'local_users');
-- where two indexes fit, the one that reads less
EXPLAIN (COSTS OFF) SELECT "user" FROM users WHERE email = 'u10@x.test' AND country = 'FR';
SELECT same_rows($$SELECT "user" FROM %s WHERE email = 'u10@x.test' AND country = 'FR'$$,
                 'users', 'local_users');

-- the newest signups of a country: the KEYS_ONLY GSI read in signup
-- order, 10 items and no more, then their items got from the table
SELECT explain_analyze($$SELECT org, "user", name, signup FROM users
   WHERE country = 'FR' ORDER BY signup DESC LIMIT 10$$);
SELECT same_rows($$SELECT org, "user", name, signup FROM %s
   WHERE country = 'FR' ORDER BY signup DESC LIMIT 10$$, 'users', 'local_users');
SELECT same_rows($$SELECT org, "user", name, signup FROM %s
   WHERE country = 'DE' ORDER BY signup LIMIT 7 OFFSET 3$$, 'users', 'local_users');
-- the keys alone come with the index: nothing is got from the table
EXPLAIN (COSTS OFF)
  SELECT "user", signup FROM users WHERE country = 'JP' ORDER BY signup LIMIT 3;
SELECT same_rows($$SELECT "user", signup FROM %s WHERE country = 'JP' ORDER BY signup LIMIT 3$$,
                 'users', 'local_users');
-- conditions on the index's sort key go into its key condition
EXPLAIN (COSTS OFF)
  SELECT "user", name FROM users WHERE country = 'DE'
     AND signup BETWEEN '2020-01-05' AND '2020-01-06' ORDER BY signup;
SELECT same_rows($$SELECT "user", name FROM %s WHERE country = 'DE'
   AND signup BETWEEN '2020-01-05' AND '2020-01-06' ORDER BY signup$$, 'users', 'local_users');
SELECT same_rows($$SELECT "user" FROM %s WHERE country = 'US' AND signup LIKE '2020-01-09%%'
   ORDER BY signup DESC$$, 'users', 'local_users');
-- other conditions are filters of the index's Query where it holds the
-- attribute (the table's keys), else checked on the table's items only
EXPLAIN (COSTS OFF)
  SELECT "user" FROM users WHERE country = 'BR' AND "user" LIKE 'u1%' AND plan = 'p1'
   ORDER BY signup DESC LIMIT 4;
SELECT same_rows($$SELECT "user" FROM %s WHERE country = 'BR' AND "user" LIKE 'u1%%'
   AND plan = 'p1' ORDER BY signup DESC LIMIT 4$$, 'users', 'local_users');
-- an equality on the table's partition key is such a filter too when
-- the index's order is the one wanted
EXPLAIN (COSTS OFF)
  SELECT "user" FROM users WHERE country = 'BR' AND org = 'o4' ORDER BY signup LIMIT 4;
SELECT same_rows($$SELECT "user" FROM %s WHERE country = 'BR' AND org = 'o4'
   ORDER BY signup LIMIT 4$$, 'users', 'local_users');

-- the latest seen of an organisation: the LSI, 5 items of the partition
-- in seen order instead of its 150; name is in the index, plan is read
-- from the table by the Query itself
SELECT explain_analyze($$SELECT "user", seen, name FROM users
   WHERE org = 'o1' ORDER BY seen DESC LIMIT 5$$);
SELECT explain_analyze($$SELECT "user", seen, plan FROM users
   WHERE org = 'o1' ORDER BY seen LIMIT 5$$);
SELECT same_rows($$SELECT "user", seen, name, plan FROM %s
   WHERE org = 'o1' ORDER BY seen DESC LIMIT 5$$, 'users', 'local_users');
SELECT same_rows($$SELECT * FROM %s WHERE org = 'o2' AND seen > 50000 ORDER BY seen LIMIT 6$$,
                 'users', 'local_users');
-- the whole item, from an LSI that lacks some of it: Select ALL_ATTRIBUTES
SELECT same_rows($$SELECT %1$s FROM %1$s WHERE org = 'o3' ORDER BY seen LIMIT 2$$,
                 'users', 'local_users');

-- a user by name alone: the GSI whose partition key is the table's sort key
EXPLAIN (COSTS OFF) SELECT org, name FROM users WHERE "user" = 'u77';
SELECT same_rows($$SELECT org, name FROM %s WHERE "user" = 'u77'$$, 'users', 'local_users');
-- the sparse index: an equality says the item has vip
EXPLAIN (COSTS OFF) SELECT "user", name FROM users WHERE vip = 'Y';
SELECT same_rows($$SELECT "user", name FROM %s WHERE vip = 'Y' ORDER BY 1$$,
                 'users', 'local_users');
-- what no index fits is read as before
EXPLAIN (COSTS OFF) SELECT "user" FROM users WHERE name = 'n5';
EXPLAIN (COSTS OFF) SELECT "user" FROM users WHERE org = 'o5' AND "user" = 'u5';

-- aggregates through an index, as on the table: a count of the GSI, min
-- and max of its sort key, max of the LSI's
EXPLAIN (COSTS OFF) SELECT count(*) FROM users WHERE country = 'FR';
SELECT same_rows($$SELECT count(*) FROM %s WHERE country = 'FR'$$, 'users', 'local_users');
EXPLAIN (COSTS OFF) SELECT min(signup), max(signup) FROM users WHERE country = 'DE';
SELECT same_rows($$SELECT min(signup), max(signup) FROM %s WHERE country = 'DE'$$,
                 'users', 'local_users');
EXPLAIN (COSTS OFF) SELECT max(seen) FROM users WHERE org = 'o3';
SELECT same_rows($$SELECT max(seen) FROM %s WHERE org = 'o3'$$, 'users', 'local_users');
SELECT same_rows($$SELECT count(*) FROM %s WHERE vip = 'Y'$$, 'users', 'local_users');

-- a join: a nested loop of Queries of the index, one per outer row
CREATE TABLE wanted (email text);
INSERT INTO wanted VALUES ('u11@x.test'), ('u2999@x.test');
ANALYZE wanted;
EXPLAIN (COSTS OFF)
  SELECT u."user", u.name FROM wanted w JOIN users u ON u.email = w.email;
SELECT same_rows($$SELECT u."user", u.name FROM wanted w JOIN %s u ON u.email = w.email
   ORDER BY 1$$, 'users', 'local_users');

-- a sharded table's LSI: a Query of the index per shard, merged in the
-- order of its sort key
SELECT ddb_create_indexed_table('idx_boards', 'pk', 'player',
  '{}', ARRAY[ddb_index('byScore', 'pk', 'score:N', 'KEYS_ONLY')]) AS status;
CREATE FOREIGN TABLE boards (game text, player text, score bigint NOT NULL, level int)
  SERVER ddb OPTIONS (table 'idx_boards', partition_key 'pk', partition_key_format '{game}#{shard}',
  sort_key 'player', shard_strategy 'calculated', shards '4', shard_by 'player',
  shard_hash 'fnv1a_32', insert_mode 'upsert');
CREATE TABLE local_boards AS
  SELECT 'g' || (i % 2) AS game, 'p' || i AS player, ((i * 7919) % 10000)::bigint AS score,
         i % 7 AS level
    FROM generate_series(1, 800) i;
INSERT INTO boards SELECT * FROM local_boards;
ANALYZE boards;
SELECT explain_analyze($$SELECT player, score, level FROM boards
   WHERE game = 'g1' ORDER BY score DESC LIMIT 5$$);
SELECT same_rows($$SELECT player, score, level FROM %s WHERE game = 'g1'
   ORDER BY score DESC LIMIT 5$$, 'boards', 'local_boards');
SELECT same_rows($$SELECT player, score FROM %s WHERE game = 'g0' AND score < 100
   ORDER BY score$$, 'boards', 'local_boards');
-- one player's shard: a Query of the index in that shard only
EXPLAIN (COSTS OFF) SELECT score FROM boards WHERE game = 'g1' AND player = 'p7';

-- an index whose keys the table writes from templates: the team's
-- members by the time they joined
SELECT ddb_create_indexed_table('idx_members', 'id', NULL,
  ARRAY[ddb_index('byTeam', 'gsi_pk', 'gsi_sk')]) AS status;
CREATE FOREIGN TABLE members (id text, team text, joined timestamptz NOT NULL, name text)
  SERVER ddb OPTIONS (table 'idx_members',
  index_partition_key 'gsi_pk', index_partition_key_format 'team#{team}',
  index_sort_key 'gsi_sk', index_sort_key_format '{joined:isoformat}', insert_mode 'upsert');
CREATE TABLE local_members AS
  SELECT 'm' || i AS id, 't' || (i % 4) AS team,
         '2024-03-01 00:00+00'::timestamptz + i * interval '37 minutes' AS joined, 'n' || i AS name
    FROM generate_series(1, 400) i;
INSERT INTO members SELECT * FROM local_members;
ANALYZE members;
EXPLAIN (COSTS OFF)
  SELECT id, joined FROM members WHERE team = 't2' ORDER BY joined DESC LIMIT 3;
SELECT same_rows($$SELECT id, joined FROM %s WHERE team = 't2' ORDER BY joined DESC LIMIT 3$$,
                 'members', 'local_members');
EXPLAIN (COSTS OFF)
  SELECT id FROM members WHERE team = 't1' AND joined >= '2024-03-05 00:00+00'
   ORDER BY joined LIMIT 4;
SELECT same_rows($$SELECT id FROM %s WHERE team = 't1' AND joined >= '2024-03-05 00:00+00'
   ORDER BY joined LIMIT 4$$, 'members', 'local_members');

DROP TABLE local_users, local_boards, local_members, wanted;
DROP FOREIGN TABLE users, boards, members;
SELECT ddb_delete_table('idx_users') AS deleted;
SELECT ddb_delete_table('idx_boards') AS deleted;
SELECT ddb_delete_table('idx_members') AS deleted;
DROP SERVER ddb CASCADE;

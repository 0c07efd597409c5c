-- The database test/sqlsmith.sh lets sqlsmith loose on: foreign tables of
-- every strategy (none, random, calculated, range, dynamic, and
-- legacy_unsharded) over DynamoDB Local with a few thousand items, tables
-- whose whole key makes GetItem and BatchGetItem reads, a read through a
-- global secondary index, and local tables to join them with.  psql variables: endpoint, akid, secret.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION shard_fdw;
CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (endpoint :'endpoint', max_retries '2', request_timeout_ms '5000');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (access_key_id :'akid', secret_access_key :'secret');

-- DynamoDB tables, made afresh (those an earlier run left are dropped)
\ir ../sql/include/ddb_tables.sql
SELECT ddb_delete_table(name)
  FROM jsonb_array_elements_text(shard_fdw_request('ddb', 'ListTables', '{}')
                                 -> 'TableNames') AS name
 WHERE name LIKE 'sqlsmith\_%';
SELECT ddb_create_table('sqlsmith_leaderboards', 'pk', 'sk');
SELECT ddb_create_table('sqlsmith_players', 'player_id');
SELECT ddb_create_table('sqlsmith_music', 'pk', 'title');
SELECT ddb_create_table('sqlsmith_audit', 'pk', 'ts:N');
SELECT ddb_create_table('sqlsmith_audit_shards', 'file_path');
SELECT ddb_create_table('sqlsmith_types', 'pk', 'sk:N');

-- the leaderboard hashed on player_id, 3,000 players of two games; the
-- same items read as random shards, and with the bare key too
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('leaderboard', $o$shard_strategy 'calculated', shard_by 'player_id', shard_hash 'fnv1a_32'$o$),
      ('leaderboard_random', $o$shard_strategy 'random'$o$),
      ('leaderboard_legacy', $o$shard_strategy 'calculated', shard_by 'player_id',
                              shard_hash 'fnv1a_32', legacy_unsharded 'true'$o$)) AS v(name, options)
  LOOP
    EXECUTE format($f$CREATE FOREIGN TABLE %I (
      game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL,
      achieved timestamptz
    ) SERVER ddb OPTIONS (
      table 'sqlsmith_leaderboards',
      partition_key 'pk', partition_key_format '{game_id}#{shard}',
      sort_key 'sk', sort_key_format '{score:020}#{player_id}',
      shards '10', %s)$f$, t.name, t.options);
  END LOOP;
END
$$;
INSERT INTO leaderboard
SELECT 'game_' || (i % 2), 'player' || i, (i * 7919) % 100000,
       timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute'
  FROM generate_series(1, 3000) i;

SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object(
  'TableName', 'sqlsmith_leaderboards', 'Item', jsonb_build_object(
    'pk', jsonb_build_object('S', 'game_' || (i % 2)),
    'sk', jsonb_build_object('S', lpad(i::text, 20, '0') || '#legacy' || i),
    'game_id', jsonb_build_object('S', 'game_' || (i % 2)),
    'player_id', jsonb_build_object('S', 'legacy' || i),
    'score', jsonb_build_object('N', i::text))))
  FROM generate_series(1, 50) i;

-- 200 items under one unsharded key, text sort key in "C" order
CREATE FOREIGN TABLE feed (
  topic text COLLATE "C" NOT NULL, seq int NOT NULL, body text, flag boolean
) SERVER ddb OPTIONS (
  table 'sqlsmith_leaderboards',
  partition_key 'pk', partition_key_format 'feed#{topic}',
  sort_key 'sk', sort_key_format '{seq:08}');
INSERT INTO feed
SELECT 'news', i, 'item ' || i, i % 3 = 0 FROM generate_series(1, 200) i;

-- players by their whole key: GetItem, BatchGetItem for IN lists
CREATE FOREIGN TABLE players (
  player_id text NOT NULL, name text, country char(2), level int,
  joined date, tags text[], profile jsonb, avatar bytea
) SERVER ddb OPTIONS (table 'sqlsmith_players', partition_key 'player_id');
INSERT INTO players
SELECT 'player' || i, 'Name ' || i, (ARRAY['FI', 'FR', 'JP', 'US'])[1 + i % 4],
       i % 50, date '2020-01-01' + i,
       CASE WHEN i % 5 = 0 THEN NULL ELSE ARRAY['t' || (i % 7), 'u' || (i % 11)] END,
       jsonb_build_object('i', i, 'even', i % 2 = 0, 'list', jsonb_build_array(i, 'x')),
       CASE WHEN i % 3 = 0 THEN decode(lpad(to_hex(i), 8, '0'), 'hex') END
  FROM generate_series(1, 1000) i;

-- range shards over the title (normalized), and over the raw sort key
CREATE FOREIGN TABLE albums (title text COLLATE "C" NOT NULL, artist text, year int)
  SERVER ddb OPTIONS (
  table 'sqlsmith_music', partition_key 'pk', partition_key_format 'album#{shard}',
  sort_key 'title', shard_strategy 'range', shard_by 'title', shards '4',
  range_boundaries '["", "f", "m", "s"]');
CREATE FOREIGN TABLE albums_raw (title text COLLATE "C" NOT NULL, artist text, year int)
  SERVER ddb OPTIONS (
  table 'sqlsmith_music', partition_key 'pk', partition_key_format 'raw#{shard}',
  sort_key 'title', shard_strategy 'range', shard_by 'title', shards '3',
  range_normalize 'none', range_boundaries '["", "H", "P"]');
INSERT INTO albums
SELECT initcap(md5(i::text)) || ' ' || i, 'Artist ' || (i % 40), 1950 + i % 70
  FROM generate_series(1, 500) i;
INSERT INTO albums_raw SELECT * FROM albums;

-- dynamic shards with their metadata table
CREATE FOREIGN TABLE audit (file_path text NOT NULL, ts bigint NOT NULL, who text)
  SERVER ddb OPTIONS (table 'sqlsmith_audit',
    partition_key 'pk', partition_key_format '{file_path}_{shard}', sort_key 'ts',
    shard_strategy 'dynamic', metadata_table 'sqlsmith_audit_shards',
    metadata_key 'file_path', cooldown_s '0', max_shards '4');
INSERT INTO audit
SELECT '/shared/file' || (i % 5) || '.txt', 1700000000000 + i, 'user' || (i % 9)
  FROM generate_series(1, 300) i;

-- many types, a json column receiving the whole item
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE FOREIGN TABLE typed (
  pk text NOT NULL, sk bigint NOT NULL, i2 smallint, n numeric, r real,
  d double precision, u uuid, ts timestamp, epoch timestamptz OPTIONS (ddb_type 'N'),
  b boolean, j json, nums numeric[], m mood, lst integer[] OPTIONS (ddb_type 'L')
) SERVER ddb OPTIONS (table 'sqlsmith_types', partition_key 'pk', sort_key 'sk');
CREATE FOREIGN TABLE typed_items (pk text, sk bigint, item jsonb OPTIONS (attribute '*'))
  SERVER ddb OPTIONS (table 'sqlsmith_types', partition_key 'pk', sort_key 'sk');
INSERT INTO typed
SELECT 'k' || (i % 3), i, (i % 100)::smallint, i * 1.25, i / 3.0, i * 1e-3,
       md5(i::text)::uuid, timestamp '2000-01-01' + i * interval '1 hour',
       timestamptz '2020-01-01 00:00:00+00' + i * interval '1 day',
       i % 2 = 0, json_build_object('i', i),
       CASE WHEN i % 4 <> 0 THEN ARRAY[i, i + 0.5] END,
       (enum_range(NULL::mood))[1 + i % 3], ARRAY[i, i, 1]
  FROM generate_series(1, 300) i;

-- a global secondary index whose keys repeat (players by level), read
-- across two layouts of its shards
SELECT shard_fdw_request('ddb', 'CreateTable', '{
  "TableName": "sqlsmith_ranks", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "player_id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "player_id", "AttributeType": "S"},
                           {"AttributeName": "gpk", "AttributeType": "S"},
                           {"AttributeName": "gsk", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byLevel",
    "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"},
                  {"AttributeName": "gsk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}]}');
CREATE FOREIGN TABLE ranks (
  region text NOT NULL, player_id text NOT NULL, level int NOT NULL, bucket int NOT NULL,
  points numeric
) SERVER ddb OPTIONS (table 'sqlsmith_ranks', partition_key 'player_id',
  index_partition_key 'gpk', index_partition_key_format '{region}#{bucket}',
  index_sort_key 'gsk', index_sort_key_format '{level:03}');
INSERT INTO ranks
SELECT (ARRAY['eu', 'us'])[1 + i % 2], 'player' || i, i % 40, i % 3, i * 0.5
  FROM generate_series(1, 600) i;
CREATE FOREIGN TABLE ranks_by_level (
  region text NOT NULL, player_id text, level int NOT NULL, points numeric
) SERVER ddb OPTIONS (table 'sqlsmith_ranks', index 'byLevel',
  partition_key 'gpk', partition_key_format '{region}#{shard}', shards '2',
  shard_strategy 'random', sort_key 'gsk', sort_key_format '{level:03}');
ALTER FOREIGN TABLE ranks_by_level OPTIONS (SET shards '3');

-- local tables to join with
CREATE TABLE games (game_id text PRIMARY KEY, title text);
INSERT INTO games VALUES ('game_0', 'Zero'), ('game_1', 'One'), ('game_2', 'None');
CREATE TABLE local_scores AS
  SELECT 'game_' || (i % 2) AS game_id, 'player' || i AS player_id,
         (i * 7919) % 100000 AS score
    FROM generate_series(1, 500) i;
ANALYZE games, local_scores;

-- the table helpers are not sqlsmith's to call
DROP FUNCTION ddb_create_table, ddb_delete_table;

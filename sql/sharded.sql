-- Sharded tables: the leaderboard hashed on player_id (calculated shards),
-- random and range shards, legacy unsharded items, indexes and joins.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
\set lb leaderboard
\set lb_table Leaderboards
\ir sql/include/leaderboard.sql
ALTER FOREIGN TABLE leaderboard ADD COLUMN achieved timestamptz;
CREATE TABLE local_scores AS
  SELECT 'game_' || (i % 2) AS game_id, 'player' || i AS player_id,
         (i * 7919) % 100000 AS score,
         timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute' AS achieved
    FROM generate_series(1, 600) i;
INSERT INTO leaderboard SELECT * FROM local_scores;

-- the top 10 of one game: ten Queries, merged by score, each limited
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 10;
SELECT player_id, score FROM leaderboard
 WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 10;
SELECT player_id, score FROM local_scores
 WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 10;
SELECT explain_analyze($$SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 10$$);
-- with an offset, and ascending
SELECT player_id, score FROM leaderboard
 WHERE game_id = 'game_0' ORDER BY score LIMIT 5 OFFSET 20;
SELECT player_id, score FROM local_scores
 WHERE game_id = 'game_0' ORDER BY score LIMIT 5 OFFSET 20;

-- a score range becomes a sort key condition on the zero-padded field
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' AND score >= 1000 AND score <= 5000 ORDER BY score;
SELECT count(*), min(score), max(score) FROM leaderboard
 WHERE game_id = 'game_1' AND score >= 1000 AND score <= 5000;
SELECT count(*), min(score), max(score) FROM local_scores
 WHERE game_id = 'game_1' AND score >= 1000 AND score <= 5000;
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND score > 99000;
SELECT count(*) FROM local_scores WHERE game_id = 'game_1' AND score > 99000;
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND score < 0;
-- an empty range sends nothing DynamoDB would refuse
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND score BETWEEN 300 AND 200;
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND score > 300 AND score < 301;
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND score > 99818 AND score < 99820;

-- one player: the calculated shard is known, so one Query
EXPLAIN (COSTS OFF)
  SELECT score FROM leaderboard WHERE game_id = 'game_1' AND player_id = 'player7';
SELECT score FROM leaderboard WHERE game_id = 'game_1' AND player_id = 'player7';
-- the whole key: one GetItem
EXPLAIN (COSTS OFF)
  SELECT achieved FROM leaderboard
   WHERE game_id = 'game_1' AND player_id = 'player7' AND score = 55433;
SELECT achieved FROM leaderboard
 WHERE game_id = 'game_1' AND player_id = 'player7' AND score = 55433;
-- keys no row can have (an empty player, a negative score) are not asked for
SELECT count(*) FROM leaderboard
 WHERE game_id = 'game_1' AND player_id IN ('', 'player7') AND score IN (-1, 55433);
SELECT count(*) FROM local_scores
 WHERE game_id = 'game_1' AND player_id IN ('', 'player7') AND score IN (-1, 55433);

-- IN lists: whole keys go in one BatchGetItem, partitions become Queries
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' AND player_id IN ('player7', 'player9', 'player11')
     AND score IN (55433, 71271, 87109);
SELECT player_id, score FROM leaderboard
 WHERE game_id = 'game_1' AND player_id IN ('player7', 'player9', 'player11')
   AND score IN (55433, 71271, 87109) ORDER BY player_id;
SELECT player_id, score FROM local_scores
 WHERE game_id = 'game_1' AND player_id IN ('player7', 'player9', 'player11')
   AND score IN (55433, 71271, 87109) ORDER BY player_id;
SELECT explain_analyze($$SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' AND player_id IN ('player7', 'player9', 'player11')
     AND score IN (55433, 71271, 87109)$$);
SELECT count(*) FROM leaderboard WHERE game_id IN ('game_0', 'game_1', 'nope');
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1' AND player_id IN ('player7', 'player8');
SELECT count(*) FROM leaderboard WHERE game_id = ANY (ARRAY[NULL, 'game_1']);

-- the score lives only inside sk for items another application wrote
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "Leaderboards",
  "Item": {"pk": {"S": "game_9#3"}, "sk": {"S": "00000000000000000077#zed"}}}') AS put;
SELECT game_id, player_id, score FROM leaderboard WHERE game_id = 'game_9';

-- without a partition key: a parallel Scan
SELECT count(*), sum(score) FROM leaderboard WHERE game_id <> 'game_9';
SELECT count(*), sum(score) FROM local_scores;


-- a nested loop sends one keyed Query set per outer row
CREATE TABLE games (game_id text PRIMARY KEY, title text);
INSERT INTO games VALUES ('game_0', 'Zero'), ('game_1', 'One');
ANALYZE games;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
  SELECT g.title, max(l.score) FROM games g JOIN leaderboard l USING (game_id)
   GROUP BY g.title;
SELECT g.title, max(l.score) FROM games g JOIN leaderboard l USING (game_id)
 GROUP BY g.title ORDER BY g.title;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- items of a migration still under the bare key (legacy_unsharded)
ALTER FOREIGN TABLE leaderboard OPTIONS (ADD legacy_unsharded 'true');
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "Leaderboards",
  "Item": {"pk": {"S": "game_1"}, "sk": {"S": "00000000000000999999#old"},
           "game_id": {"S": "game_1"}, "player_id": {"S": "old"},
           "score": {"N": "999999"}}}') AS put;
EXPLAIN (COSTS OFF)
  SELECT player_id, score FROM leaderboard
   WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 3;
SELECT player_id, score FROM leaderboard
 WHERE game_id = 'game_1' ORDER BY score DESC LIMIT 3;
ALTER FOREIGN TABLE leaderboard OPTIONS (DROP legacy_unsharded);

-- random shards: a read visits them all; the whole key is a BatchGetItem
CREATE FOREIGN TABLE feed (
  topic text, seq int, body text
) SERVER ddb OPTIONS (
  table 'Leaderboards',
  partition_key 'pk', partition_key_format 'feed#{topic}#_{shard}',
  sort_key 'sk', sort_key_format '{seq:08}',
  shards '4', shard_strategy 'random');
INSERT INTO feed SELECT 'news', i, 'item ' || i FROM generate_series(1, 40) i;
SELECT count(DISTINCT pk) AS shards_used FROM (
  SELECT jsonb_array_elements(shard_fdw_request('ddb', 'Scan',
           '{"TableName": "Leaderboards"}') -> 'Items') #>> '{pk,S}' AS pk) s
 WHERE pk LIKE 'feed#news#\_%';
SELECT count(*), sum(seq) FROM feed WHERE topic = 'news';
EXPLAIN (COSTS OFF) SELECT body FROM feed WHERE topic = 'news' AND seq = 17;
SELECT body FROM feed WHERE topic = 'news' AND seq = 17;
SELECT seq FROM feed WHERE topic = 'news' ORDER BY seq DESC LIMIT 3;

-- Leaderboards now holds the leaderboard's items, feed's, and an item under
-- a key that no template here writes: a Scan of either table keeps to the
-- items whose partition key it writes, as its Queries do (so does the
-- legacy item under the bare key game_1 now that legacy_unsharded is off),
-- and a DELETE or UPDATE through a Scan touches only those
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "Leaderboards",
  "Item": {"pk": {"S": "config"}, "sk": {"S": "main"}, "body": {"S": "not feed"}}}') AS put;
SELECT count(*) AS items FROM (SELECT jsonb_array_elements(shard_fdw_request('ddb',
  'Scan', '{"TableName": "Leaderboards"}') -> 'Items')) s;
SELECT count(*) FROM feed;
SELECT count(*) FROM feed WHERE topic || '' = 'news';
SELECT count(*) FROM leaderboard WHERE game_id = 'game_1';
SELECT count(*) FROM leaderboard WHERE game_id || '' = 'game_1';
SELECT count(*) FROM leaderboard;
DELETE FROM feed WHERE seq > 30;
UPDATE feed SET body = body || '!' WHERE seq <= 2;
SELECT count(*), count(*) FILTER (WHERE body LIKE '%!') AS updated FROM feed;
SELECT count(*) AS items FROM (SELECT jsonb_array_elements(shard_fdw_request('ddb',
  'Scan', '{"TableName": "Leaderboards"}') -> 'Items')) s;

-- single-table design (the ordered-sharding article's music catalog): an
-- artist's albums and songs under one partition key, told apart by their
-- sort keys.  Reads of albums take the
-- songs as rows too (the partition is the table's); an UPDATE or DELETE
-- changes only items whose sort key is an album's
SELECT ddb_create_table('Catalog', 'artist', 'sk') AS status;
CREATE FOREIGN TABLE cat_albums (artist text, album text, year int)
  SERVER ddb OPTIONS (table 'Catalog', partition_key 'artist',
  sort_key 'sk', sort_key_format 'album#{album}');
CREATE FOREIGN TABLE cat_songs (artist text, album text, song text)
  SERVER ddb OPTIONS (table 'Catalog', partition_key 'artist',
  sort_key 'sk', sort_key_format 'song#{album}#{song}');
INSERT INTO cat_albums VALUES ('Solar Fields', 'Leaving Home', 2001),
  ('Solar Fields', 'Movements', 2009);
INSERT INTO cat_songs VALUES ('Solar Fields', 'Leaving Home', 'Air Song'),
  ('Solar Fields', 'Leaving Home', 'Monogram');
SELECT album, year FROM cat_albums WHERE artist = 'Solar Fields' ORDER BY year, album;
-- an UPDATE returns its rows as DynamoDB writes them, in no set order
WITH u AS (UPDATE cat_albums SET year = year + 1 WHERE artist = 'Solar Fields'
           RETURNING album, year)
  SELECT * FROM u ORDER BY album;
UPDATE cat_albums SET year = 0 WHERE year IS NULL RETURNING album;
DELETE FROM cat_albums WHERE album = 'Movements' RETURNING album;
SELECT album, song FROM cat_songs ORDER BY song;
DELETE FROM cat_albums WHERE artist = 'Solar Fields';
SELECT album, song FROM cat_songs WHERE artist = 'Solar Fields' ORDER BY song;
SELECT jsonb_array_length(shard_fdw_request('ddb', 'Scan',
  '{"TableName": "Catalog"}') -> 'Items') AS items;
DROP FOREIGN TABLE cat_albums, cat_songs;
SELECT ddb_delete_table('Catalog') AS deleted;

-- range shards (the range-sharded catalog of album titles): shards hold
-- title ranges of the NFKD-lowercased titles, and a title is found in one
-- shard
SELECT ddb_create_table('Music', 'gsi1pk', 'title') AS status;
CREATE FOREIGN TABLE albums (title text COLLATE "C", artist text)
  SERVER ddb OPTIONS (
  table 'Music', partition_key 'gsi1pk', partition_key_format 'album#{shard}',
  sort_key 'title', shard_strategy 'range', shard_by 'title',
  range_boundaries '["", "agartha", "barstow / crazy", "can you feel it", "cyan rot", "dreams take over eve", "feud semiotics (rb. ", "grave poetry", "i live", "kannaval", "live in florence", "mir ist''s gleich / i", "notice", "platforms ep", "rituals", "skylten", "surtr / absorbed", "the human touch", "tonttujen jouluyö: ", "walking away", "голос"]');
INSERT INTO albums VALUES ('2 Pie Island', 'Someone'), ('Heavy Migration', 'Dday One'),
  ('Leaving Home', 'Solar Fields'), ('Space Cadet', 'Someone Else'),
  ('Голос', 'Кто-то'), ('Über', 'Jemand'), ('Agartha', 'First');
SELECT title, artist FROM albums ORDER BY title;
SELECT a.title, s.pk FROM albums a,
  LATERAL (SELECT shard_fdw_request('ddb', 'GetItem', jsonb_build_object(
     'TableName', 'Music', 'Key', jsonb_build_object(
        'gsi1pk', jsonb_build_object('S', p.pk),
        'title', jsonb_build_object('S', a.title)))) AS r, p.pk
     FROM (SELECT 'album#' || n AS pk FROM generate_series(0, 20) n) p) s
 WHERE s.r ? 'Item' ORDER BY a.title;
EXPLAIN (COSTS OFF) SELECT artist FROM albums WHERE title = 'Leaving Home';
SELECT artist FROM albums WHERE title = 'Leaving Home';
EXPLAIN (COSTS OFF) SELECT title FROM albums ORDER BY title LIMIT 3;
SELECT title FROM albums ORDER BY title LIMIT 3;
SELECT title FROM albums WHERE title LIKE 'S%';

-- range shards over the sort key itself hold it in order: an ORDER BY
-- reads them one after another, and bounds leave out shards that cannot
-- hold a row
CREATE FOREIGN TABLE albums_raw (title text COLLATE "C", artist text)
  SERVER ddb OPTIONS (
  table 'Music', partition_key 'gsi1pk', partition_key_format 'raw#{shard}',
  sort_key 'title', shard_strategy 'range', shard_by 'title',
  range_normalize 'none', range_boundaries '["", "H", "P"]');
INSERT INTO albums_raw SELECT title, artist FROM albums;
EXPLAIN (COSTS OFF) SELECT title FROM albums_raw ORDER BY title LIMIT 2;
SELECT explain_analyze($$SELECT title FROM albums_raw ORDER BY title LIMIT 2$$);
SELECT title FROM albums_raw ORDER BY title LIMIT 2;
SELECT title FROM albums_raw ORDER BY title DESC LIMIT 4;
SELECT title FROM albums_raw ORDER BY title;
SELECT explain_analyze($$SELECT title FROM albums_raw WHERE title >= 'Q' ORDER BY title$$);
SELECT title FROM albums_raw WHERE title >= 'Q' ORDER BY title;
SELECT title FROM albums_raw WHERE title >= 'B' AND title < 'M';

-- reading through a global secondary index
SELECT shard_fdw_request('ddb', 'UpdateTable', '{
  "TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "artist", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "byArtist",
    "KeySchema": [{"AttributeName": "artist", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}}]
}') #>> '{TableDescription,TableName}' AS updated;
-- the index is filled in the background: wait until it is ACTIVE
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    EXIT WHEN shard_fdw_request('ddb', 'DescribeTable', '{"TableName": "Music"}')
              #>> '{Table,GlobalSecondaryIndexes,0,IndexStatus}' = 'ACTIVE';
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
CREATE FOREIGN TABLE albums_by_artist (artist text, title text)
  SERVER ddb OPTIONS (table 'Music', index 'byArtist');
EXPLAIN (COSTS OFF) SELECT title FROM albums_by_artist WHERE artist = 'Someone';
SELECT title FROM albums_by_artist WHERE artist = 'Someone';
INSERT INTO albums_by_artist VALUES ('x', 'y');

DROP TABLE local_scores, games;
DROP FOREIGN TABLE leaderboard, feed, albums, albums_raw, albums_by_artist;
SELECT ddb_delete_table('Leaderboards') AS deleted;
SELECT ddb_delete_table('Music') AS deleted;
DROP SERVER ddb CASCADE;

-- UPDATE and DELETE: items found by their stored key, an UpdateItem when
-- the key stays, a TransactWriteItems (Delete + Put) when it moves.
\ir sql/include/server.sql
SELECT ddb_create_table('modify_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE board (game_id text, player_id text, score bigint, note text)
  SERVER ddb OPTIONS (table 'modify_tab',
    partition_key 'pk', partition_key_format '{game_id}#{shard}',
    sort_key 'sk', sort_key_format '{score:020}#{player_id}',
    shards '4', shard_strategy 'calculated', shard_by 'player_id',
    shard_hash 'fnv1a_32', legacy_unsharded 'true');
INSERT INTO board SELECT 'g', 'p' || i, i * 10, 'n' || i FROM generate_series(1, 8) i;

-- a non-key column: UpdateItem; attributes no column maps are kept
SELECT shard_fdw_request('ddb', 'UpdateItem', jsonb_build_object(
  'TableName', 'modify_tab', 'Key', jsonb_build_object(
     'pk', jsonb_build_object('S', k.partition_key),
     'sk', jsonb_build_object('S', k.sort_key)),
  'UpdateExpression', 'SET #e = :x',
  'ExpressionAttributeNames', '{"#e": "extra"}'::jsonb,
  'ExpressionAttributeValues', '{":x": {"S": "kept"}}'::jsonb)) AS upd
  FROM shard_fdw_key('board', '{"game_id": "g", "player_id": "p1", "score": 10}') k;
EXPLAIN (VERBOSE, COSTS OFF) UPDATE board SET note = 'changed' WHERE game_id = 'g' AND player_id = 'p1';
UPDATE board SET note = 'changed' WHERE game_id = 'g' AND player_id = 'p1' RETURNING *;
SELECT i -> 'Item' -> 'note' AS note, i -> 'Item' -> 'extra' AS extra
  FROM shard_fdw_key('board', '{"game_id": "g", "player_id": "p1", "score": 10}') k,
       LATERAL (SELECT shard_fdw_request('ddb', 'GetItem', jsonb_build_object(
         'TableName', 'modify_tab', 'Key', jsonb_build_object(
           'pk', jsonb_build_object('S', k.partition_key),
           'sk', jsonb_build_object('S', k.sort_key)))) AS i) x;
UPDATE board SET note = NULL WHERE game_id = 'g' AND player_id = 'p2';
SELECT player_id, note FROM board WHERE game_id = 'g' AND player_id = 'p2';

-- a new score moves the item to a new sort key, in one transaction
UPDATE board SET score = 999 WHERE game_id = 'g' AND player_id = 'p3' RETURNING player_id, score;
SELECT player_id, score, note FROM board WHERE game_id = 'g' ORDER BY score DESC LIMIT 3;
SELECT count(*) AS items FROM board WHERE game_id = 'g';
SELECT count(*) AS old_item FROM board WHERE game_id = 'g' AND player_id = 'p3' AND score = 30;
-- moving onto an existing key is a unique violation, and changes nothing
INSERT INTO board VALUES ('g', 'p4', 50, 'twin');
UPDATE board SET score = 50 WHERE game_id = 'g' AND player_id = 'p4' AND score = 40;
SELECT score, note FROM board WHERE game_id = 'g' AND player_id = 'p4' ORDER BY score;
-- every row of a game, shard by shard
UPDATE board SET score = score + 1 WHERE game_id = 'g' AND note LIKE 'n%';
SELECT player_id, score FROM board WHERE game_id = 'g' ORDER BY score;

-- an item under the legacy bare key moves into its shard when updated
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "modify_tab",
  "Item": {"pk": {"S": "g"}, "sk": {"S": "00000000000000000007#old"},
           "player_id": {"S": "old"}, "score": {"N": "7"}}}') AS put;
UPDATE board SET note = 'migrated' WHERE game_id = 'g' AND player_id = 'old';
SELECT shard_fdw_request('ddb', 'GetItem', '{"TableName": "modify_tab",
  "Key": {"pk": {"S": "g"}, "sk": {"S": "00000000000000000007#old"}}}') AS legacy_item;
SELECT partition_key, (SELECT count(*) FROM board WHERE game_id = 'g' AND player_id = 'old') AS found
  FROM shard_fdw_key('board', '{"game_id": "g", "player_id": "old", "score": 7}');

-- DELETE by stored key, with RETURNING from the old item
DELETE FROM board WHERE game_id = 'g' AND player_id = 'p5' RETURNING *;
DELETE FROM board WHERE game_id = 'g' AND score > 60;
SELECT player_id, score FROM board WHERE game_id = 'g' ORDER BY score;

-- random shards: the shard an item was read from comes along in ctid
CREATE FOREIGN TABLE feed (topic text, seq int, body text)
  SERVER ddb OPTIONS (table 'modify_tab',
    partition_key 'pk', partition_key_format 'feed#{topic}#{shard}',
    sort_key 'sk', sort_key_format '{seq:010}', shards '4', shard_strategy 'random');
INSERT INTO feed SELECT 't', i, 'b' || i FROM generate_series(1, 20) i;
CREATE TEMP VIEW feed_keys AS
  SELECT i -> 'pk' ->> 'S' AS pk, i -> 'sk' ->> 'S' AS sk
  FROM jsonb_array_elements(shard_fdw_request('ddb', 'Scan', '{"TableName": "modify_tab",
    "FilterExpression": "begins_with(pk, :f)",
    "ExpressionAttributeValues": {":f": {"S": "feed#"}}}') -> 'Items') i;
CREATE TEMP TABLE feed_keys_before AS SELECT * FROM feed_keys;
-- an UPDATE that keeps the key leaves each item in its random shard
UPDATE feed SET body = upper(body) WHERE topic = 't' AND seq % 2 = 0;
SELECT count(*) AS items_moved FROM (TABLE feed_keys EXCEPT TABLE feed_keys_before) moved;
-- one that changes the key moves the item within its shard
UPDATE feed SET seq = seq + 100 WHERE topic = 't' AND seq = 1;
SELECT k.pk = b.pk AS same_shard, k.sk
  FROM feed_keys k JOIN feed_keys_before b ON b.sk = '0000000001' WHERE k.sk = '0000000101';
-- a DELETE without RETURNING runs in the scan: a conditional DeleteItem per
-- matching item, many in flight; the row count is the items it deleted
EXPLAIN (VERBOSE, COSTS OFF) DELETE FROM feed WHERE topic = 't' AND seq > 15;
DELETE FROM feed WHERE topic = 't' AND seq > 15;
\echo deleted :ROW_COUNT
SELECT seq, body FROM feed WHERE topic = 't' ORDER BY seq;

-- DynamoDB reads no snapshot: a statement that adds items to the table it
-- reads (an UPDATE that moves items to a new key, INSERT ... SELECT) reads
-- every item first, or the later pages of its scan would hold the items it
-- wrote, and an UPDATE moving items ahead would meet them again and again
CREATE FOREIGN TABLE ahead (game text, player text, score bigint, pad text)
  SERVER ddb OPTIONS (table 'modify_tab',
    partition_key 'pk', partition_key_format 'ahead#{game}',
    sort_key 'sk', sort_key_format '{score:010}#{player}');
INSERT INTO ahead SELECT 'g', 'p' || i, i, repeat('x', 20000) FROM generate_series(1, 200) i;
SET statement_timeout = '60s';
EXPLAIN (COSTS OFF) UPDATE ahead SET score = score + 1000 WHERE game = 'g';
UPDATE ahead SET score = score + 1000 WHERE game = 'g';
SELECT count(*), min(score), max(score) FROM ahead WHERE game = 'g';
INSERT INTO ahead SELECT game, player, score + 1000, pad FROM ahead WHERE game = 'g';
SELECT count(*), min(score), max(score) FROM ahead WHERE game = 'g';
-- the rows read ahead go to disk past work_mem
SET work_mem = '64kB';
WITH moved AS (UPDATE ahead SET score = score + 10000 WHERE game = 'g' RETURNING score)
  SELECT count(*), min(score), max(score) FROM moved;
RESET work_mem;
RESET statement_timeout;
-- an UPDATE that keeps keys and a DELETE add no items: they read as they go
EXPLAIN (COSTS OFF) UPDATE ahead SET pad = 'y' WHERE game = 'g';
EXPLAIN (COSTS OFF) DELETE FROM ahead WHERE game = 'g';
-- another foreign table on the same DynamoDB table counts as the same
EXPLAIN (COSTS OFF) INSERT INTO feed SELECT 'u', score, pad FROM ahead WHERE game = 'g';
-- a direct DELETE checks the conditions DynamoDB cannot evaluate itself
DELETE FROM ahead WHERE game = 'g' AND player ~ '^p1[0-9]$';
\echo deleted :ROW_COUNT
-- a DeleteItem applied whose answer is lost is retried, and still counts
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "reset", "action": "DeleteItem", "when": "after"}'
DELETE FROM ahead WHERE game = 'g' AND player = 'p20';
\echo deleted :ROW_COUNT
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"
\ir sql/include/explain_analyze.sql
SELECT explain_analyze($$DELETE FROM ahead WHERE game = 'g' AND player ~ '^p2[1-9]$'$$);
DELETE FROM ahead WHERE game = 'g';
\echo deleted :ROW_COUNT

-- an UPDATE whose plan is a scan of its table runs in that scan: the rows'
-- writes are in flight together (up to twice max_concurrency), and a row
-- counts, and is returned, once DynamoDB has written it
CREATE FOREIGN TABLE bulk (game_id text, player_id text, score bigint, note text)
  SERVER ddb OPTIONS (table 'modify_tab',
    partition_key 'pk', partition_key_format 'bulk#{game_id}#{shard}',
    sort_key 'sk', sort_key_format '{score:020}#{player_id}',
    shards '4', shard_strategy 'calculated', shard_by 'player_id', shard_hash 'fnv1a_32');
INSERT INTO bulk SELECT 'g', 'p' || i, i, NULL FROM generate_series(1, 40) i;
EXPLAIN (COSTS OFF) UPDATE bulk SET score = score + 100 WHERE game_id = 'g' AND score > 10;
WITH moved AS (UPDATE bulk SET score = score + 100 WHERE game_id = 'g' AND score > 10
               RETURNING player_id, score)
  SELECT count(*), count(DISTINCT player_id), min(score), max(score) FROM moved;
-- the statement's count is the SELECT's, not its WITH's
\echo selected :ROW_COUNT
UPDATE bulk SET note = 'n' || score WHERE game_id = 'g' AND score < 100;
\echo updated :ROW_COUNT
SELECT count(*), count(note), min(score), max(score) FROM bulk WHERE game_id = 'g';
-- a move onto a taken key fails the statement, once the rows in flight
-- are judged: the count of rows written is exact
INSERT INTO bulk VALUES ('g', 'p5', 6, 'twin');
UPDATE bulk SET score = score + 1 WHERE game_id = 'g' AND score < 10 AND note <> 'twin';
UPDATE bulk SET score = score + 1 WHERE game_id = 'g' AND score < 10 AND note <> 'twin'
  RETURNING player_id;
SELECT player_id, score, note FROM bulk WHERE game_id = 'g' AND score < 100 ORDER BY player_id, score;
-- a join goes row by row, through the ModifyTable node
CREATE TEMP TABLE joined (player_id text, note text);
INSERT INTO joined VALUES ('p1', 'joined'), ('p2', 'joined'), ('nobody', 'joined');
UPDATE bulk SET note = j.note, score = score + 1000 FROM joined j
  WHERE bulk.game_id = 'g' AND bulk.player_id = j.player_id
  RETURNING bulk.player_id, bulk.score, bulk.note;
SELECT player_id, score, note FROM bulk WHERE game_id = 'g' AND note = 'joined' ORDER BY player_id;

DROP FOREIGN TABLE board, feed, ahead, bulk;
SELECT ddb_delete_table('modify_tab') AS deleted;
DROP SERVER ddb CASCADE;

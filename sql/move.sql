-- An UPDATE that changes the key moves the item (TransactWriteItems:
-- Delete + Put) and keeps what an UpdateItem would leave: every attribute
-- no column maps (another application's, a TTL attribute without a
-- column, a map, the put token), byte for byte.  The mapped attributes
-- take the row's new values (removed for NULL), the keys and the index
-- keys are written anew from the templates.
\ir sql/include/server.sql
SELECT ddb_create_table('move_tab', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE lb (game_id text, player_id text, score bigint, note text)
  SERVER ddb OPTIONS (table 'move_tab',
    partition_key 'pk', partition_key_format '{game_id}#{shard}',
    sort_key 'sk', sort_key_format '{score:020}#{player_id}',
    shards '2', shard_strategy 'calculated', shard_by 'player_id',
    index_partition_key 'gpk', index_partition_key_format '{game_id}#{player_id}',
    ttl_attribute 'expires');

-- the attributes another writer keeps beside the columns
CREATE TABLE extras (player_id text PRIMARY KEY, attrs jsonb);
INSERT INTO extras VALUES
  ('p1', '{"expires": {"N": "4102444800"}, "app": {"S": "other writer"},
           "profile": {"M": {"tags": {"SS": ["a", "b"]}, "n": {"N": "1.50"},
                             "l": {"L": [{"BOOL": true}, {"NULL": true}, {"B": "AAEC"}]}}}}'),
  ('p2', '{"expires": {"N": "4102444800"}, "app": {"S": "ünïcode \" \\ ✓"}}'),
  ('p3', '{"app": {"N": "-0.0001"}}');

-- item p, its key as the table writes it
CREATE FUNCTION item_key(p text, s bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('pk', jsonb_build_object('S', k.partition_key),
                            'sk', jsonb_build_object('S', k.sort_key))
    FROM shard_fdw_key('lb', jsonb_build_object('game_id', 'g', 'player_id', p, 'score', s)) k $$;
-- the stored item of player p with score s
CREATE FUNCTION stored(p text, s bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT shard_fdw_request('ddb', 'GetItem', jsonb_build_object(
    'TableName', 'move_tab', 'Key', item_key(p, s), 'ConsistentRead', true)) -> 'Item' $$;
-- what of the stored item of p at s no column maps, nor any key
CREATE FUNCTION unmapped(p text, s bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT stored(p, s) - 'pk' - 'sk' - 'gpk' - 'game_id' - 'player_id' - 'score' - 'note' $$;

-- p1 and p2 written by another writer, with a stale index key; p3 by an
-- INSERT, which stores a put token, then given an attribute
SELECT count(shard_fdw_request('ddb', 'PutItem', jsonb_build_object(
  'TableName', 'move_tab',
  'Item', item_key(e.player_id, 10) || e.attrs || jsonb_build_object(
    'gpk', '{"S": "stale"}'::jsonb,
    'game_id', '{"S": "g"}'::jsonb, 'player_id', jsonb_build_object('S', e.player_id),
    'score', '{"N": "10"}'::jsonb, 'note', '{"S": "n"}'::jsonb)))) AS put
  FROM extras e WHERE e.player_id <> 'p3';
INSERT INTO lb VALUES ('g', 'p3', 10, 'n');
SELECT shard_fdw_request('ddb', 'UpdateItem', jsonb_build_object(
  'TableName', 'move_tab', 'Key', item_key('p3', 10),
  'UpdateExpression', 'SET app = :a',
  'ExpressionAttributeValues', jsonb_build_object(':a', e.attrs -> 'app'))) AS upd
  FROM extras e WHERE e.player_id = 'p3';
SELECT unmapped('p3', 10) ? 'shard_fdw_put' AS token;
SELECT unmapped('p3', 10) - 'shard_fdw_put' AS p3_unmapped;
SELECT unmapped('p3', 10) AS p3_before \gset

-- in the scan: a new score moves every item, each keeping its attributes
EXPLAIN (COSTS OFF) UPDATE lb SET score = score + 1 WHERE game_id = 'g';
UPDATE lb SET score = score + 1 WHERE game_id = 'g';
SELECT stored(player_id, 10) IS NULL AS old_gone, unmapped(player_id, 11) = attrs AS kept
  FROM extras WHERE player_id <> 'p3' ORDER BY player_id;
SELECT unmapped('p3', 11) = :'p3_before'::jsonb AS p3_kept;
SELECT stored('p1', 11) -> 'gpk' AS index_key, stored('p1', 11) -> 'note' AS note;
SELECT player_id, score, note FROM lb WHERE game_id = 'g' ORDER BY player_id;

-- a NULL column's attribute goes, the others stay
UPDATE lb SET score = 12, note = NULL WHERE game_id = 'g' AND player_id = 'p2';
SELECT stored('p2', 12) ? 'note' AS has_note, unmapped('p2', 12) = attrs AS kept
  FROM extras WHERE player_id = 'p2';

-- row by row, joined to a local table
CREATE TABLE bonus (player_id text, points int);
INSERT INTO bonus VALUES ('p1', 100), ('p2', 200), ('p3', 300);
EXPLAIN (COSTS OFF)
UPDATE lb SET score = lb.score + b.points FROM bonus b
  WHERE lb.game_id = 'g' AND lb.player_id = b.player_id;
UPDATE lb SET score = lb.score + b.points FROM bonus b
  WHERE lb.game_id = 'g' AND lb.player_id = b.player_id
  RETURNING lb.player_id, lb.score;
SELECT e.player_id, unmapped(e.player_id, l.score) = e.attrs AS kept
  FROM extras e JOIN lb l ON l.game_id = 'g' AND l.player_id = e.player_id
  WHERE e.player_id <> 'p3' ORDER BY e.player_id;
SELECT unmapped('p3', 311) = :'p3_before'::jsonb AS p3_kept;
SELECT count(*) AS items FROM lb WHERE game_id = 'g';
-- what DynamoDB holds of p1, in full
SELECT jsonb_pretty(stored('p1', 111));

-- a move onto a taken key is a unique violation and keeps the item whole
INSERT INTO lb VALUES ('g', 'p1', 500, 'twin');
\set VERBOSITY terse
UPDATE lb SET score = 500 WHERE game_id = 'g' AND player_id = 'p1' AND score = 111;
\set VERBOSITY default
SELECT unmapped('p1', 111) = attrs AS kept FROM extras WHERE player_id = 'p1';

-- a kept attribute changed between the GetItem and the move (the Delete's
-- condition fails): the item is read again and moved; changed at every
-- try, the row fails as a serialization failure, its item left whole
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "TransactionCanceledException", "message": "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]", "action": "TransactWriteItems", "count": 3}'
UPDATE lb SET score = 120 WHERE game_id = 'g' AND player_id = 'p1' AND score = 111
  RETURNING player_id, score;
SELECT unmapped('p1', 120) = attrs AS kept FROM extras WHERE player_id = 'p1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "TransactionCanceledException", "message": "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]", "action": "TransactWriteItems", "count": 11}'
UPDATE lb SET score = 130 WHERE game_id = 'g' AND player_id = 'p1' AND score = 120;
SELECT unmapped('p1', 120) = attrs AS kept FROM extras WHERE player_id = 'p1';

DROP TABLE bonus, extras;
DROP FUNCTION unmapped, stored, item_key;
DROP FOREIGN TABLE lb;
SELECT ddb_delete_table('move_tab') AS status;
DROP SERVER ddb CASCADE;

-- The shard_fdw demo: a write-sharded game leaderboard (the partition key
-- game_id#hash(player_id)%10 spreads one game's writes over ten
-- partitions; the sort key, the zero-padded score#player_id, keeps each
-- shard in score order), end to end, on a real PostgreSQL and DynamoDB
-- Local.  test/demo.sh runs it with SHARD_FDW_ENDPOINT pointing at
-- DynamoDB Local.
\set ON_ERROR_STOP 1
\getenv endpoint SHARD_FDW_ENDPOINT
\echo '== the extension, a server, and credentials'
CREATE EXTENSION IF NOT EXISTS shard_fdw;
DROP SERVER IF EXISTS ddb CASCADE;
CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (region 'us-east-1', endpoint :'endpoint');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (access_key_id 'AKIDDEMO', secret_access_key 'SECRETDEMO');

\echo '== the DynamoDB table Leaderboards (pk, sk), made through the server'
SELECT shard_fdw_request('ddb', 'CreateTable', '{
  "TableName": "Leaderboards", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "sk", "AttributeType": "S"}]
}') #>> '{TableDescription,TableStatus}' AS table_status;

\echo '== the foreign table: pk = game_id#hash(player_id)%10, sk = zero-padded score#player_id'
CREATE FOREIGN TABLE leaderboard (
  game_id   text   NOT NULL,
  player_id text   NOT NULL,
  score     bigint NOT NULL,
  achieved  timestamptz
) SERVER ddb OPTIONS (
  table 'Leaderboards',
  partition_key 'pk', partition_key_format '{game_id}#{shard}',
  sort_key 'sk',      sort_key_format '{score:020}#{player_id}',
  shards '10', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32'
);

\echo '== 5,000 scores for two games, written as sharded PutItems'
EXPLAIN (COSTS OFF)
INSERT INTO leaderboard VALUES ('game_1', 'someone', 1, now());
\timing on
INSERT INTO leaderboard
SELECT 'game_' || (i % 2), 'player' || i, (i * 7919) % 1000000,
       timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second'
  FROM generate_series(1, 5000) i;
\timing off

\echo '== how the items of game_1 are spread over its ten shards'
SELECT s ->> 'S' AS partition_key, count(*) AS items
  FROM (SELECT jsonb_array_elements(
                 shard_fdw_request('ddb', 'Scan', '{"TableName": "Leaderboards",
                   "ProjectionExpression": "pk"}') -> 'Items') #> '{pk}' AS s) x
 WHERE s ->> 'S' LIKE 'game_1#%'
 GROUP BY 1 ORDER BY 1;

\echo '== the top 10 of game_1: ten parallel Queries, merged by score'
SELECT player_id, score, achieved
  FROM leaderboard
 WHERE game_id = 'game_1'
 ORDER BY score DESC
 LIMIT 10;

EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT player_id, score
  FROM leaderboard
 WHERE game_id = 'game_1'
 ORDER BY score DESC
 LIMIT 100;

\echo '== one player: its shard is known, so one Query'
SELECT game_id, player_id, score FROM leaderboard
 WHERE game_id = 'game_1' AND player_id = 'player4321';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT game_id, player_id, score FROM leaderboard
 WHERE game_id = 'game_1' AND player_id = 'player4321';

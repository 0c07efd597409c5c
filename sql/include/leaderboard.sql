-- The leaderboard hashed on player_id: the DynamoDB table named by the psql
-- variable lb_table, made here, and over it the foreign table named by lb
-- (lb when the variable is not set): the partition key {game_id}#{shard}, the sort
-- key {score:020}#{player_id}, ten shards calculated from player_id with
-- fnv1a_32.
\if :{?lb}
\else
\set lb lb
\endif
SELECT ddb_create_table(:'lb_table', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE :lb (
  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL
) SERVER ddb OPTIONS (
  table :'lb_table',
  partition_key 'pk', partition_key_format '{game_id}#{shard}',
  sort_key 'sk', sort_key_format '{score:020}#{player_id}',
  shards '10', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32');

-- Statements sqlsmith found crashing a backend, cut down to their core:
-- a connection closed or rebuilt while a scan of the same statement still
-- holds it.
\ir sql/include/server.sql
SELECT ddb_create_table('smith_scores', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE scores (
  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL
) SERVER ddb OPTIONS (
  table 'smith_scores',
  partition_key 'pk', partition_key_format '{game_id}#{shard}',
  sort_key 'sk', sort_key_format '{score:020}#{player_id}',
  shards '10', shard_strategy 'random');
INSERT INTO scores
SELECT 'game_1', 'player' || i, i * 10 FROM generate_series(1, 30) i;

-- the scan of the subquery has read everything, nothing is in flight, but
-- its requests are still held until the statement ends: the connection
-- stays open
SELECT (SELECT count(*) FROM scores) AS n, shard_fdw_disconnect_all() AS closed;
-- a scan begun but not started when the function runs
WITH d AS MATERIALIZED (SELECT shard_fdw_disconnect_all() AS closed)
SELECT d.closed, (SELECT max(score) FROM scores) AS top FROM d;
-- a connection used earlier in the transaction stays open until its end
BEGIN;
SELECT count(*) FROM scores WHERE game_id = 'game_1';
SELECT shard_fdw_disconnect_all() AS closed;
COMMIT;
-- in a new transaction it is closed, and opened again by the next scan
SELECT shard_fdw_disconnect_all() AS closed;
SELECT count(*) FROM scores WHERE game_id = 'game_1';

-- the server's options change while a scan of the statement holds its
-- connection: the connection is rebuilt only when the transaction ends
ALTER SERVER ddb OPTIONS (ADD max_retries '3');
CREATE FUNCTION retune_and_count() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  ALTER SERVER ddb OPTIONS (SET max_retries '4');
  RETURN (SELECT count(*) FROM scores WHERE score > 100);
END
$$;
SELECT (SELECT count(*) FROM scores) AS n, retune_and_count() AS over_100;
SELECT count(*) FROM scores WHERE game_id = 'game_1';


-- a Query with no sort key condition and no projection (a column receives
-- the whole item) names no attribute it does not use: DynamoDB refuses
-- an unused name
CREATE FOREIGN TABLE score_items (game_id text, sk text, item jsonb OPTIONS (attribute '*'))
  SERVER ddb OPTIONS (table 'smith_scores',
    partition_key 'pk', partition_key_format '{game_id}#{shard}',
    sort_key 'sk',
    shards '10', shard_strategy 'random');
SELECT item ->> 'player_id' AS player_id, item -> 'score' AS score
  FROM score_items WHERE game_id = 'game_1'
 ORDER BY (item ->> 'score')::int LIMIT 3;

DROP FUNCTION retune_and_count();
DROP FOREIGN TABLE scores, score_items;
SELECT ddb_delete_table('smith_scores') AS deleted;
DROP SERVER ddb CASCADE;

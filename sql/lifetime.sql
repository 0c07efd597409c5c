-- Lifetimes: a scan's requests live as long as the executor state that
-- reads them, whatever (sub)transaction a fetch runs in.  Cursors read in
-- savepoints that roll back, in PL/pgSQL exception blocks, WITH HOLD, and
-- scans restarted inside a savepoint, over every kind of read.
\ir sql/include/server.sql
SELECT ddb_create_table('lifetime_tab', 'pk', 'sk') AS status;

CREATE FOREIGN TABLE feed (topic text NOT NULL, seq int NOT NULL, body text)
  SERVER ddb OPTIONS (table 'lifetime_tab',
    partition_key 'pk', partition_key_format '{topic}#{shard}',
    sort_key 'sk', sort_key_format '{seq:010}',
    shards '4', shard_strategy 'calculated', shard_by 'seq', shard_hash 'fnv1a_32');
INSERT INTO feed SELECT 't' || (i % 2), i, repeat('b', 1000)
  FROM generate_series(1, 400) i;
-- move_in(cursor, n): move a cursor n rows on; returns how many it moved
CREATE FUNCTION move_in(c refcursor, n bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  moved bigint;
BEGIN
  MOVE FORWARD n FROM c;
  GET DIAGNOSTICS moved = ROW_COUNT;
  RETURN moved;
END
$$;

-- a cursor first read inside a savepoint that rolls back: the scan's
-- requests were made there, but the cursor goes on
EXPLAIN (COSTS OFF) SELECT seq FROM feed WHERE topic = 't1' ORDER BY seq;
BEGIN;
DECLARE c CURSOR FOR SELECT seq FROM feed WHERE topic = 't1' ORDER BY seq;
SAVEPOINT s;
FETCH 2 FROM c;
ROLLBACK TO s;
FETCH 2 FROM c;
COMMIT;

-- the same in PL/pgSQL: a fetch in a block whose exception rolls it back
DO $$
DECLARE
  c refcursor;
  r record;
BEGIN
  OPEN c FOR SELECT seq FROM feed WHERE topic = 't1' ORDER BY seq;
  BEGIN
    FETCH c INTO r;
    RAISE EXCEPTION 'rolled back';
  EXCEPTION WHEN raise_exception THEN
    NULL;
  END;
  FETCH c INTO r;
  RAISE NOTICE 'after the rollback: %', r.seq;
END
$$;

-- a parallel Scan moved partly in a savepoint: no row lost or repeated
BEGIN;
DECLARE c CURSOR FOR SELECT seq FROM feed;
SAVEPOINT s;
SELECT move_in('c', 10);
ROLLBACK TO s;
SELECT move_in('c', 1000);
COMMIT;

-- one BatchGetItem, and a merge with a Limit per shard
EXPLAIN (COSTS OFF)
  SELECT seq FROM feed WHERE topic = 't1' AND seq IN (1, 3, 5, 7, 9, 11);
BEGIN;
DECLARE c CURSOR FOR
  SELECT seq FROM feed WHERE topic = 't1' AND seq IN (1, 3, 5, 7, 9, 11);
SAVEPOINT s;
SELECT move_in('c', 1);
ROLLBACK TO s;
SELECT move_in('c', 1000);
DECLARE d CURSOR FOR
  SELECT seq FROM feed WHERE topic = 't0' ORDER BY seq DESC LIMIT 50;
SAVEPOINT s;
FETCH 2 FROM d;
ROLLBACK TO s;
FETCH 2 FROM d;
SELECT move_in('d', 40);
FETCH ALL FROM d;
COMMIT;

-- a cursor WITH HOLD first read in a savepoint, then kept past COMMIT
BEGIN;
DECLARE c CURSOR WITH HOLD FOR SELECT seq FROM feed WHERE topic = 't1' ORDER BY seq;
SAVEPOINT s;
FETCH 2 FROM c;
ROLLBACK TO s;
COMMIT;
FETCH 2 FROM c;
CLOSE c;

-- a scan restarted inside a savepoint (the next LATERAL row, the next
-- value of a correlated subquery) and read on after its rollback
BEGIN;
DECLARE c CURSOR FOR
  SELECT g.t, f.seq FROM (VALUES ('t0'), ('t1')) g(t),
    LATERAL (SELECT seq FROM feed WHERE topic = g.t ORDER BY seq LIMIT 150) f;
SELECT move_in('c', 149);
SAVEPOINT s;
FETCH 2 FROM c;
ROLLBACK TO s;
FETCH 2 FROM c;
SELECT move_in('c', 1000);
DECLARE d CURSOR FOR
  SELECT i, (SELECT seq FROM feed WHERE topic = 't' || (i % 2) AND seq = i)
    FROM generate_series(1, 6) i;
FETCH 2 FROM d;
SAVEPOINT s;
FETCH 2 FROM d;
ROLLBACK TO s;
FETCH ALL FROM d;
COMMIT;

-- a scan holds one group of requests from its beginning to its end, and
-- the functions that read shard metadata leave none behind them
CREATE VIEW request_groups AS
  SELECT count(*) AS groups FROM pg_backend_memory_contexts
   WHERE name = 'shard_fdw requests';
SELECT ddb_create_table('lifetime_shards', 'file_path') AS status;
CREATE FOREIGN TABLE files (file_path text, ts bigint)
  SERVER ddb OPTIONS (table 'lifetime_tab',
    partition_key 'pk', partition_key_format '{file_path}_{shard}',
    sort_key 'sk', sort_key_format '{ts:020}',
    shard_strategy 'dynamic', metadata_table 'lifetime_shards',
    metadata_key 'file_path', max_shards '4', metadata_cache_ms '0');
INSERT INTO files VALUES ('f1', 1);
BEGIN;
DECLARE c CURSOR FOR SELECT seq FROM feed WHERE topic = 't1' ORDER BY seq;
SELECT * FROM request_groups;
SAVEPOINT s;
FETCH 1 FROM c;
ROLLBACK TO s;
SELECT * FROM request_groups;
CLOSE c;
SELECT count(*) AS keys
  FROM generate_series(1, 5) i,
       shard_fdw_key('files', jsonb_build_object('file_path', 'f' || i));
SELECT count(*) AS items
  FROM generate_series(1, 5) i,
       shard_fdw_metadata('files', jsonb_build_object('file_path', 'f' || i));
SELECT * FROM request_groups;
COMMIT;

-- a cursor whose fetch failed, then closed, is never ended by the
-- executor: its requests go when its memory does, not at the end of the
-- transaction
CREATE FOREIGN TABLE feed_numbers (topic text NOT NULL, seq int NOT NULL, body int)
  SERVER ddb OPTIONS (table 'lifetime_tab',
    partition_key 'pk', partition_key_format '{topic}#{shard}',
    sort_key 'sk', sort_key_format '{seq:010}',
    shards '4', shard_strategy 'calculated', shard_by 'seq', shard_hash 'fnv1a_32');
DO $$
DECLARE
  c refcursor;
  r record;
BEGIN
  FOR i IN 1..5 LOOP
    OPEN c FOR SELECT body FROM feed_numbers WHERE topic = 't1' ORDER BY seq;
    BEGIN
      FETCH c INTO r;
    EXCEPTION WHEN invalid_text_representation THEN
      NULL;
    END;
    CLOSE c;
  END LOOP;
  RAISE NOTICE 'request groups left: %', (SELECT groups FROM request_groups);
END
$$;

DROP VIEW request_groups;
DROP FUNCTION move_in(refcursor, bigint);
DROP FOREIGN TABLE feed, files, feed_numbers;
SELECT ddb_delete_table('lifetime_tab') AS deleted;
SELECT ddb_delete_table('lifetime_shards') AS deleted;
DROP SERVER ddb CASCADE;

-- The audit log of files, written by another application as the audit-log
-- article does: pk is '<file_path>_<md5(file_path + ts) % 10 + 1>', ts a
-- number, who; the file path lives only inside pk.  The foreign table reads
-- it with the article's layout, then an ALTER changes every option that places a row at once
-- (hash, base, count and template).  Every row must still be read once,
-- by a Query of its file, a point read and a Scan, and be updated and
-- deleted, before and after shard_fdw_reshard has moved the items; an
-- update made before the move survives it.
\ir sql/include/server.sql
SELECT ddb_create_table('AuditLog', 'pk', 'ts:N') AS status;

-- the article's writer: shard = md5(file_path + ts) read as a number, mod 10, + 1
CREATE FUNCTION audit_shard(file_path text, ts bigint) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  digest text := md5(file_path || ts);
  shard int := 0;
BEGIN
  FOR i IN 1..32 LOOP
    shard := (shard * 16 + ('x' || substr(digest, i, 1))::bit(4)::int) % 10;
  END LOOP;
  RETURN shard + 1;
END
$$;
CREATE TABLE audit_local AS
  SELECT f AS file_path, 1000 + i::bigint AS ts, 'u' || i AS who
    FROM (VALUES ('/shared/a.txt', 200), ('/shared/b.txt', 60)) AS files(f, n),
         generate_series(1, n) i;
SELECT count(*) AS items_written FROM audit_local,
  LATERAL shard_fdw_request('ddb', 'PutItem', jsonb_build_object(
    'TableName', 'AuditLog', 'Item', jsonb_build_object(
      'pk', jsonb_build_object('S', file_path || '_' || audit_shard(file_path, ts)),
      'ts', jsonb_build_object('N', ts::text),
      'who', jsonb_build_object('S', who))));

CREATE FOREIGN TABLE audit (file_path text NOT NULL, ts bigint NOT NULL, who text)
  SERVER ddb OPTIONS (table 'AuditLog', partition_key 'pk',
  partition_key_format '{file_path}_{shard}', sort_key 'ts',
  shards '10', shard_strategy 'calculated', shard_by 'file_path,ts',
  shard_hash 'md5', shard_base '1');

-- the checks made at every step: each file's rows by a Query, the whole
-- table by a Scan, and every row by a point read
CREATE FUNCTION same_as_local() RETURNS TABLE (check_name text, ok boolean)
LANGUAGE sql AS $$
  SELECT 'query of ' || f,
         (SELECT array_agg(a::text ORDER BY a.ts) FROM audit a WHERE file_path = f) =
         (SELECT array_agg(l::text ORDER BY l.ts) FROM audit_local l WHERE file_path = f)
    FROM (VALUES ('/shared/a.txt'), ('/shared/b.txt')) AS files(f)
  UNION ALL
  SELECT 'scan', (SELECT array_agg(a::text ORDER BY a.file_path, a.ts) FROM audit a) =
                 (SELECT array_agg(l::text ORDER BY l.file_path, l.ts) FROM audit_local l)
  UNION ALL
  SELECT 'point reads', (SELECT count(*) FROM audit_local l
                          WHERE (SELECT a.who FROM audit a WHERE a.file_path = l.file_path
                                    AND a.ts = l.ts) = l.who) =
                         (SELECT count(*) FROM audit_local)
$$;
-- the items DynamoDB holds whose key is not the one the article's layout
-- (the first check) or the new one (the second) gives their row
CREATE FUNCTION stored() RETURNS TABLE (pk text, ts bigint) LANGUAGE sql AS $$
  SELECT i #>> '{pk,S}', (i #>> '{ts,N}')::bigint
    FROM jsonb_array_elements(shard_fdw_request('ddb', 'Scan',
           '{"TableName": "AuditLog", "ConsistentRead": true}') -> 'Items') i
$$;
CREATE FUNCTION misplaced(new_layout boolean) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM audit_local l FULL JOIN stored() s
      ON s.ts = l.ts AND s.pk = CASE WHEN new_layout
           THEN l.file_path || '#' ||
                get_byte(sha256(convert_to(l.file_path || l.ts, 'UTF8')), 31) % 8
           ELSE l.file_path || '_' || audit_shard(l.file_path, l.ts) END
   WHERE s.pk IS NULL OR l.ts IS NULL
$$;
SELECT * FROM same_as_local();
SELECT misplaced(false);

-- sha256 (its 256 bits mod 8, the last byte's low bits), from 0, '#'
ALTER FOREIGN TABLE audit OPTIONS (SET shard_hash 'sha256', SET shard_base '0',
  SET shards '8', SET partition_key_format '{file_path}#{shard}');
SELECT * FROM same_as_local();
SELECT count(*) FROM audit WHERE file_path = '/shared/a.txt';
SELECT * FROM audit WHERE file_path = '/shared/a.txt' AND ts = 1001;
-- updated and deleted where the article's writer put them
UPDATE audit SET who = 'changed' WHERE file_path = '/shared/a.txt' AND ts = 1001 RETURNING *;
UPDATE audit_local SET who = 'changed' WHERE file_path = '/shared/a.txt' AND ts = 1001;
UPDATE audit SET who = who || '+' WHERE file_path = '/shared/b.txt' AND ts BETWEEN 1010 AND 1019;
UPDATE audit_local SET who = who || '+' WHERE file_path = '/shared/b.txt' AND ts BETWEEN 1010 AND 1019;
DELETE FROM audit WHERE file_path = '/shared/b.txt' AND ts > 1050;
DELETE FROM audit_local WHERE file_path = '/shared/b.txt' AND ts > 1050;
DELETE FROM audit WHERE file_path = '/shared/a.txt' AND ts = 1002 RETURNING *;
DELETE FROM audit_local WHERE file_path = '/shared/a.txt' AND ts = 1002;
SELECT * FROM same_as_local();

-- moved: every item at the key the new layout gives its row, the updates kept
SELECT moved > 0 AS moved, remaining FROM shard_fdw_reshard('audit');
SELECT misplaced(true);
SELECT * FROM same_as_local();
SELECT * FROM audit WHERE file_path = '/shared/a.txt' AND ts = 1001;
UPDATE audit SET who = 'again' WHERE file_path = '/shared/a.txt' AND ts = 1003;
UPDATE audit_local SET who = 'again' WHERE file_path = '/shared/a.txt' AND ts = 1003;
DELETE FROM audit WHERE file_path = '/shared/b.txt' AND ts = 1020;
DELETE FROM audit_local WHERE file_path = '/shared/b.txt' AND ts = 1020;
SELECT * FROM same_as_local();

-- and back to the article's layout: the moved items (no file_path either)
-- are read by the '#' template until they move again
ALTER FOREIGN TABLE audit OPTIONS (SET shard_hash 'md5', SET shard_base '1',
  SET shards '10', SET partition_key_format '{file_path}_{shard}');
SELECT * FROM same_as_local();
UPDATE audit SET who = 'back' WHERE file_path = '/shared/b.txt' AND ts = 1030;
UPDATE audit_local SET who = 'back' WHERE file_path = '/shared/b.txt' AND ts = 1030;
SELECT moved > 0 AS moved, remaining FROM shard_fdw_reshard('audit');
SELECT misplaced(false);
SELECT * FROM same_as_local();

DROP FUNCTION same_as_local(), misplaced(boolean), stored(), audit_shard(text, bigint);
DROP TABLE audit_local;
DROP FOREIGN TABLE audit;
SELECT ddb_delete_table('AuditLog') AS deleted;
DROP SERVER ddb CASCADE;

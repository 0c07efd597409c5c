-- DynamoDB's limits counted as DynamoDB counts them: an item's size (binary
-- values as their raw bytes), and the 4 KB an expression may take.
\ir sql/include/server.sql
CREATE OR REPLACE FUNCTION requests() RETURNS bigint LANGUAGE sql
  AS $$ SELECT requests FROM shard_fdw_stats() $$;

-- item size: attribute names plus values, binary values as raw bytes
SELECT ddb_create_table('limits_blobs', 'k') AS status;
CREATE FOREIGN TABLE blobs (k text, b bytea)
  SERVER ddb OPTIONS (table 'limits_blobs', partition_key 'k');
-- about 390 KB of bytes, 520 KB as base64 on the wire: DynamoDB takes it
INSERT INTO blobs VALUES ('k1', decode(repeat('ab', 390000), 'hex'));
SELECT k, length(b), md5(b) = md5(decode(repeat('ab', 390000), 'hex')) AS same
  FROM blobs WHERE k = 'k1';
-- the largest item: "k" "k2" "b" and the put token (13 + 16 bytes) beside
-- 409,567 bytes make 409,600, DynamoDB's limit
INSERT INTO blobs VALUES ('k2', decode(repeat('cd', 409567), 'hex'));
SELECT k, length(b) FROM blobs WHERE k = 'k2';
-- one byte more is refused before anything is sent
SELECT requests() AS before \gset
INSERT INTO blobs VALUES ('k3', decode(repeat('ef', 409568), 'hex'));
SELECT requests() - :before AS requests_sent;
-- without the put token (upsert mode, BatchWriteItem) 29 bytes more fit
ALTER FOREIGN TABLE blobs OPTIONS (ADD insert_mode 'upsert');
INSERT INTO blobs VALUES ('k4', decode(repeat('01', 409596), 'hex'));
SELECT k, length(b) FROM blobs WHERE k = 'k4';
INSERT INTO blobs VALUES ('k5', decode(repeat('01', 409597), 'hex'));
SELECT count(*) FROM blobs WHERE k IN ('k3', 'k5');

-- numbers, strings, sets, lists and maps: counted as DynamoDB counts them
CREATE FOREIGN TABLE mixed (k text, b bytea, n numeric, s text,
                            l text[] OPTIONS (ddb_type 'L'), ss text[], m jsonb)
  SERVER ddb OPTIONS (table 'limits_blobs', partition_key 'k', insert_mode 'upsert');
-- names k b n s l ss m: 8 bytes; "k6": 2; -12.5: 4 ("12" "50" in base 100,
-- an exponent byte, a sign byte); "é": 2; the list ["a", "bb"]: 3 + (1 + 1)
-- + (2 + 1) = 8; the set {"a", "bb"}: 3; the map {"x": "a"}: 3 + 1 + 1 + 1
-- = 6.  33 bytes and 409,567 bytes of binary make 409,600.
INSERT INTO mixed VALUES ('k6', decode(repeat('02', 409567), 'hex'), -12.5, 'é',
                          ARRAY['a', 'bb'], ARRAY['a', 'bb'], '{"x": "a"}');
SELECT k, length(b), n, s, l, ss, m FROM mixed WHERE k = 'k6';
INSERT INTO mixed VALUES ('k7', decode(repeat('02', 409568), 'hex'), -12.5, 'é',
                          ARRAY['a', 'bb'], ARRAY['a', 'bb'], '{"x": "a"}');
-- and DynamoDB refuses that item too
SELECT shard_fdw_request('ddb', 'PutItem', jsonb_build_object(
  'TableName', 'limits_blobs', 'Item', jsonb_build_object(
    'k', jsonb_build_object('S', 'k7'),
    'b', jsonb_build_object('B', translate(encode(decode(repeat('02', 409568), 'hex'), 'base64'), E'\n', '')),
    'n', jsonb_build_object('N', '-12.5'),
    's', jsonb_build_object('S', 'é'),
    'l', jsonb_build_object('L', jsonb_build_array(jsonb_build_object('S', 'a'), jsonb_build_object('S', 'bb'))),
    'ss', jsonb_build_object('SS', jsonb_build_array('a', 'bb')),
    'm', jsonb_build_object('M', jsonb_build_object('x', jsonb_build_object('S', 'a'))))));

-- an UPDATE of a wide table sets every column, and its UpdateExpression
-- must fit DynamoDB's 4 KB (names and values go in placeholders: the long
-- names take no room in it)
SELECT ddb_create_table('limits_wide', 'id') AS status;
-- make_wide(name, n): a foreign table of limits_wide with id and n columns
CREATE FUNCTION make_wide(name text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE FOREIGN TABLE %I (id text, %s) SERVER ddb OPTIONS (table %L, partition_key %L)',
                 name, (SELECT string_agg(format('a_column_with_a_rather_long_name_to_be_stored_%s text', i), ', ' ORDER BY i)
                          FROM generate_series(1, n) i),
                 'limits_wide', 'id');
END $$;
-- update_wide(name, n, v): set the n columns of row 'r1' to v, the last
-- one to NULL; the rows updated and the requests sent
CREATE FUNCTION update_wide(name text, n int, v text, OUT updated bigint, OUT requests bigint)
LANGUAGE plpgsql AS $$
DECLARE
  before bigint := requests();
BEGIN
  EXECUTE format('UPDATE %I SET %s, a_column_with_a_rather_long_name_to_be_stored_%s = NULL WHERE id = %L', name,
                 (SELECT string_agg(format('a_column_with_a_rather_long_name_to_be_stored_%s = %L', i, v), ', ')
                    FROM generate_series(1, n - 1) i), n, 'r1');
  GET DIAGNOSTICS updated = ROW_COUNT;
  requests := requests() - before;
END $$;
-- wide_values(name): the values of row 'r1''s columns, and how many hold each
CREATE FUNCTION wide_values(name text) RETURNS TABLE (value text, columns bigint)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format('SELECT e.value, count(*) FROM %I w, jsonb_each_text(to_jsonb(w)) e
                                WHERE w.id = %L AND e.key <> %L GROUP BY 1 ORDER BY 1', name, 'r1', 'id');
END $$;
SELECT make_wide('wide300', 300);
INSERT INTO wide300 (id, a_column_with_a_rather_long_name_to_be_stored_1) VALUES ('r1', 'old');
-- 300 columns: one UpdateItem (a GetItem reads the row first)
SELECT * FROM update_wide('wide300', 300, 'new');
SELECT * FROM wide_values('wide300');

-- 400 columns: two UpdateItems, each conditioned on the item existing
SELECT make_wide('wide400', 400);
SELECT * FROM update_wide('wide400', 400, 'newer');
SELECT * FROM wide_values('wide400');
-- a failure between them leaves the item partly updated, and says so
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "ValidationException", "message": "injected", "action": "UpdateItem", "skip": 1}'
DO $$
DECLARE
  message text;
  detail text;
  context text;
BEGIN
  PERFORM update_wide('wide400', 400, 'newest');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
                          context = PG_EXCEPTION_CONTEXT;
  RAISE NOTICE E'%\nDETAIL: %\nCONTEXT: %', message, detail,
    (SELECT string_agg(line, E'\n') FROM regexp_split_to_table(context, E'\n') line
      WHERE line !~ '^(SQL statement|PL/pgSQL)');
END $$;
SELECT * FROM wide_values('wide400');
-- the UPDATE run again finishes it
SELECT * FROM update_wide('wide400', 400, 'newest');
SELECT * FROM wide_values('wide400');

-- a read of a table so wide that its ProjectionExpression would pass 4 KB
-- reads whole items
SELECT make_wide('wide700', 700);
SELECT * FROM wide_values('wide700');
SELECT count(*) FROM wide700 WHERE a_column_with_a_rather_long_name_to_be_stored_1 = 'newest';
-- and its UPDATE is two UpdateItems
SELECT * FROM update_wide('wide700', 700, 'wider');
SELECT * FROM wide_values('wide700');

DROP FOREIGN TABLE blobs, mixed, wide300, wide400, wide700;
DROP FUNCTION make_wide, update_wide, wide_values;
SELECT ddb_delete_table('limits_blobs') AS deleted;
SELECT ddb_delete_table('limits_wide') AS deleted;
DROP SERVER ddb CASCADE;

-- Every type of the mapping, written through the foreign table, read back
-- unchanged, and stored as the DynamoDB type the design names.
\ir sql/include/server.sql

SELECT ddb_create_table('types_tab', 'pk', 'sk:N') AS status;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
-- DynamoDB sets have no order: compare them sorted
CREATE FUNCTION sorted(anyarray) RETURNS anyarray LANGUAGE sql
  AS $$ SELECT array_agg(x ORDER BY x) FROM unnest($1) x $$;
CREATE TABLE local_types (
  pk text, sk bigint, i2 smallint, i4 integer, n numeric, r real,
  d double precision, t text, vc varchar(5), u uuid, dt date,
  ts timestamptz, tsl timestamp, epoch timestamptz, b boolean, raw bytea,
  j json, jb jsonb, tags text[], nums numeric[], blobs bytea[], m mood,
  lst integer[]
);
CREATE FOREIGN TABLE ft_types (
  pk text, sk bigint, i2 smallint, i4 integer, n numeric, r real,
  d double precision, t text, vc varchar(5), u uuid, dt date,
  ts timestamptz, tsl timestamp,
  epoch timestamptz OPTIONS (ddb_type 'N'),
  b boolean, raw bytea, j json, jb jsonb, tags text[], nums numeric[],
  blobs bytea[], m mood,
  lst integer[] OPTIONS (ddb_type 'L')
) SERVER ddb OPTIONS (table 'types_tab', partition_key 'pk', sort_key 'sk');

INSERT INTO local_types VALUES
  ('row', 1, -32768, 2147483647, 12345678901234567890123456789012345678,
   3.25, 1.0000000000000002, 'naïve 日本 🎲', 'abc',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-02-29',
   '2024-01-02 03:04:05.123456+02', '1999-12-31 23:59:59.5',
   '2023-06-01 12:00:00.25+00', true, '\x00ff10',
   '{"a": [1, 2.5, "x", null, false], "b": {}}', '{"deep": {"er": [[]]}}',
   '{red,green}', '{1,2.5,-3e-10}', '{"\\x00","\\xff"}', 'happy', '{3,1,3}'),
  ('row', 2, 0, 0, -0.000000000000000000000000000000000000000000000000000001,
   -1.5e30, -2.5e-100, '', NULL, NULL, '0001-01-01',
   '9999-12-31 23:59:59.999999+00', NULL, '1969-12-31 23:59:59.999999+00',
   false, '\x', '[]', '"just a string"', NULL, NULL, NULL, 'sad', '{}'),
  ('row', 3, NULL, NULL, 9.9999999999999999999999999999999999999e125,
   NULL, NULL, 'line
break	and "quotes" \ backslash', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, 'null', '123.450', NULL, '{-1e-130}', NULL, NULL, NULL);
INSERT INTO ft_types SELECT * FROM local_types;

-- what comes back is what went in
SELECT count(*) AS rows_back FROM ft_types;
SELECT l.sk, f.sk AS sk_back
  FROM local_types l FULL JOIN ft_types f USING (pk, sk)
 WHERE f.sk IS NULL OR l.sk IS NULL
    OR (l.i2, l.i4, l.n, l.r, l.d, l.t, l.vc, l.u, l.dt, l.ts, l.tsl, l.epoch,
        l.b, l.raw, l.j::jsonb, l.jb, sorted(l.tags), sorted(l.nums),
        sorted(l.blobs), l.m, l.lst)
       IS DISTINCT FROM
       (f.i2, f.i4, f.n, f.r, f.d, f.t, f.vc, f.u, f.dt, f.ts, f.tsl, f.epoch,
        f.b, f.raw, f.j::jsonb, f.jb, sorted(f.tags), sorted(f.nums),
        sorted(f.blobs), f.m, f.lst);
SELECT sk, n, r, d, epoch, ts, raw, j, jb, sorted(nums) FROM ft_types ORDER BY sk;

-- and how DynamoDB holds it (but the put token, see insert.sql)
SELECT jsonb_pretty(shard_fdw_request('ddb', 'GetItem',
  '{"TableName": "types_tab", "Key": {"pk": {"S": "row"}, "sk": {"N": "1"}}}') #- '{Item,shard_fdw_put}');
SELECT shard_fdw_request('ddb', 'GetItem',
  '{"TableName": "types_tab", "Key": {"pk": {"S": "row"}, "sk": {"N": "2"}}}') #- '{Item,shard_fdw_put}' AS stored;

-- a column with attribute '*' receives the whole item
CREATE FOREIGN TABLE ft_items (pk text, sk int, item jsonb OPTIONS (attribute '*'))
  SERVER ddb OPTIONS (table 'types_tab', partition_key 'pk', sort_key 'sk');
SELECT sk, item -> 'jb' AS jb, item -> 'tags' AS tags, item -> 'epoch' AS epoch
  FROM ft_items ORDER BY sk;

-- values DynamoDB cannot hold are refused before anything is sent
\set VERBOSITY terse
INSERT INTO ft_types (pk, sk, n) VALUES ('bad', 1, 'NaN');
INSERT INTO ft_types (pk, sk, d) VALUES ('bad', 1, 'Infinity');
INSERT INTO ft_types (pk, sk, r) VALUES ('bad', 1, '-Infinity');
INSERT INTO ft_types (pk, sk, n) VALUES ('bad', 1, 1234567890123456789012345678901234567891);
INSERT INTO ft_types (pk, sk, n) VALUES ('bad', 1, 1e126);
INSERT INTO ft_types (pk, sk, n) VALUES ('bad', 1, 1e-131);
INSERT INTO ft_types (pk, sk, tags) VALUES ('bad', 1, '{}');
INSERT INTO ft_types (pk, sk, tags) VALUES ('bad', 1, '{a,b,a}');
INSERT INTO ft_types (pk, sk, tags) VALUES ('bad', 1, '{a,NULL}');
INSERT INTO ft_types (pk, sk, ts) VALUES ('bad', 1, 'infinity');
-- dates too are stored within years 1 to 9999, where their text sorts as they do
INSERT INTO ft_types (pk, sk, dt) VALUES ('bad', 1, '10000-01-01');
INSERT INTO ft_types (pk, sk, dt) VALUES ('bad', 1, '0001-12-31 BC');
INSERT INTO ft_types (pk, sk, dt) VALUES ('bad', 1, 'infinity');
INSERT INTO ft_types (pk, sk, jb) VALUES ('bad', 1, '{"n": 1e400}');
SELECT count(*) AS nothing_written FROM ft_types WHERE pk = 'bad';

-- stored values that do not fit their column name column, attribute and key
\set VERBOSITY default
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "types_tab",
  "Item": {"pk": {"S": "odd1"}, "sk": {"N": "1"}, "i4": {"N": "1.5"}}}') AS put;
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "types_tab",
  "Item": {"pk": {"S": "odd2"}, "sk": {"N": "2"}, "i2": {"N": "40000"}}}') AS put;
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "types_tab",
  "Item": {"pk": {"S": "odd3"}, "sk": {"N": "3"}, "b": {"S": "yes"}}}') AS put;
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "types_tab",
  "Item": {"pk": {"S": "odd4"}, "sk": {"N": "4"}, "u": {"S": "not-a-uuid"}}}') AS put;
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "types_tab",
  "Item": {"pk": {"S": "odd5"}, "sk": {"N": "5"}, "t": {"NULL": true},
           "i4": {"N": "7"}, "tags": {"L": [{"S": "x"}, {"S": "y"}]}}}') AS put;
SELECT i4 FROM ft_types WHERE pk = 'odd1';
SELECT i2 FROM ft_types WHERE pk = 'odd2';
SELECT b FROM ft_types WHERE pk = 'odd3';
SELECT u FROM ft_types WHERE pk = 'odd4';
SELECT t IS NULL AS t_is_null, i4, tags FROM ft_types WHERE pk = 'odd5';

-- A float of -0 equals 0 in PostgreSQL, so both give a key the same text:
-- the row written with -0 is found with 0, and 0 is then a duplicate.
SELECT ddb_create_table('negzero_tab', 'pk') AS status;
CREATE FOREIGN TABLE ft_negzero (k float8, v text)
  SERVER ddb OPTIONS (table 'negzero_tab', partition_key 'pk',
                      partition_key_format 'p#{k}');
INSERT INTO ft_negzero VALUES ('-0', 'minus zero');
SELECT v FROM ft_negzero WHERE k = 0;
SELECT shard_fdw_request('ddb', 'GetItem', '{"TableName": "negzero_tab",
  "Key": {"pk": {"S": "p#0"}}}') #>> '{Item,v,S}' AS stored_at_p0;
INSERT INTO ft_negzero VALUES (0, 'zero');
SELECT count(*) FROM ft_negzero;
DROP FOREIGN TABLE ft_negzero;
SELECT ddb_delete_table('negzero_tab') AS deleted;

DROP FOREIGN TABLE ft_types, ft_items;
DROP TABLE local_types;
DROP TYPE mood;
DROP FUNCTION sorted(anyarray);
SELECT ddb_delete_table('types_tab') AS deleted;
DROP SERVER ddb CASCADE;

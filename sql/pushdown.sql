-- Conditions sent to DynamoDB as a FilterExpression: each one only where
-- DynamoDB answers as PostgreSQL would (types, NULLs, collation), the rest
-- checked locally.  "Items Returned" below Rows shows what DynamoDB kept.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SELECT ddb_create_table('pushdown_tab', 'game', 'seq:N') AS status;

CREATE FOREIGN TABLE rows (game text, seq int, points int, big bigint,
                           score numeric, name text, flag boolean)
  SERVER ddb OPTIONS (table 'pushdown_tab', partition_key 'game', sort_key 'seq');
CREATE TABLE local_rows (LIKE rows);
INSERT INTO local_rows VALUES
  ('g1', 1, 1, 10, 1.5, 'a', true), ('g1', 2, 2, 20, 2.5, 'B', false),
  ('g1', 3, NULL, NULL, NULL, NULL, NULL), ('g2', 4, 1, 30, 1.50, 'b', true),
  ('g2', 5, 7, 9000000000, -3, 'é', false), ('g2', 6, 3, NULL, 0, '', NULL);
INSERT INTO rows SELECT * FROM local_rows;

-- IN and = ANY on columns that are not keys: DynamoDB's IN
SELECT seq FROM rows WHERE points IN (1, 2) ORDER BY seq;
SELECT seq FROM rows WHERE big IN (20, 9000000000) ORDER BY seq;
SELECT seq FROM rows WHERE score IN (1.5, 2.50, -3) ORDER BY seq;
SELECT seq FROM rows WHERE name IN ('a', 'b', '') ORDER BY seq;
SELECT seq FROM rows WHERE name = ANY (ARRAY['B', 'é']) ORDER BY seq;
SELECT seq FROM rows WHERE flag IN (true, false) ORDER BY seq;
SELECT explain_analyze('SELECT seq FROM rows WHERE points IN (1, 2)');
-- NULLs inside the list match nothing; a list of NULLs matches no row
SELECT seq FROM rows WHERE points IN (1, NULL) ORDER BY seq;
SELECT seq FROM rows WHERE name = ANY (ARRAY[NULL, NULL]::text[]) ORDER BY seq;
SELECT seq FROM rows WHERE points = ANY ('{}') ORDER BY seq;
SELECT seq FROM rows WHERE points = ANY (NULL::int[]) ORDER BY seq;
-- NOT IN, OR, a cast column and non-equality ANY stay local
SELECT seq FROM rows WHERE points NOT IN (1, 2) ORDER BY seq;
SELECT seq FROM rows WHERE points <> ALL (ARRAY[1, NULL]) ORDER BY seq;
SELECT seq FROM rows WHERE points = 1 OR name = 'B' ORDER BY seq;
SELECT seq FROM rows WHERE points < ANY (ARRAY[2, 3]) ORDER BY seq;
SELECT seq FROM rows WHERE points IN (1.0, 2.5) ORDER BY seq;
EXPLAIN (COSTS OFF) SELECT seq FROM rows WHERE points NOT IN (1, 2) OR flag;
-- collation: equality under a deterministic one, order under "C" only
SELECT seq FROM rows WHERE name COLLATE "C" IN ('B', 'b') ORDER BY seq;
SELECT seq FROM rows WHERE name COLLATE "C" < 'a' ORDER BY seq;
SELECT seq FROM rows WHERE name COLLATE "und-x-icu" < 'b' ORDER BY seq;
EXPLAIN (COSTS OFF) SELECT seq FROM rows WHERE name COLLATE "und-x-icu" < 'b';
-- boolean columns: only equality and IN go to DynamoDB
SELECT seq FROM rows WHERE flag ORDER BY seq;
SELECT seq FROM rows WHERE NOT flag ORDER BY seq;
SELECT seq FROM rows WHERE flag IS NOT TRUE ORDER BY seq;
SELECT seq FROM rows WHERE flag = false ORDER BY seq;
-- values no DynamoDB number stands for are compared locally, or, on the
-- sort key, bound it above or below every stored number
CREATE FOREIGN TABLE rows_n (game text, seq numeric)
  SERVER ddb OPTIONS (table 'pushdown_tab', partition_key 'game', sort_key 'seq');
SELECT seq FROM rows_n WHERE game = 'g1' AND seq < 'NaN' ORDER BY seq;
SELECT seq FROM rows_n WHERE game = 'g1' AND seq > '-Infinity' AND seq < 3 ORDER BY seq;
SELECT seq FROM rows_n WHERE game = 'g1' AND seq > 'NaN';
SELECT seq FROM rows_n WHERE game = 'g1' AND seq <= '-Infinity';
SELECT seq FROM rows_n WHERE game = 'g1' AND seq IN (2, 'Infinity', 'NaN');
SELECT seq FROM rows_n WHERE game = 'g1' AND seq = 'NaN';
DROP FOREIGN TABLE rows_n;
SELECT seq FROM rows WHERE score < 'NaN' ORDER BY seq;
SELECT seq FROM rows WHERE score < 'Infinity' AND score > '-Infinity' ORDER BY seq;
SELECT seq FROM rows WHERE score IN (1.5, 'NaN') ORDER BY seq;
SELECT explain_analyze('SELECT seq FROM rows WHERE score < ''NaN'' AND points >= 2');
-- 100 values go to DynamoDB; more, or filters longer than DynamoDB's 4 KB
-- expression limit, stay local
SELECT format('SELECT explain_analyze(%L)',
              'SELECT seq FROM rows WHERE points IN (' || string_agg(i::text, ', ') || ')')
  FROM generate_series(3, 102) i \gexec
SELECT format('SELECT seq FROM rows WHERE points IN (%s) ORDER BY seq',
              string_agg(i::text, ', ')) FROM generate_series(3, 103) i \gexec
SELECT format('EXPLAIN (COSTS OFF) SELECT seq FROM rows WHERE points IN (%s)',
              string_agg(i::text, ', ')) FROM generate_series(3, 103) i \gexec
SELECT format('SELECT seq FROM rows WHERE points IN (%s) AND big IN (%1$s) AND name IN (%s)'
              ' AND points IN (%1$s) AND big IN (%1$s) AND name IN (%2$s) ORDER BY seq',
              string_agg(i::text, ', ') || ', 1, 10, 30',
              string_agg(quote_literal(i::text), ', ') || ', ''a'', ''b''')
  FROM generate_series(1000, 1096) i \gexec
-- parameters: the array of a generic plan, an IN list of parameters
SET plan_cache_mode = force_generic_plan;
PREPARE by_array(int[]) AS SELECT seq FROM rows WHERE points = ANY ($1) ORDER BY seq;
PREPARE by_list(text, text) AS SELECT seq FROM rows WHERE name IN ($1, $2) ORDER BY seq;
EXPLAIN (COSTS OFF) EXECUTE by_array('{1,3}');
EXECUTE by_array('{1,3}');
EXECUTE by_array('{NULL}');
EXECUTE by_array(NULL);
SELECT format('EXECUTE by_array(%L)', array_agg(i)) FROM generate_series(3, 200) i \gexec
EXPLAIN (COSTS OFF) EXECUTE by_list('a', 'é');
EXECUTE by_list('a', 'é');
EXECUTE by_list('B', NULL);
PREPARE by_score(numeric) AS SELECT seq FROM rows WHERE score > $1 ORDER BY seq;
EXECUTE by_score('-Infinity');
EXECUTE by_score('NaN');
RESET plan_cache_mode;
DEALLOCATE ALL;
-- an IN list on the partition key still makes one Query per value
EXPLAIN (COSTS OFF) SELECT seq FROM rows WHERE game IN ('g1', 'g2') AND big IN (10, 30);
SELECT seq FROM rows WHERE game IN ('g1', 'g2') AND big IN (10, 30) ORDER BY seq;

-- a value of another type is written otherwise than the column's values:
-- a timestamp compared with a date key, character(n) without its padding
SELECT ddb_create_table('pushdown_days', 'k', 'd') AS status;
CREATE FOREIGN TABLE days (k text, d date, n int)
  SERVER ddb OPTIONS (table 'pushdown_days', partition_key 'k', sort_key 'd');
CREATE FOREIGN TABLE padded (k char(3), d date)
  SERVER ddb OPTIONS (table 'pushdown_days', partition_key 'k', sort_key 'd');
INSERT INTO days VALUES ('a', '2024-01-01', 1), ('a', '2024-01-02', 2), ('b', '2024-01-01', 3);
INSERT INTO padded VALUES ('c', '2024-01-03');
SELECT k, d FROM padded WHERE k = 'c';
SELECT k, d FROM padded WHERE k = 'c' AND d = '2024-01-03';
EXPLAIN (COSTS OFF) SELECT k, d FROM padded WHERE k = 'c';
SET TimeZone = 'America/New_York';
-- no stored key is empty: an empty key value matches nothing
SELECT d FROM days WHERE k = '';
SELECT d FROM days WHERE k IN ('', 'b');
SELECT n FROM days WHERE k = 'a' AND d = '2024-01-01' AND k IN ('a', '');
CREATE FOREIGN TABLE days_text (k text, d text)
  SERVER ddb OPTIONS (table 'pushdown_days', partition_key 'k', sort_key 'd');
SELECT d FROM days_text WHERE k = 'a' AND d = '';
SELECT d FROM days_text WHERE k = 'a' AND d IN ('', '2024-01-02');
SELECT d FROM days_text WHERE k = 'a' AND d = '' ORDER BY d;
SELECT d FROM days_text WHERE k = 'a' AND d COLLATE "C" > '' ORDER BY d;
DROP FOREIGN TABLE days_text;
-- infinities bound the sort key above or below every stored date
SELECT d FROM days WHERE k = 'a' AND d < 'infinity' ORDER BY d;
SELECT d FROM days WHERE k = 'a' AND d > '-infinity' AND d <= '2024-01-01' ORDER BY d;
SELECT d FROM days WHERE k = 'a' AND d >= 'infinity';
SELECT d FROM days WHERE k = 'a' AND d < '-infinity';
SELECT d FROM days WHERE k = 'a' AND d IN ('infinity', '2024-01-02');
SELECT d FROM days WHERE k = 'a' AND d = 'infinity';
SELECT d FROM days WHERE k = 'a' AND d = '2024-01-01 00:00'::timestamp;
SELECT d FROM days WHERE k = 'a' AND d >= '2024-01-01 20:00-05'::timestamptz;
SELECT d FROM days WHERE k = 'a' AND d IN ('2024-01-02 00:00'::timestamp);
SELECT d FROM days WHERE k = 'a' AND d > '2024-01-01'::date;
SELECT n FROM days WHERE k IN ('a', 'b') AND n > 1::int8 ORDER BY n;
EXPLAIN (COSTS OFF) SELECT d FROM days WHERE k = 'a' AND d = '2024-01-01 00:00'::timestamp;
EXPLAIN (COSTS OFF) SELECT d FROM days WHERE d = '2024-01-01' AND n IN (1::int8, 3::int2);
RESET TimeZone;
DROP FOREIGN TABLE days, padded;
SELECT ddb_delete_table('pushdown_days') AS deleted;

-- every condition above gives what the local table gives
SELECT count(*) AS differing FROM (
  SELECT q, (SELECT array_agg(seq ORDER BY seq) FROM rows r WHERE r.name = ANY (q)),
            (SELECT array_agg(seq ORDER BY seq) FROM local_rows l WHERE l.name = ANY (q))
    FROM (VALUES (ARRAY['a', 'B']), (ARRAY['é', NULL]), (ARRAY[NULL]::text[]),
                 (ARRAY['']), ('{}')) v(q)) c(q, f, l)
 WHERE f IS DISTINCT FROM l;

-- an IN list on the sort key: whole keys to get, in the query's order by
-- PostgreSQL (a Query takes one sort key condition and read only the first)
SELECT seq FROM rows WHERE game = 'g1' AND seq IN (1, 3, 2) ORDER BY seq;
SELECT seq FROM rows WHERE game = 'g2' AND seq IN (6, 4) ORDER BY seq DESC LIMIT 1;
EXPLAIN (COSTS OFF)
SELECT seq FROM rows WHERE game = 'g1' AND seq IN (1, 3, 2) ORDER BY seq;
-- with a filter: GetItem and BatchGetItem take no FilterExpression, so
-- PostgreSQL alone checks it, also for items read whole (a '*' column)
CREATE FOREIGN TABLE rows_whole (game text, seq int, name text,
                                 item jsonb OPTIONS (attribute '*'))
  SERVER ddb OPTIONS (table 'pushdown_tab', partition_key 'game', sort_key 'seq');
EXPLAIN (COSTS OFF)
SELECT item->>'name' FROM rows_whole WHERE game = 'g1' AND seq = 1 AND name = 'a';
SELECT item->>'name' FROM rows_whole WHERE game = 'g1' AND seq = 1 AND name = 'a';
SELECT seq FROM rows_whole WHERE game = 'g1' AND seq IN (1, 2, 3) AND name = 'B';
DROP FOREIGN TABLE rows_whole;

-- a column in both key templates: a Query takes one sort key condition,
-- so an IN list on it is checked locally
SELECT ddb_create_table('pushdown_twice', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE twice (kind text, seq int)
  SERVER ddb OPTIONS (table 'pushdown_twice', partition_key 'pk',
    partition_key_format 'k_{kind}', sort_key 'sk', sort_key_format '{kind}#{seq}');
INSERT INTO twice VALUES ('x', 1), ('x', 2), ('y', 3), ('z', 4);
SELECT kind, seq FROM twice WHERE kind IN ('x', 'y') ORDER BY seq;
DROP FOREIGN TABLE twice;
SELECT ddb_delete_table('pushdown_twice') AS deleted;

-- a sort key stored otherwise than its column's type orders by what is
-- stored: an integer as S sorts "10" before "5", text as N sorts "10"
-- after "9".  Neither its bounds, nor ORDER BY, nor min and max go to
-- DynamoDB then; count(*) is PostgreSQL's
SELECT ddb_create_table('pushdown_as_s', 'pk', 'sk') AS status;
SELECT ddb_create_table('pushdown_as_n', 'pk', 'sk:N') AS status;
CREATE FOREIGN TABLE int_as_s (pk text NOT NULL, sk int OPTIONS (ddb_type 'S') NOT NULL)
  SERVER ddb OPTIONS (table 'pushdown_as_s', partition_key 'pk', sort_key 'sk');
CREATE FOREIGN TABLE text_as_n (pk text NOT NULL, sk text OPTIONS (ddb_type 'N') NOT NULL)
  SERVER ddb OPTIONS (table 'pushdown_as_n', partition_key 'pk', sort_key 'sk');
INSERT INTO int_as_s SELECT 'a', i FROM generate_series(1, 12) i;
INSERT INTO text_as_n SELECT 'a', i::text FROM generate_series(1, 12) i;
EXPLAIN (COSTS OFF) SELECT sk FROM int_as_s WHERE pk = 'a' AND sk > 5 ORDER BY sk;
SELECT array_agg(sk ORDER BY sk) FROM int_as_s WHERE pk = 'a' AND sk > 5;
SELECT array_agg(sk) FROM (SELECT sk FROM int_as_s WHERE pk = 'a' ORDER BY sk LIMIT 3) s;
SELECT count(*), min(sk), max(sk) FROM int_as_s WHERE pk = 'a' AND sk > 5;
EXPLAIN (COSTS OFF) SELECT sk FROM text_as_n WHERE pk = 'a' AND sk > '5' ORDER BY sk;
SELECT array_agg(sk) FROM (SELECT sk FROM text_as_n WHERE pk = 'a' ORDER BY sk LIMIT 3) s;
SELECT count(*), min(sk), max(sk) FROM text_as_n WHERE pk = 'a' AND sk > '5';
-- nor equality: DynamoDB's 5.0 is its 5, PostgreSQL's '5.0' is not '5'
SELECT ddb_create_table('pushdown_pk_n', 'pk:N', 'sk') AS status;
CREATE FOREIGN TABLE pk_as_n (pk text OPTIONS (ddb_type 'N') NOT NULL, sk text NOT NULL)
  SERVER ddb OPTIONS (table 'pushdown_pk_n', partition_key 'pk', sort_key 'sk');
INSERT INTO pk_as_n VALUES ('5', 'a'), ('5', 'b'), ('6', 'a');
SELECT count(*) FROM pk_as_n WHERE pk = '5.0';
SELECT count(*) FROM pk_as_n WHERE pk IN ('5.0', '6');
SELECT pk, count(*) FROM pk_as_n WHERE pk = '05' GROUP BY pk;
SELECT count(*) FROM text_as_n WHERE pk = 'a' AND sk = '5.0';
DROP FOREIGN TABLE int_as_s, text_as_n, pk_as_n;
SELECT ddb_delete_table('pushdown_as_s') AS deleted;
SELECT ddb_delete_table('pushdown_as_n') AS deleted;
SELECT ddb_delete_table('pushdown_pk_n') AS deleted;

-- a sort key bound computed from a subquery's parameter: EXPLAIN names
-- the parameter inside the expression
EXPLAIN (COSTS OFF)
  SELECT l.seq, (SELECT count(*) FROM rows r WHERE r.game = l.game AND r.seq > l.seq - 1)
    FROM local_rows l;
SELECT l.seq, (SELECT count(*) FROM rows r WHERE r.game = l.game AND r.seq > l.seq - 1)
  FROM local_rows l ORDER BY l.seq;

-- a lower bound above every value of a zero-padded field's type (an
-- integer's 10 digits) matches no item
SELECT ddb_create_table('pushdown_padded', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE padded (owner text, item int) SERVER ddb
  OPTIONS (table 'pushdown_padded', partition_key 'pk', partition_key_format '{owner}',
           sort_key 'sk', sort_key_format '{item:010}');
INSERT INTO padded VALUES ('o1', 2000000000), ('o1', 7);
SELECT count(*), min(item) FROM padded WHERE owner = 'o1' AND item > 10000000000;
SELECT count(*), min(item) FROM padded WHERE owner = 'o1' AND item >= 7;
DROP FOREIGN TABLE padded;
SELECT ddb_delete_table('pushdown_padded') AS deleted;

DROP TABLE local_rows;
DROP FOREIGN TABLE rows;
SELECT ddb_delete_table('pushdown_tab') AS deleted;
DROP SERVER ddb CASCADE;

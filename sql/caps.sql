-- Per-statement caps: max_read_units_per_statement and
-- max_write_units_per_statement on a server or a table (the table's wins)
-- stop a statement whose answers consumed more than the cap: it sends no
-- further request, and its next wait is an error naming the cap and what
-- was consumed; a write says how many rows it wrote.
\ir sql/include/server.sql
SELECT ddb_create_table('caps_tab', 'pk', 'n:N') AS status;
-- whole units, at least one
ALTER SERVER ddb OPTIONS (ADD max_read_units_per_statement '0');
ALTER SERVER ddb OPTIONS (ADD max_write_units_per_statement '1.5');
CREATE FOREIGN TABLE caps_bad (pk text, n int) SERVER ddb
  OPTIONS (table 'caps_tab', partition_key 'pk', sort_key 'n',
           max_read_units_per_statement 'many');
CREATE FOREIGN TABLE caps_kv (pk text, n int, pad text) SERVER ddb
  OPTIONS (table 'caps_tab', partition_key 'pk', sort_key 'n', insert_mode 'upsert');
INSERT INTO caps_kv SELECT 'a', i, repeat('x', 900) FROM generate_series(1, 20) i;

-- a Query of the 20 items of about 900 bytes consumes 2.5 read units
ALTER FOREIGN TABLE caps_kv OPTIONS (ADD max_read_units_per_statement '3');
SELECT count(*) FROM (SELECT * FROM caps_kv WHERE pk = 'a' OFFSET 0) s;
ALTER FOREIGN TABLE caps_kv OPTIONS (SET max_read_units_per_statement '2');
SELECT count(*) FROM (SELECT * FROM caps_kv WHERE pk = 'a' OFFSET 0) s;
-- a GetItem's half unit is within it, in every statement afresh
SELECT n FROM caps_kv WHERE pk = 'a' AND n = 1;
SELECT n FROM caps_kv WHERE pk = 'a' AND n = 2;
-- every read of the statement on the table counts: two GetItems and a
-- Query
SELECT (SELECT n FROM caps_kv WHERE pk = 'a' AND n = 3),
       (SELECT count(*) FROM (SELECT * FROM caps_kv WHERE pk = 'a' AND n < 5 OFFSET 0) s);
-- the server's cap holds for a table without its own
ALTER FOREIGN TABLE caps_kv OPTIONS (DROP max_read_units_per_statement);
ALTER SERVER ddb OPTIONS (ADD max_read_units_per_statement '1');
SELECT count(*) FROM (SELECT * FROM caps_kv WHERE pk = 'a' OFFSET 0) s;
ALTER FOREIGN TABLE caps_kv OPTIONS (ADD max_read_units_per_statement '10');
SELECT count(*) FROM (SELECT * FROM caps_kv WHERE pk = 'a' OFFSET 0) s;
ALTER SERVER ddb OPTIONS (DROP max_read_units_per_statement);

-- writes: batches of 4 items (4 write units), one at a time; the second
-- answer takes the statement past 6, and no third batch is sent: 8 rows
-- written
ALTER SERVER ddb OPTIONS (ADD max_concurrency '1');
ALTER FOREIGN TABLE caps_kv OPTIONS (ADD batch_size '4', ADD max_write_units_per_statement '6');
INSERT INTO caps_kv SELECT 'b', i, 'y' FROM generate_series(1, 20) i;
SELECT count(*) AS written FROM caps_kv WHERE pk = 'b';
-- within the cap
INSERT INTO caps_kv SELECT 'c', i, 'z' FROM generate_series(1, 6) i;
-- an UPDATE's UpdateItems are a write unit each, one after another: the
-- seventh goes past 6, and no eighth is sent
UPDATE caps_kv SET pad = 'w' WHERE pk = 'c' AND n <= 6;
UPDATE caps_kv SET pad = 'v' WHERE pk = 'b';
SELECT count(*) AS updated FROM caps_kv WHERE pk = 'b' AND pad = 'v';
ALTER SERVER ddb OPTIONS (DROP max_concurrency);

SELECT ddb_delete_table('caps_tab');
DROP SERVER ddb CASCADE;

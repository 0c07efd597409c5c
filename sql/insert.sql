-- Writing rows: a conditional PutItem per row, duplicates refused as unique
-- violations, ON CONFLICT DO NOTHING, upserts, COPY, key templates, and bad
-- rows refused before anything is sent.
\ir sql/include/server.sql
SELECT ddb_create_table('users_tab', 'pk', 'sk') AS status;

-- keys built from templates; every column is also its own attribute
CREATE FOREIGN TABLE users (
  user_id int, kind text, name text, score bigint, joined date
) SERVER ddb OPTIONS (
  table 'users_tab',
  partition_key 'pk', partition_key_format 'user#{user_id}',
  sort_key 'sk', sort_key_format '{kind}#{score:010}');

EXPLAIN (COSTS OFF) INSERT INTO users VALUES (1, 'profile', 'Ann', 5, '2020-01-01');
INSERT INTO users VALUES (1, 'profile', 'Ann', 5, '2020-01-01')
  RETURNING user_id, name;
INSERT INTO users VALUES (2, 'profile', 'Bob', 42, NULL), (2, 'badge', 'gold', 7, NULL);
-- the item: the keys, each column, and the put token of the conditional put
SELECT r -> 'Item' #- '{shard_fdw_put}' AS item,
       r #>> '{Item,shard_fdw_put,S}' ~ '^[0-9a-f]{16}$' AS put_token
  FROM shard_fdw_request('ddb', 'GetItem', '{"TableName": "users_tab",
  "Key": {"pk": {"S": "user#2"}, "sk": {"S": "profile#0000000042"}}}') r;
SELECT * FROM users WHERE user_id = 2 ORDER BY kind;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE user_id = 2;

-- columns missing from an item are decoded from its keys
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "users_tab",
  "Item": {"pk": {"S": "user#3"}, "sk": {"S": "profile#0000000099"},
           "name": {"S": "Cy"}}}') AS put;
SELECT * FROM users WHERE user_id = 3;

-- a duplicate key is a unique violation; ON CONFLICT DO NOTHING skips it
INSERT INTO users VALUES (1, 'profile', 'Ann again', 5, NULL);
INSERT INTO users VALUES (1, 'profile', 'Ann again', 5, NULL) ON CONFLICT DO NOTHING;
INSERT INTO users VALUES (1, 'profile', 'Ann again', 5, NULL), (4, 'profile', 'Di', 1, NULL)
  ON CONFLICT DO NOTHING RETURNING user_id;
SELECT name FROM users WHERE user_id = 1;

-- a multi-row INSERT is not atomic: the error says how far it got
INSERT INTO users VALUES (5, 'profile', 'Ed', 1, NULL), (6, 'profile', 'Flo', 2, NULL),
                         (1, 'profile', 'Ann', 5, NULL), (7, 'profile', 'Gus', 3, NULL);
SELECT user_id, name FROM users WHERE user_id IN (5, 6, 7) ORDER BY user_id;

-- bad rows are refused before any request for them is sent
\set VERBOSITY terse
INSERT INTO users VALUES (NULL, 'profile', 'nobody', 1, NULL);
INSERT INTO users VALUES (8, NULL, 'nobody', 1, NULL);
INSERT INTO users VALUES (8, '', 'nobody', 1, NULL);
INSERT INTO users VALUES (8, 'profile', 'no score', NULL, NULL);
INSERT INTO users VALUES (8, 'profile', 'negative', -1, NULL);
INSERT INTO users VALUES (8, 'profile', repeat('x', 410000), 1, NULL);
\set VERBOSITY default
SELECT count(*) AS user_8_items FROM users WHERE user_id = 8;

-- a plain key column, upserts and COPY
CREATE FOREIGN TABLE notes (pk text, sk text, body text)
  SERVER ddb OPTIONS (table 'users_tab', partition_key 'pk', sort_key 'sk',
                      insert_mode 'upsert');
EXPLAIN (COSTS OFF) INSERT INTO notes VALUES ('note', '1', 'x');
INSERT INTO notes VALUES ('note', '1', 'first'), ('note', '1', 'second');
COPY notes FROM STDIN;
note	2	from copy
note	3	tab\tseparated
\.
SELECT * FROM notes WHERE pk = 'note' ORDER BY sk;
INSERT INTO notes VALUES ('', '1', 'empty key');

-- COPY in upsert mode writes its rows batch_size at a time by
-- BatchWriteItem; a key repeated later in the input wins, within a batch
-- (which is split there) and across batches
ALTER FOREIGN TABLE notes OPTIONS (ADD batch_size '4');
SELECT requests AS requests_before FROM shard_fdw_stats() \gset
COPY notes FROM STDIN;
copy	1	a
copy	2	b
copy	1	c
copy	3	d
copy	4	e
copy	2	f
copy	5	g
\.
SELECT requests - :requests_before AS batch_write_requests FROM shard_fdw_stats();
SELECT sk, body FROM notes WHERE pk = 'copy' ORDER BY sk;
-- a bad row stops COPY before its batch is sent
COPY notes FROM STDIN;
copy	6	h
	7	empty key
\.
SELECT count(*) AS copy_6_items FROM notes WHERE pk = 'copy' AND sk = '6';

-- COPY in insert mode sends rows without waiting for each; a duplicate
-- key still stops it, and the error says how many rows were written
CREATE FOREIGN TABLE notes_once (pk text, sk text, body text)
  SERVER ddb OPTIONS (table 'users_tab', partition_key 'pk', sort_key 'sk');
COPY notes_once FROM STDIN;
once	1	a
once	2	b
once	1	again
once	3	c
\.
SELECT count(*) AS once_items FROM notes_once WHERE pk = 'once';

-- items a BatchWriteItem leaves unprocessed (a per-key budget of 20 items
-- at once: every batch of 25 leaves some) go again, in more than the six
-- requests the 150 rows need without a budget
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"key_budget": {"rate": 300, "burst": 20}}'
\ir sql/include/explain_analyze.sql
SELECT substring(line from '\d+')::int > 6 AS sent_again
  FROM explain_analyze($$INSERT INTO notes SELECT 'hot', lpad(i::text, 4, '0'), 'v' || i
                           FROM generate_series(1, 150) i$$) AS line
 WHERE line ~ 'Write Requests';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/reset"
SELECT count(*), count(DISTINCT sk) FROM notes WHERE pk = 'hot';

DROP FOREIGN TABLE users, notes, notes_once;
SELECT ddb_delete_table('users_tab') AS deleted;
DROP SERVER ddb CASCADE;

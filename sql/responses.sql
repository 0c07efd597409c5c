-- Responses that break DynamoDB's shapes (served by the test proxy):
-- every one is an error that names the attribute and the item's key, never
-- a crash, a guess or a dropped row, and none is retried.
\ir sql/include/server.sql
\set VERBOSITY default
SELECT ddb_create_table('responses_tab', 'id') AS status;
SELECT ddb_create_table('responses_sk', 'g', 's:N') AS status;
CREATE FOREIGN TABLE resp (
  id text, t text, b bigint, n numeric, by bytea, bo boolean, j jsonb,
  arr text[], narr int[], barr bytea[], ts timestamptz,
  item jsonb OPTIONS (attribute '*')
) SERVER ddb OPTIONS (table 'responses_tab', partition_key 'id');
CREATE FOREIGN TABLE resp_sk (g text, s int, v text)
  SERVER ddb OPTIONS (table 'responses_sk', partition_key 'g', sort_key 's');
INSERT INTO resp (id, t, b, n, by, bo, j, arr, narr, barr, ts)
  SELECT 'r' || i, 't' || i, i, i / 4.0, '\x0102', i % 2 = 0,
         jsonb_build_object('k', i), ARRAY['a', 'b'], ARRAY[i, i + 1],
         ARRAY['\x01'::bytea], '2024-01-02 03:04:05+00'
  FROM generate_series(1, 10) i;
INSERT INTO resp_sk SELECT 'g', i, 'v' || i FROM generate_series(1, 30) i;

\ir sql/include/retries.sql

SELECT count(*), count(t), sum(b), sum(n), count(j), count(item) FROM resp;

-- wrong shapes inside a value read into jsonb (these crashed the backend)
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k":{"N":true}}}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"L":[{"N":{}}]}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k":{"N":true}}}}],"Count":1,"ScannedCount":1}'
SELECT id, item FROM resp;

-- values that used to be turned into something: one column of every type
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"t":{"S":5}}],"Count":1,"ScannedCount":1}'
SELECT id, t FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"t":{"N":"12abc"}}],"Count":1,"ScannedCount":1}'
SELECT id, t FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"b":{"N":""}}],"Count":1,"ScannedCount":1}'
SELECT id, b FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"n":{"N":"1e999"}}],"Count":1,"ScannedCount":1}'
SELECT id, n FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"by":{"B":"not base64!"}}],"Count":1,"ScannedCount":1}'
SELECT id, by FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"bo":{"BOOL":"yes"}}],"Count":1,"ScannedCount":1}'
SELECT id, bo FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":[]}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"L":{}}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k":5}}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"arr":{"SS":[1,2]}}],"Count":1,"ScannedCount":1}'
SELECT id, arr FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"arr":{"SS":"x"}}],"Count":1,"ScannedCount":1}'
SELECT id, arr FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"narr":{"NS":["abc"]}}],"Count":1,"ScannedCount":1}'
SELECT id, narr FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"barr":{"BS":["A"]}}],"Count":1,"ScannedCount":1}'
SELECT id, barr FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"ts":{"S":true}}],"Count":1,"ScannedCount":1}'
SELECT id, ts FROM resp;
-- unknown type tags
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"t":{"Z":"1"}}],"Count":1,"ScannedCount":1}'
SELECT id, t FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k":{"s":"x"}}}}],"Count":1,"ScannedCount":1}'
SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"t":{"":""}}],"Count":1,"ScannedCount":1}'
SELECT id, t FROM resp;
-- an attribute no column reads is checked too
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"other":{"NULL":false}}],"Count":1,"ScannedCount":1}'
SELECT id FROM resp;
SELECT new_retries(), reset_mark();

-- invalid UTF-8 in an S inside a map never reaches a jsonb value, nor a
-- local table
CREATE TEMP TABLE copied (id text, j jsonb);
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k":{"S":"a\xff"}}}}],"Count":1,"ScannedCount":1}'
INSERT INTO copied SELECT id, j FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"},"j":{"M":{"k\xc3":{"S":"a"}}}}],"Count":1,"ScannedCount":1}'
INSERT INTO copied SELECT id, j FROM resp;
SELECT count(*) FROM copied;

-- an item whose key is malformed fails the statement, it does not vanish
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"}},{"id":{"S":"r2"}},{"id":{"S":5}},{"id":{"S":"r4"}}],"Count":4,"ScannedCount":4}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[{"id":{"S":"r1"}},{"id":{"N":"x"}}],"Count":2,"ScannedCount":2}'
SELECT count(*) FROM resp WHERE id > '';
-- ... nor from a merge in the sort key's order
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g"},"s":{"N":"1x"},"v":{"S":"v1"}},{"g":{"S":"g"},"s":{"N":"2"},"v":{"S":"v2"}}],"Count":2,"ScannedCount":2}'
SELECT s, v FROM resp_sk WHERE g = 'g' ORDER BY s LIMIT 20;
SELECT s, v FROM resp_sk WHERE g = 'g' ORDER BY s LIMIT 3;
-- an item is checked as it is read: a LIMIT met before a malformed item
-- returns its rows; one that reaches the item fails, naming it
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g"},"s":{"N":"1"},"v":{"S":"v1"}},{"g":{"S":"g"},"s":{"N":"2"},"v":{"S":5}}],"Count":2,"ScannedCount":2}'
SELECT s, v FROM resp_sk WHERE g = 'g' ORDER BY s LIMIT 1;
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g"},"s":{"N":"1"},"v":{"S":"v1"}},{"g":{"S":"g"},"s":{"N":"2"},"v":{"S":5}}],"Count":2,"ScannedCount":2}'
SELECT s, v FROM resp_sk WHERE g = 'g' ORDER BY s LIMIT 2;
-- JSON broken inside an item: a page parsed whole on arrival (one stream)
-- is retried, as any answer that is not JSON
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g"},"s":{"N":"1"},"v":{"S":"v1"}},{"g":{"S":"g"},"s":{"N":"2"},"v":{"S":tru}}],"Count":2,"ScannedCount":2}'
SELECT s, v FROM resp_sk WHERE g = 'g' ORDER BY s LIMIT 2;
SELECT new_retries(), reset_mark();
-- ... but where streams share a LIMIT (two shards, one answering with these
-- items, the other with none), each item is parsed as it is read: a LIMIT
-- met before the merge reaches the broken item returns its rows, one that
-- reaches it fails, not retried
CREATE FOREIGN TABLE resp_sharded (grp text, s int, v text) SERVER ddb OPTIONS (
  table 'responses_sk', partition_key 'g', partition_key_format '{grp}#{shard}',
  shards '2', shard_strategy 'random', sort_key 's');
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g#0"},"s":{"N":"1"},"v":{"S":"v1"}},{"g":{"S":"g#0"},"s":{"N":"2"},"v":{"S":"v2"}},{"g":{"S":"g#0"},"s":{"N":"3"},"v":{"S":tru}}],"Count":3,"ScannedCount":3}'
SELECT s, v FROM resp_sharded WHERE grp = 'g' ORDER BY s LIMIT 2;
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g#0"},"s":{"N":"1"},"v":{"S":"v1"}},{"g":{"S":"g#0"},"s":{"N":"2"},"v":{"S":"v2"}},{"g":{"S":"g#0"},"s":{"N":"3"},"v":{"S":tru}}],"Count":3,"ScannedCount":3}'
SELECT s, v FROM resp_sharded WHERE grp = 'g' ORDER BY s LIMIT 3;
SELECT new_retries(), reset_mark();
DROP FOREIGN TABLE resp_sharded;

-- GetItem, BatchGetItem
\! sql/include/answer.py GetItem '{"Item":{"id":{"S":"r1"},"t":{"S":["x"]}}}'
SELECT id, t FROM resp WHERE id = 'r1';
\! sql/include/answer.py BatchGetItem '{"Responses":{"responses_tab":[{"id":{"S":"r2"},"b":{"N":"2"}},{"id":{"S":"r1"},"b":{"N":"1.5.1"}}]},"UnprocessedKeys":{}}'
SELECT id, b FROM resp WHERE id IN ('r1', 'r2') ORDER BY id;

-- the members around the items
\! sql/include/answer.py Scan '{"Items":{},"Count":0,"ScannedCount":0}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[7],"Count":1,"ScannedCount":1}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[],"Count":"0","ScannedCount":0}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":{"id":{"S":5}}}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":[]}'
SELECT count(*) FROM resp;
\! sql/include/answer.py Scan '{"Items":[],"Count":0,"ScannedCount":0,"ConsumedCapacity":{"CapacityUnits":"1"}}'
SELECT count(*) FROM resp;
\! sql/include/answer.py BatchGetItem '{"Responses":{"responses_tab":[]},"UnprocessedKeys":{"responses_tab":{"Keys":[{"id":{"B":"?"}}]}}}'
SELECT id FROM resp WHERE id IN ('r1', 'r2');
SELECT new_retries(), reset_mark();

-- nesting: what DynamoDB stores (31 objects and arrays in one another,
-- 32 levels) is written and read back; one level more is refused before
-- anything is sent
CREATE FUNCTION nest(levels int) RETURNS jsonb LANGUAGE sql AS $$
  SELECT (repeat('{"k":', levels - 1) || '["x"]' || repeat('}', levels - 1))::jsonb $$;
INSERT INTO resp (id, j) VALUES ('deep15', nest(15)), ('deep31', nest(31));
SELECT id, j = nest(15) AS same15, j = nest(31) AS same31 FROM resp
  WHERE id IN ('deep15', 'deep31') ORDER BY id;
SELECT j = nest(31) AS same FROM resp WHERE id = 'deep31';
INSERT INTO resp (id, j) VALUES ('deep32', nest(32));
INSERT INTO resp (id, j) VALUES ('deep200', nest(200));
SELECT count(*) FROM resp WHERE id IN ('deep32', 'deep200');
-- a response nested past what any item holds: not retried
\! sql/include/answer.py Scan "$(python3 -c "print('{\"Items\":' + '[' * 200 + ']' * 200 + '}')")"
SELECT count(*) FROM resp;
SELECT new_retries(), reset_mark();

-- a LastEvaluatedKey that comes again would repeat pages for ever
\! sql/include/answer.py Query '{"Items":[{"g":{"S":"g"},"s":{"N":"1"},"v":{"S":"v1"}}],"Count":1,"ScannedCount":1,"LastEvaluatedKey":{"g":{"S":"g"},"s":{"N":"1"}}}' 5
SELECT count(*) FROM resp_sk WHERE g = 'g';
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
-- ... and so would two keys in turn
\! sql/include/answer.py Query '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":{"g":{"S":"g"},"s":{"N":"1"}}}'
\! sql/include/answer.py Query '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":{"g":{"S":"g"},"s":{"N":"2"}}}'
\! sql/include/answer.py Query '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":{"g":{"S":"g"},"s":{"N":"1"}}}'
\! sql/include/answer.py Query '{"Items":[],"Count":0,"ScannedCount":0,"LastEvaluatedKey":{"g":{"S":"g"},"s":{"N":"2"}}}'
SELECT count(*) FROM resp_sk WHERE g = 'g';
\! curl -s -o /dev/null -X DELETE "$SHARD_FDW_PROXY/faults"
-- pages with keys that move on are read to the end
SELECT count(*), sum(s) FROM resp_sk WHERE g = 'g';

-- a lone surrogate escape (the parser would read it as U+FFFD), an error body
-- sent with status 200, and an item without its key attribute: errors,
-- none retried, never an answer
SELECT reset_mark();
\! sql/include/answer.py GetItem '{"Item":{"id":{"S":"r1"},"t":{"S":"a\ud800"}}}'
SELECT id, t FROM resp WHERE id = 'r1';
\! sql/include/answer.py GetItem '{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}'
SELECT id, t FROM resp WHERE id = 'r1';
\! sql/include/answer.py GetItem '{"Item":{"t":{"S":"t1"}}}'
SELECT id, t FROM resp WHERE id = 'r1';
\! sql/include/answer.py Query '{"Items":[{"g":{"N":"1"},"s":{"N":"1"},"v":{"S":"x"}}],"Count":1,"ScannedCount":1}'
SELECT s, v FROM resp_sk WHERE g = 'g' AND s < 2;
-- under a key template too: a Scan's item whose key is of another type is
-- refused, not passed over as an item of another table's
CREATE FOREIGN TABLE resp_tpl (g text, s int, v text) SERVER ddb OPTIONS (
  table 'responses_sk', partition_key 'g', partition_key_format 'grp#{g}',
  sort_key 's');
\! sql/include/answer.py Scan '{"Items":[{"g":{"N":"1"},"s":{"N":"1"},"v":{"S":"x"}}],"Count":1,"ScannedCount":1}'
SELECT count(*) FROM resp_tpl;
DROP FOREIGN TABLE resp_tpl;
SELECT new_retries();
-- any spelling of a DynamoDB number reads: integral into an integer
-- column, normalized into json
\! sql/include/answer.py GetItem '{"Item":{"id":{"S":"r1"},"b":{"N":"6.000"},"j":{"M":{"k":{"N":"-007"}}},"narr":{"NS":["1E1","02"]}}}'
SELECT id, b, j, narr FROM resp WHERE id = 'r1';

-- the rows written, and none of the refused
SELECT count(*), count(t), sum(b), sum(n), count(j), count(item) FROM resp;
SELECT shard_fdw_request('ddb', 'DeleteTable', '{"TableName": "responses_tab"}') IS NOT NULL AS dropped;
SELECT shard_fdw_request('ddb', 'DeleteTable', '{"TableName": "responses_sk"}') IS NOT NULL AS dropped;
DROP FOREIGN TABLE resp, resp_sk;
DROP FUNCTION new_retries(), reset_mark(), retries(), nest(int);
DROP SERVER ddb CASCADE;

-- IMPORT FOREIGN SCHEMA: tables created with shard_fdw_request, filled by
-- INSERTs through foreign tables declared by hand, then imported into a
-- schema of their own: the sharding, the key templates and the column
-- types found from the items.
\ir sql/include/server.sql

-- a random suffix over shards 1..4 ('{path}_{shard}'), the sort key a number
SELECT ddb_create_table('import_audit', 'pk', 'ts:N') AS status;
CREATE FOREIGN TABLE audit (path text, ts bigint, who text) SERVER ddb
  OPTIONS (table 'import_audit', partition_key 'pk', partition_key_format '{path}_{shard}',
           sort_key 'ts', shards '4', shard_base '1', shard_strategy 'random');
INSERT INTO audit SELECT '/shared/f' || (i % 2) || '.txt', 1700000000 + i, 'u' || (i % 7)
  FROM generate_series(1, 60) i;

-- a calculated suffix (sha256 of the device) and a zero-padded sort key
SELECT ddb_create_table('import_readings', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE readings (site text, at bigint, device text, celsius numeric) SERVER ddb
  OPTIONS (table 'import_readings', partition_key 'pk', partition_key_format '{site}#{shard}',
           sort_key 'sk', sort_key_format '{at:012}#{device}',
           shards '3', shard_strategy 'calculated', shard_by 'device');
INSERT INTO readings SELECT 'site' || (i % 2), 1000 + i, 'dev' || i, i / 4.0
  FROM generate_series(1, 40) i;

-- a plain table with a global secondary index, and mixed attribute types
SELECT shard_fdw_request('ddb', 'CreateTable', '{
  "TableName": "import_people", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                           {"AttributeName": "city", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_city",
    "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}') #>> '{TableDescription,TableStatus}' AS status;
CREATE FOREIGN TABLE people (id text, city text, age int, tags text[], doc jsonb, v text)
  SERVER ddb OPTIONS (table 'import_people', partition_key 'id');
INSERT INTO people VALUES
  ('p1', 'Oslo', 31, '{a,b}', '{"x": 1}', 'one'),
  ('p2', 'Lima', 45, '{c}', '[1, 2]', 'two'),
  ('p3', 'Oslo', 27, NULL, NULL, NULL);
CREATE FOREIGN TABLE people_n (id text, v numeric)
  SERVER ddb OPTIONS (table 'import_people', partition_key 'id', insert_mode 'upsert');
INSERT INTO people_n VALUES ('p4', 4.5);

CREATE SCHEMA imported;
IMPORT FOREIGN SCHEMA dynamodb
  LIMIT TO (import_audit, import_readings, import_people, import_people_by_city)
  FROM SERVER ddb INTO imported;
\d+ imported.import_audit
\d+ imported.import_readings
\d+ imported.import_people
\d+ imported.import_people_by_city

-- the imported tables read what was written
SELECT count(*) FROM imported.import_audit WHERE path = '/shared/f1.txt';
EXPLAIN (COSTS OFF)
  SELECT ts, who FROM imported.import_audit WHERE path = '/shared/f1.txt' ORDER BY ts DESC LIMIT 3;
SELECT ts, who FROM imported.import_audit WHERE path = '/shared/f1.txt' ORDER BY ts DESC LIMIT 3;
EXPLAIN (COSTS OFF)
  SELECT celsius FROM imported.import_readings WHERE site = 'site1' AND device = 'dev7';
SELECT (SELECT array_agg(celsius ORDER BY "at") FROM imported.import_readings) =
       (SELECT array_agg(celsius ORDER BY "at") FROM readings) AS same;
SELECT id, city, age, tags, doc, v FROM imported.import_people ORDER BY id;
SELECT id FROM imported.import_people_by_city WHERE city = 'Oslo' ORDER BY id;
INSERT INTO imported.import_people_by_city (city, id) VALUES ('Rome', 'p9');
-- what was imported can be written to as well
INSERT INTO imported.import_readings (site, "at", device, celsius) VALUES ('site0', 5000, 'dev99', 1.5);
SELECT device, celsius FROM readings WHERE site = 'site0' AND device = 'dev99';

-- EXCEPT, detect_shards off, a catch-all column, an empty sample
CREATE SCHEMA plain;
IMPORT FOREIGN SCHEMA dynamodb
  LIMIT TO (import_audit, import_readings)
  FROM SERVER ddb INTO plain OPTIONS (detect_shards 'false', item_column 'item');
\d plain.import_audit
\d plain.import_readings
SELECT item ? 'pk' AS whole_item FROM plain.import_audit LIMIT 1;
CREATE SCHEMA unsampled;
IMPORT FOREIGN SCHEMA dynamodb EXCEPT (import_audit, import_readings, import_people_by_city)
  FROM SERVER ddb INTO unsampled OPTIONS (sample_size '0');
SELECT relname FROM pg_class WHERE relnamespace = 'unsampled'::regnamespace
  AND relname LIKE 'import\_%' ORDER BY 1;
\d unsampled.import_people
-- EXCEPT a table leaves its index's table in
CREATE SCHEMA indexes;
IMPORT FOREIGN SCHEMA dynamodb EXCEPT (import_audit, import_readings, import_people)
  FROM SERVER ddb INTO indexes OPTIONS (sample_size '0');
SELECT relname FROM pg_class WHERE relnamespace = 'indexes'::regnamespace
  AND relname LIKE 'import\_%' ORDER BY 1;

-- attributes named as PostgreSQL's system columns (a bounding box's xmin
-- and xmax) get columns of their own names with an underscore
SELECT ddb_create_table('import_boxes', 'id') AS status;
SELECT shard_fdw_request('ddb', 'PutItem', '{"TableName": "import_boxes", "Item":
  {"id": {"S": "b1"}, "xmin": {"N": "1"}, "xmax": {"N": "5"}, "ymin": {"N": "2"}}}');
CREATE SCHEMA boxes;
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (import_boxes) FROM SERVER ddb INTO boxes;
SELECT attname, format_type(atttypid, atttypmod) AS type, attfdwoptions
  FROM pg_attribute WHERE attrelid = 'boxes.import_boxes'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT id, xmin_, xmax_, ymin FROM boxes.import_boxes;
DROP SCHEMA boxes CASCADE;
SELECT ddb_delete_table('import_boxes') AS deleted;

-- options that are not import options
IMPORT FOREIGN SCHEMA dynamodb FROM SERVER ddb INTO plain OPTIONS (samples '10');
IMPORT FOREIGN SCHEMA dynamodb FROM SERVER ddb INTO plain OPTIONS (sample_size '-1');

-- a ListTables answer without its table names is an error, not "no tables"
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "malformed", "action": "ListTables", "body": "{}"}'
IMPORT FOREIGN SCHEMA dynamodb FROM SERVER ddb INTO plain;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "malformed", "action": "ListTables", "body": "{\"TableNames\": 5}"}'
IMPORT FOREIGN SCHEMA dynamodb FROM SERVER ddb INTO plain;

-- the schema unsampled holds whatever else DynamoDB Local has
SET client_min_messages = warning;
DROP SCHEMA imported, plain, unsampled, indexes CASCADE;
RESET client_min_messages;
DROP FOREIGN TABLE audit, readings, people, people_n;
SELECT ddb_delete_table('import_audit') AS deleted;
SELECT ddb_delete_table('import_readings') AS deleted;
SELECT ddb_delete_table('import_people') AS deleted;
DROP SERVER ddb CASCADE;

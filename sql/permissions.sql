-- What an IAM policy that lacks a permission does (denied by the test
-- proxy as DynamoDB denies it): the error names the action and the table,
-- keeps DynamoDB's text, and hints at the IAM action to allow.
\ir sql/include/server.sql
SELECT ddb_create_table('perm_kv', 'k') AS status;
SELECT ddb_create_table('perm_lb', 'pk', 'sk') AS status;
CREATE FOREIGN TABLE kv (k text, v int)
  SERVER ddb OPTIONS (table 'perm_kv', partition_key 'k');
CREATE FOREIGN TABLE lb (game text, player text, score int)
  SERVER ddb OPTIONS (table 'perm_lb', partition_key 'pk', partition_key_format '{game}',
                      sort_key 'sk', sort_key_format '{score:06}#{player}');
INSERT INTO kv VALUES ('k1', 1), ('k2', 2);
INSERT INTO lb VALUES ('g', 'p1', 10), ('g', 'p2', 20);

-- a read
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["GetItem"]}'
SELECT v FROM kv WHERE k = 'k1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": [{"action": "Query", "table": "perm_lb"}]}'
SELECT player, score FROM lb WHERE game = 'g' ORDER BY score DESC LIMIT 1;
SELECT k, v FROM kv ORDER BY k;

-- a write
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["PutItem"]}'
INSERT INTO kv VALUES ('k3', 3);
-- a move (a new sort key) is a TransactWriteItems, which needs PutItem and
-- DeleteItem: DynamoDB names the one missing
UPDATE lb SET score = 30 WHERE game = 'g' AND player = 'p1';
-- when DynamoDB's message names no action, the hint names those the
-- request needs
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": []}'
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/faults" -d '{"kind": "status", "status": 400, "error": "com.amazon.coral.service#AccessDeniedException", "message": "Access denied.", "action": "TransactWriteItems"}'
UPDATE lb SET score = 30 WHERE game = 'g' AND player = 'p1';
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["UpdateItem"]}'
UPDATE kv SET v = 10 WHERE k = 'k1';

-- IMPORT FOREIGN SCHEMA lists the tables, then describes and samples them
CREATE SCHEMA imported;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["ListTables"]}'
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (perm_kv) FROM SERVER ddb INTO imported;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": [{"action": "DescribeTable", "table": "perm_kv"}]}'
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (perm_kv) FROM SERVER ddb INTO imported;
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["Scan"]}'
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (perm_kv) FROM SERVER ddb INTO imported;

-- CREATE FOREIGN TABLE asks DynamoDB for the keys: those declared stand
-- with a warning, those to learn cannot be
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["DescribeTable"]}'
CREATE FOREIGN TABLE kv2 (k text, v int)
  SERVER ddb OPTIONS (table 'perm_kv', partition_key 'k');
CREATE FOREIGN TABLE kv3 (k text, v int)
  SERVER ddb OPTIONS (table 'perm_kv');
-- and for its TTL attribute: the declaration stands, with a warning
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": ["DescribeTimeToLive"]}'
CREATE FOREIGN TABLE kv4 (k text, v int)
  SERVER ddb OPTIONS (table 'perm_kv', partition_key 'k');

-- allowed again, everything works
\! curl -s -o /dev/null -X POST "$SHARD_FDW_PROXY/config" -d '{"deny_actions": []}'
IMPORT FOREIGN SCHEMA dynamodb LIMIT TO (perm_kv) FROM SERVER ddb INTO imported;
SELECT k, v FROM imported.perm_kv ORDER BY k;
UPDATE lb SET score = 30 WHERE game = 'g' AND player = 'p1';
SELECT player, score FROM lb WHERE game = 'g' ORDER BY score DESC;

DROP SCHEMA imported CASCADE;
DROP FOREIGN TABLE kv, kv2, kv4, lb;
SELECT ddb_delete_table('perm_kv') AS deleted;
SELECT ddb_delete_table('perm_lb') AS deleted;
DROP SERVER ddb CASCADE;

-- DynamoDB keeps text as UTF-8 and shard_fdw passes it through unconverted:
-- a database of another encoding is refused where shard_fdw is first used,
-- instead of reading DynamoDB's text as mojibake and sending its own as
-- bytes DynamoDB cannot take.  SQL_ASCII stores bytes as they come: it may
-- use shard_fdw, and what it sends is checked to be UTF-8.
SELECT current_database() AS regress_db \gset
CREATE DATABASE sfdw_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'
  TEMPLATE template0;
CREATE DATABASE sfdw_ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'
  TEMPLATE template0;

\c sfdw_latin1
-- (PostgreSQL 18 names the extension script's line as the error's context)
\set SHOW_CONTEXT never
CREATE EXTENSION shard_fdw;
\set SHOW_CONTEXT errors

\c sfdw_ascii
CREATE EXTENSION shard_fdw;
\ir sql/include/server.sql
SELECT ddb_create_table('enc_tab', 'pk') AS status;
CREATE FOREIGN TABLE enc (pk text, v text)
  SERVER ddb OPTIONS (table 'enc_tab', partition_key 'pk');
-- UTF-8 text goes and comes back byte for byte
INSERT INTO enc VALUES ('café', 'naïve 日本');
SELECT pk, v, octet_length(v) FROM enc;
-- bytes that are not UTF-8 are refused before anything is sent
INSERT INTO enc VALUES ('latin', E'caf\xe9');
UPDATE enc SET v = E'\xff' WHERE pk = 'café';
SELECT pk, v FROM enc WHERE pk = E'caf\xe9';
SELECT pk, v FROM enc ORDER BY pk;
SELECT ddb_delete_table('enc_tab');

\c :regress_db
DROP DATABASE sfdw_latin1;
DROP DATABASE sfdw_ascii;

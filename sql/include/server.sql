-- The server and user mapping the tests reach DynamoDB through: the test
-- proxy's endpoint and the credentials it accepts come from the environment
-- that test/check.sh sets up.
\getenv endpoint SHARD_FDW_ENDPOINT
\getenv akid SHARD_FDW_ACCESS_KEY
\getenv secret SHARD_FDW_SECRET_KEY
CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint :'endpoint');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (access_key_id :'akid', secret_access_key :'secret');
\ir ddb_tables.sql

-- Credentials: the user mapping's options, and who may use the server's
-- ambient credential sources (environment, shared files, container,
-- instance).  The test cluster's environment holds none of them, so the
-- default chain finds nothing; test/scripts/test_credentials.py covers the
-- sources themselves against local endpoints.
\ir sql/include/server.sql
SELECT ddb_create_table('creds_tab', 'k') AS status;
CREATE FOREIGN TABLE creds_kv (k text, v int)
  SERVER ddb OPTIONS (table 'creds_tab', partition_key 'k');
INSERT INTO creds_kv VALUES ('a', 1);

-- the options and how they fit together
CREATE SERVER ddb2 FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint :'endpoint');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb2 OPTIONS (duration_s '60');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb2 OPTIONS (duration_s '43201');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb2 OPTIONS (external_id 'x');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb2
  OPTIONS (role_arn 'arn:aws:iam::1:role/r', duration_s '900', role_session_name 's');
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb2
  OPTIONS (ADD profile 'p', ADD access_key_id 'AKID', ADD secret_access_key 'S');
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb2 OPTIONS (ADD ambient_credentials 'maybe');
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb2 OPTIONS (ADD ambient_credentials 'true');
DROP SERVER ddb2 CASCADE;

-- a superuser without static keys uses the default chain, which finds
-- nothing here; the error says what each source lacked
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (DROP access_key_id, DROP secret_access_key);
SELECT v FROM creds_kv WHERE k = 'a';
-- a named profile that is in neither file
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (ADD profile 'reports');
SELECT v FROM creds_kv WHERE k = 'a';
-- nothing is fetched to plan or EXPLAIN a query
EXPLAIN (COSTS OFF) SELECT v FROM creds_kv WHERE k = 'a';
ALTER USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (DROP profile, ADD access_key_id :'akid', ADD secret_access_key :'secret');

-- a non-superuser's mapping must bring its own keys
CREATE ROLE regress_creds_user;
GRANT SELECT ON creds_kv TO regress_creds_user;
GRANT USAGE ON FOREIGN SERVER ddb TO regress_creds_user;
CREATE USER MAPPING FOR regress_creds_user SERVER ddb;
SET ROLE regress_creds_user;
SELECT v FROM creds_kv WHERE k = 'a';
-- it cannot turn on the ambient sources itself, nor reach them by a profile
ALTER USER MAPPING FOR regress_creds_user SERVER ddb OPTIONS (ADD ambient_credentials 'true');
ALTER USER MAPPING FOR regress_creds_user SERVER ddb OPTIONS (ADD profile 'default');
SELECT v FROM creds_kv WHERE k = 'a';
-- a role to assume still needs its own keys to assume it with
ALTER USER MAPPING FOR regress_creds_user SERVER ddb
  OPTIONS (DROP profile, ADD role_arn 'arn:aws:iam::123456789012:role/reader');
SELECT v FROM creds_kv WHERE k = 'a';
-- with static keys it works
ALTER USER MAPPING FOR regress_creds_user SERVER ddb
  OPTIONS (DROP role_arn, ADD access_key_id :'akid', ADD secret_access_key :'secret');
SELECT v FROM creds_kv WHERE k = 'a';
RESET ROLE;
-- the public mapping is no way around it
DROP USER MAPPING FOR regress_creds_user SERVER ddb;
CREATE USER MAPPING FOR PUBLIC SERVER ddb;
SET ROLE regress_creds_user;
SELECT v FROM creds_kv WHERE k = 'a';
RESET ROLE;
DROP USER MAPPING FOR PUBLIC SERVER ddb;
-- the superuser-only switch lets a mapping use the ambient sources
CREATE USER MAPPING FOR regress_creds_user SERVER ddb OPTIONS (ambient_credentials 'true');
SET ROLE regress_creds_user;
SELECT v FROM creds_kv WHERE k = 'a';
RESET ROLE;

DROP USER MAPPING FOR regress_creds_user SERVER ddb;
REVOKE ALL ON creds_kv FROM regress_creds_user;
REVOKE ALL ON FOREIGN SERVER ddb FROM regress_creds_user;
DROP ROLE regress_creds_user;
SELECT ddb_delete_table('creds_tab');
DROP SERVER ddb CASCADE;

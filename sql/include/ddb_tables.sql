-- ddb_create_table(name, hash_key[, range_key]) creates an on-demand
-- DynamoDB table through server ddb and returns its status; a key is
-- 'attribute' (type S) or 'attribute:N'.  ddb_delete_table(name) deletes
-- one and returns its name.
CREATE OR REPLACE FUNCTION ddb_create_table(name text, hash_key text,
                                            range_key text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
  SELECT shard_fdw_request('ddb', 'CreateTable', jsonb_build_object(
    'TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', (SELECT jsonb_agg(jsonb_build_object(
                    'AttributeName', split_part(k, ':', 1), 'KeyType', kind))
                  FROM (VALUES (hash_key, 'HASH'), (range_key, 'RANGE')) AS keys(k, kind)
                  WHERE k IS NOT NULL),
    'AttributeDefinitions', (SELECT jsonb_agg(jsonb_build_object(
                    'AttributeName', split_part(k, ':', 1),
                    'AttributeType', coalesce(nullif(split_part(k, ':', 2), ''), 'S')))
                  FROM (VALUES (hash_key), (range_key)) AS keys(k)
                  WHERE k IS NOT NULL)))
    #>> '{TableDescription,TableStatus}'
$$;
CREATE OR REPLACE FUNCTION ddb_delete_table(name text) RETURNS text
LANGUAGE sql AS $$
  SELECT shard_fdw_request('ddb', 'DeleteTable', jsonb_build_object('TableName', name))
    #>> '{TableDescription,TableName}'
$$;

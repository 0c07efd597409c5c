-- ddb_create_indexed_table(name, hash_key, range_key, gsi[, lsi]) creates
-- an on-demand DynamoDB table with secondary indexes through server ddb
-- and returns its status: keys as ddb_create_table takes them (range_key
-- may be NULL), gsi and lsi its global and local secondary indexes, each
-- made by ddb_index(name, hash_key[, range_key[, projection]]), whose
-- keys are written alike and whose projection is 'ALL' (the default),
-- 'KEYS_ONLY' or the non-key attributes it includes ('name,plan').  The
-- attributes are defined once each, in the order they first appear.
CREATE OR REPLACE FUNCTION ddb_key_schema(hash_key text, range_key text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_agg(jsonb_build_object('AttributeName', split_part(k, ':', 1), 'KeyType', kind))
    FROM (VALUES (hash_key, 'HASH'), (range_key, 'RANGE')) AS keys(k, kind)
   WHERE k IS NOT NULL
$$;
CREATE OR REPLACE FUNCTION ddb_index(name text, hash_key text, range_key text DEFAULT NULL,
                          projection text DEFAULT 'ALL')
RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('IndexName', name,
    'KeySchema', ddb_key_schema(hash_key, range_key),
    'Projection', CASE WHEN projection IN ('ALL', 'KEYS_ONLY')
                       THEN jsonb_build_object('ProjectionType', projection)
                       ELSE jsonb_build_object('ProjectionType', 'INCLUDE', 'NonKeyAttributes',
                                               to_jsonb(string_to_array(projection, ',')))
                  END,
    'keys', to_jsonb(ARRAY[hash_key, range_key]))
$$;
CREATE OR REPLACE FUNCTION ddb_create_indexed_table(name text, hash_key text, range_key text,
                                         gsi jsonb[], lsi jsonb[] DEFAULT '{}')
RETURNS text LANGUAGE sql AS $$
  SELECT shard_fdw_request('ddb', 'CreateTable', jsonb_build_object(
    'TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', ddb_key_schema(hash_key, range_key),
    'AttributeDefinitions', (SELECT jsonb_agg(jsonb_build_object(
                    'AttributeName', split_part(k, ':', 1),
                    'AttributeType', coalesce(nullif(split_part(k, ':', 2), ''), 'S'))
                    ORDER BY first)
                  FROM (SELECT k, min(ord) AS first
                          FROM unnest(ARRAY[hash_key, range_key] ||
                                      ARRAY(SELECT jsonb_array_elements_text(i -> 'keys')
                                              FROM unnest(gsi || lsi) AS i))
                               WITH ORDINALITY AS keys(k, ord)
                         WHERE k IS NOT NULL GROUP BY k) AS firsts))
    || CASE WHEN cardinality(gsi) > 0 THEN jsonb_build_object('GlobalSecondaryIndexes',
            (SELECT jsonb_agg(i - 'keys') FROM unnest(gsi) AS i)) ELSE '{}' END
    || CASE WHEN cardinality(lsi) > 0 THEN jsonb_build_object('LocalSecondaryIndexes',
            (SELECT jsonb_agg(i - 'keys') FROM unnest(lsi) AS i)) ELSE '{}' END)
    #>> '{TableDescription,TableStatus}'
$$;

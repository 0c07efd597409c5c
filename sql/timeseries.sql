-- Time series keyed by time buckets, as the time-series article keys them:
-- the day in the partition key (SENSOR_READING#2023-10-27#_7), Python's
-- isoformat() in the sort key (2023-10-27T14:03:05.123456+00:00#dev-xyz-789),
-- the hour bucket of its GSI (device-group-A#2023-10-27T14:00:00Z).  Buckets
-- are UTC whatever the session's time zone.
\ir sql/include/server.sql
\ir sql/include/explain_analyze.sql
SET timezone = 'America/New_York';
SELECT ddb_create_table('ts_tab', 'PK', 'SK') AS status;

-- pattern 1: a random suffix, the day in the partition key
CREATE FOREIGN TABLE readings (event_type text, ts timestamptz, item_id text, payload jsonb)
  SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{event_type}#{ts:day}#_{shard}',
  sort_key 'SK', sort_key_format '{ts:isoformat}#{item_id}',
  shard_strategy 'random', shards '4');
-- pattern 2: a suffix calculated from device_id, int(sha256 hex[:8], 16) % N
CREATE FOREIGN TABLE by_device (event_type text, ts timestamptz, device_id text, temperature numeric)
  SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{event_type}#{ts:day}#_{shard}',
  sort_key 'SK', sort_key_format '{ts:isoformat}#{device_id}',
  shard_strategy 'calculated', shards '20', shard_by 'device_id', shard_hash 'sha256_32');
-- every bucket and form of one timestamp
CREATE FOREIGN TABLE forms (id text, ts timestamptz, local_ts timestamp, d date)
  SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format 'forms#{ts:month}|{ts:day}|{ts:hour}|{ts:minute}',
  sort_key 'SK', sort_key_format '{ts:isoformat}|{ts}|{local_ts:isoformat}|{local_ts:hour}|{d:isoformat}|{d:hour}|{id}');

-- the keys, byte for byte: 14:03:05 in UTC, with and without microseconds
SELECT partition_key, sort_key FROM shard_fdw_key('by_device',
  '{"event_type": "SENSOR_READING", "ts": "2023-10-27 14:03:05.123456+00", "device_id": "dev-xyz-789"}');
SELECT partition_key, sort_key FROM shard_fdw_key('by_device',
  '{"event_type": "SENSOR_READING", "ts": "2023-10-27 10:03:05-04", "device_id": "dev-xyz-789"}');
SELECT partition_key, sort_key FROM shard_fdw_key('forms',
  '{"id": "a", "ts": "2023-10-27 23:59:59.000001+00", "local_ts": "2023-10-27 14:03:05.5", "d": "2023-10-27"}');
-- 20:30 in New York is the next day in UTC
SELECT partition_key FROM shard_fdw_key('forms',
  '{"id": "a", "ts": "2023-10-27 20:30:00-04"}');
SELECT partition_key FROM shard_fdw_key('forms', '{"id": "a", "ts": "2023-10-27 20:30:00-04",
  "local_ts": "2023-10-27 20:30:00", "d": "2023-10-27"}');

-- INSERT writes them; DynamoDB holds exactly those strings (beside the
-- put token of the conditional put, see insert.sql)
INSERT INTO by_device VALUES
  ('SENSOR_READING', '2023-10-27 14:03:05.123456+00', 'dev-xyz-789', 23.5),
  ('SENSOR_READING', '2023-10-27 14:03:05+00', 'dev-abc-123', 21.0);
SELECT k.partition_key, shard_fdw_request('ddb', 'GetItem', jsonb_build_object('TableName', 'ts_tab',
         'Key', jsonb_build_object('PK', jsonb_build_object('S', k.partition_key),
                                   'SK', jsonb_build_object('S', k.sort_key)))) -> 'Item' #- '{shard_fdw_put}' AS item
  FROM (VALUES ('dev-xyz-789', '2023-10-27 14:03:05.123456+00'), ('dev-abc-123', '2023-10-27 14:03:05+00')) v(d, t),
       LATERAL shard_fdw_key('by_device', jsonb_build_object('event_type', 'SENSOR_READING', 'ts', t, 'device_id', d)) k;
SELECT device_id, ts, temperature FROM by_device
 WHERE event_type = 'SENSOR_READING' AND ts = '2023-10-27 14:03:05+00' AND device_id = 'dev-abc-123';

-- items written by the time-series article's code hold only the keys and a
-- payload: the timestamp is decoded from the sort key in any form isoformat() or
-- another writer left there, the day bucket gives nothing back
SELECT shard_fdw_request('ddb', 'BatchWriteItem', '{"RequestItems": {"ts_tab": [
  {"PutRequest": {"Item": {"PK": {"S": "SENSOR_READING#2023-10-27#_0"},
     "SK": {"S": "2023-10-27T14:03:05.123456+00:00#u-1"}, "payload": {"M": {"value": {"N": "1"}}}}}},
  {"PutRequest": {"Item": {"PK": {"S": "SENSOR_READING#2023-10-27#_1"},
     "SK": {"S": "2023-10-27T14:03:06+00:00#u-2"}, "payload": {"M": {"value": {"N": "2"}}}}}},
  {"PutRequest": {"Item": {"PK": {"S": "SENSOR_READING#2023-10-27#_2"},
     "SK": {"S": "2023-10-27T14:03:07.500000+00:00#u-3"}, "payload": {"M": {"value": {"N": "3"}}}}}},
  {"PutRequest": {"Item": {"PK": {"S": "SENSOR_READING#2023-10-27#_3"},
     "SK": {"S": "2023-10-27T16:03:08.25+02:00#u-4"}, "payload": {"M": {"value": {"N": "4"}}}}}},
  {"PutRequest": {"Item": {"PK": {"S": "SENSOR_READING#2023-10-27#_3"},
     "SK": {"S": "2023-10-27T14:03:09.5Z#u-5"}, "payload": {"M": {"value": {"N": "5"}}}}}}
  ]}}') ->> 'UnprocessedItems' AS unprocessed;
SELECT event_type, ts AT TIME ZONE 'UTC' AS utc, item_id, payload FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts = '2023-10-27 14:03:05.123456+00';
SELECT event_type, ts AT TIME ZONE 'UTC' AS utc, item_id, payload FROM readings
 WHERE item_id LIKE 'u-%' ORDER BY ts;

-- a bound on a leading isoformat field is written in that form (keys
-- written in another form sort as their text does: see the README)
EXPLAIN (VERBOSE, COSTS OFF) SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts = '2023-10-27 14:03:05.123456+00';
CREATE FOREIGN TABLE day_part (day date, ts timestamptz, item_id text, payload jsonb)
  SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format 'SENSOR_READING#{day:isoformat}#_{shard}',
  sort_key 'SK', sort_key_format '{ts:isoformat}#{item_id}',
  shard_strategy 'random', shards '4');
EXPLAIN (VERBOSE, COSTS OFF) SELECT item_id FROM day_part
 WHERE day = '2023-10-27' AND ts >= '2023-10-27 14:03:06+00' AND ts <= '2023-10-27 14:03:07.5+00'
 ORDER BY ts DESC;
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM day_part
 WHERE day = '2023-10-27' AND ts >= '2023-10-27 14:03:06+00' AND ts <= '2023-10-27 14:03:07.5+00'
 ORDER BY ts DESC;
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM day_part
 WHERE day = '2023-10-27' AND ts > '2023-10-27 14:03:05.123456+00' AND ts < '2023-10-27 14:03:08.25+00'
 ORDER BY ts;

-- a bucket leading the sort key gives no order to push down
CREATE FOREIGN TABLE by_hour (g text, ts timestamptz, id text)
  SERVER ddb OPTIONS (table 'ts_tab', partition_key 'PK', partition_key_format '{g}',
  sort_key 'SK', sort_key_format '{ts:hour}#{id}');
EXPLAIN (COSTS OFF) SELECT id FROM by_hour WHERE g = 'x' AND ts > '2023-10-27 14:00+00' ORDER BY ts;

-- time forms need a date or timestamp column stored as text
CREATE FOREIGN TABLE bad (g text, ts text) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{g}#{ts:day}', sort_key 'SK');
CREATE FOREIGN TABLE bad (g text, ts timestamptz OPTIONS (ddb_type 'N')) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{g}#{ts:hour}', sort_key 'SK');
CREATE FOREIGN TABLE bad (g text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{g}#{ts:week}', sort_key 'SK');
CREATE FOREIGN TABLE bad (g text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format '{g}#{shard:day}', sort_key 'SK');
ALTER FOREIGN TABLE by_hour ALTER COLUMN ts TYPE text;

-- ranges over buckets: each day from the first bound's to the last's is a
-- partition, read in each of its shards, with the sort key's bounds
CREATE TEMP TABLE local_readings AS
  SELECT 'SENSOR_READING'::text AS event_type,
         '2023-10-26 00:00+00'::timestamptz + i * interval '37 minutes' + i * interval '1 microsecond' AS ts,
         'r' || i AS item_id, jsonb_build_object('value', i) AS payload
    FROM generate_series(0, 200) i;
INSERT INTO readings SELECT * FROM local_readings;
INSERT INTO by_device SELECT 'DEVICE_READING', ts, 'dev-' || (i % 7), i FROM
  (SELECT ts, substr(item_id, 2)::int AS i FROM local_readings) r;
CREATE FUNCTION same_rows(lo timestamptz, hi timestamptz) RETURNS TABLE (rows bigint, missing bigint, extra bigint)
LANGUAGE sql AS $$
  WITH f AS (SELECT item_id, ts FROM readings
              WHERE event_type = 'SENSOR_READING' AND ts >= lo AND ts < hi AND item_id LIKE 'r%'),
       l AS (SELECT item_id, ts FROM local_readings WHERE ts >= lo AND ts < hi)
  SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM (TABLE l EXCEPT TABLE f) x),
         (SELECT count(*) FROM (TABLE f EXCEPT TABLE l) y)
$$;
EXPLAIN (VERBOSE, COSTS OFF) SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 12:00+00' AND ts < '2023-10-28 06:00+00';
SELECT explain_analyze($$SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 12:00+00' AND ts < '2023-10-28 06:00+00'$$);
SELECT * FROM same_rows('2023-10-26 12:00+00', '2023-10-28 06:00+00');
SELECT * FROM same_rows('2023-10-25 12:00+00', '2023-10-30 00:00+00');
SELECT * FROM same_rows('2023-10-27 23:59:59+00', '2023-10-28 00:00:01+00');
-- an upper bound at a bucket's start does not read that bucket; the
-- session's time zone moves the bounds, not the buckets
SELECT explain_analyze($$SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 20:00-04' AND ts < '2023-10-28 20:00-04'$$);
SELECT explain_analyze($$SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts BETWEEN '2023-10-27 00:00+00' AND '2023-10-28 00:00+00'$$);
-- merged in time order; descending reads the newest bucket first and a
-- LIMIT met there reads no other
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 22:00+00' AND ts < '2023-10-27 03:00+00'
 ORDER BY ts;
SELECT line FROM explain_analyze($$SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-29 00:00+00'
 ORDER BY ts DESC LIMIT 5$$) line
 WHERE line !~ 'Items Scanned';  -- how many a shard's Limit page holds is chance
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-29 00:00+00'
 ORDER BY ts DESC LIMIT 5;
SELECT (array_agg(item_id ORDER BY ts))[1:3] AS first, count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-29 00:00+00';
-- the device fixes the calculated shard: one partition a day
SELECT explain_analyze($$SELECT ts AT TIME ZONE 'UTC', temperature FROM by_device
 WHERE event_type = 'DEVICE_READING' AND device_id = 'dev-3'
   AND ts >= '2023-10-26 20:00+00' AND ts < '2023-10-28 04:00+00' ORDER BY ts$$);
SELECT count(*), min(temperature), max(temperature) FROM by_device
 WHERE event_type = 'DEVICE_READING' AND device_id = 'dev-3'
   AND ts >= '2023-10-26 20:00+00' AND ts < '2023-10-28 04:00+00';
-- bounds known when the scan starts (now(), a stable expression) or the
-- plan runs (parameters): counted then
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts > now() - interval '2 days' AND ts <= now();
SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts > now() - interval '2 days' AND ts <= now();
SELECT explain_analyze($$SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-27 00:00+00'::timestamptz - interval '1 day'
   AND ts < '2023-10-27 00:00+00'::timestamptz$$);
PREPARE range_read(timestamptz, timestamptz) AS SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= $1 AND ts < $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE range_read('2023-10-26 00:00+00', '2023-10-27 00:00+00');
EXECUTE range_read('2023-10-26 00:00+00', '2023-10-27 00:00+00');
EXECUTE range_read('2023-10-27 00:00+00', '2023-10-26 00:00+00');
EXECUTE range_read(NULL, '2023-10-26 00:00+00');
ALTER FOREIGN TABLE readings OPTIONS (ADD max_partitions '8');
EXECUTE range_read('2023-10-26 00:00+00', '2023-10-27 00:00+00');
EXECUTE range_read('2023-10-26 00:00+00', '2023-10-28 00:00+00');
EXECUTE range_read('2023-10-26 00:00+00', '2023-10-28 00:00:01+00');
EXECUTE range_read('-infinity', '2023-10-28 00:00+00');
RESET plan_cache_mode;
-- bounded on one side: read away from it, bucket after bucket, while a
-- LIMIT wants rows in that order; past max_partitions buckets, an error
SELECT explain_analyze($$SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts > '2023-10-26 22:00+00' ORDER BY ts LIMIT 3$$);
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts > '2023-10-26 22:00+00' ORDER BY ts LIMIT 3;
SELECT line FROM explain_analyze($$SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts <= '2023-10-28 02:00+00' ORDER BY ts DESC LIMIT 3$$) line
 WHERE line !~ 'Items Scanned';
SELECT item_id, ts AT TIME ZONE 'UTC' AS utc FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts <= '2023-10-28 02:00+00' ORDER BY ts DESC LIMIT 3;
SELECT count(*) FROM (SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-28 00:00+00' ORDER BY ts LIMIT 20) x;
SELECT count(*) FROM (SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-28 00:00+00' ORDER BY ts LIMIT 1000) x;
-- more partitions than max_partitions, or no bound on one side without
-- such an order and LIMIT: a Scan
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-28 00:00:01+00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '-infinity' AND ts < '2023-10-28 00:00+00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00';
EXPLAIN (COSTS OFF) SELECT item_id FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' ORDER BY ts DESC LIMIT 3;
-- the Scan counts what Queries of the buckets would: by_device's two items
-- under shards 8 and 13 of the same days are not readings' rows
SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-28 00:00:01+00';
-- with room for its 12 partitions, the same range is read by Queries of
-- its buckets: as many rows
ALTER FOREIGN TABLE readings OPTIONS (SET max_partitions '16');
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-28 00:00:01+00';
SELECT count(*) FROM readings
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-26 00:00+00' AND ts < '2023-10-28 00:00:01+00';
ALTER FOREIGN TABLE readings OPTIONS (SET max_partitions '0');

-- months of a date column, across a year's end; an order that is not the
-- buckets' (a score) merges every bucket's streams at once; a timestamp
-- without time zone is bucketed as UTC
CREATE FOREIGN TABLE monthly (g text, d date, v int) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format 'monthly#{g}#{d:month}',
  sort_key 'SK', sort_key_format '{d}#{v:06}');
INSERT INTO monthly SELECT 'g', d, i FROM generate_series(0, 119) i,
  LATERAL (SELECT '2023-10-01'::date + i AS d) x;
SELECT explain_analyze($$SELECT count(*), min(d), max(d) FROM monthly
 WHERE g = 'g' AND d BETWEEN '2023-10-15' AND '2024-01-05'$$);
SELECT count(*), min(d), max(d) FROM monthly WHERE g = 'g' AND d BETWEEN '2023-10-15' AND '2024-01-05';
CREATE FOREIGN TABLE scored (g text, ts timestamp, score int) SERVER ddb OPTIONS (table 'ts_tab',
  partition_key 'PK', partition_key_format 'scored#{g}#{ts:hour}',
  sort_key 'SK', sort_key_format '{score:010}#{ts}');
INSERT INTO scored SELECT 'g', '2023-10-27 10:00'::timestamp + i * interval '7 minutes', (i * 37) % 101
  FROM generate_series(0, 40) i;
SELECT explain_analyze($$SELECT score, ts FROM scored
 WHERE g = 'g' AND ts >= '2023-10-27 10:30' AND ts < '2023-10-27 13:00' ORDER BY score DESC LIMIT 3$$);
SELECT score, ts FROM scored
 WHERE g = 'g' AND ts >= '2023-10-27 10:30' AND ts < '2023-10-27 13:00' ORDER BY score DESC LIMIT 3;
SELECT partition_key FROM shard_fdw_key('scored', '{"g": "g", "ts": "2023-10-27 23:59:59.999999", "score": 1}');
DROP FOREIGN TABLE monthly, scored;

DROP FUNCTION same_rows;
DROP FOREIGN TABLE readings, by_device, forms, day_part, by_hour;
SELECT ddb_delete_table('ts_tab') AS deleted;

-- pattern 3: a random suffix on the table, and a GSI whose keys every
-- write renders, the hour bucket and isoformat() as the time-series
-- article writes them
SELECT shard_fdw_request('ddb', 'CreateTable', '{"TableName": "ts_gsi",
  "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
    {"AttributeName": "SK", "AttributeType": "S"}, {"AttributeName": "GSI1PK", "AttributeType": "S"},
    {"AttributeName": "GSI1SK", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "GSI1-Read-Aggregator",
    "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}, {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}]}') #>> '{TableDescription,TableStatus}' AS status;
CREATE FOREIGN TABLE events (entity_id text, ts timestamptz, payload jsonb, tag text)
  SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', partition_key_format '{entity_id}#_{shard}',
  sort_key 'SK', sort_key_format '{ts:isoformat}', shard_strategy 'random', shards '16',
  index_partition_key 'GSI1PK', index_partition_key_format '{entity_id}#{ts:hour}',
  index_sort_key 'GSI1SK', index_sort_key_format '{ts:isoformat}');
CREATE FOREIGN TABLE events_by_hour (entity_id text, ts timestamptz, payload jsonb, tag text)
  SERVER ddb OPTIONS (table 'ts_gsi', index 'GSI1-Read-Aggregator',
  partition_key 'GSI1PK', partition_key_format '{entity_id}#{ts:hour}',
  sort_key 'GSI1SK', sort_key_format '{ts:isoformat}');
CREATE TEMP TABLE local_events AS
  SELECT 'device-group-' || chr(65 + i % 2) AS entity_id,
         '2023-10-27 10:00+00'::timestamptz + i * interval '7 minutes 13 seconds'
           + (i % 3) * interval '250 milliseconds' AS ts,
         jsonb_build_object('temp', i) AS payload, NULL::text AS tag
    FROM generate_series(0, 120) i;
INSERT INTO events SELECT * FROM local_events;
SELECT item - 'payload' - 'entity_id' - 'ts' - 'PK' - 'shard_fdw_put' AS keys, item->'PK'->>'S' ~ '^device-group-A#_[0-9]+$' AS pk_ok
  FROM jsonb_path_query(shard_fdw_request('ddb', 'Query', '{"TableName": "ts_gsi",
    "IndexName": "GSI1-Read-Aggregator", "KeyConditionExpression": "GSI1PK = :g",
    "ExpressionAttributeValues": {":g": {"S": "device-group-A#2023-10-27T14:00:00Z"}}}'), '$.Items[*]') item
 ORDER BY item->'SK'->>'S' LIMIT 3;
-- a 6-hour range is 6 Queries of the index, merged in time order
SELECT explain_analyze($$SELECT ts, payload FROM events_by_hour
 WHERE entity_id = 'device-group-A' AND ts >= '2023-10-27 11:30+00' AND ts < '2023-10-27 17:00+00'
 ORDER BY ts$$);
SELECT count(*) AS rows,
       (SELECT count(*) FROM local_events WHERE entity_id = 'device-group-A'
           AND ts >= '2023-10-27 11:30+00' AND ts < '2023-10-27 17:00+00') AS local_rows,
       bool_and(ok) AS same_order
  FROM (SELECT f.ts = l.ts AND f.payload = l.payload AS ok
          FROM (SELECT ts, payload, row_number() OVER () AS n FROM events_by_hour
                 WHERE entity_id = 'device-group-A' AND ts >= '2023-10-27 11:30+00' AND ts < '2023-10-27 17:00+00'
                 ORDER BY ts) f
          JOIN (SELECT ts, payload, row_number() OVER (ORDER BY ts) AS n FROM local_events
                 WHERE entity_id = 'device-group-A' AND ts >= '2023-10-27 11:30+00' AND ts < '2023-10-27 17:00+00') l
            USING (n)) x;
SELECT explain_analyze($$SELECT ts AT TIME ZONE 'UTC', payload FROM events_by_hour
 WHERE entity_id = 'device-group-B' AND ts BETWEEN '2023-10-27 10:00+00' AND '2023-10-27 23:00+00'
 ORDER BY ts DESC LIMIT 3$$);
SELECT ts AT TIME ZONE 'UTC' AS utc, payload FROM events_by_hour
 WHERE entity_id = 'device-group-B' AND ts BETWEEN '2023-10-27 10:00+00' AND '2023-10-27 23:00+00'
 ORDER BY ts DESC LIMIT 3;
-- UPDATE keeps the index keys true: a new time moves the item and its
-- hour, a new payload keeps both
UPDATE events SET ts = '2023-10-27 09:59:59+00'
 WHERE entity_id = 'device-group-A' AND ts >= '2023-10-27 10:00+00' AND ts < '2023-10-27 10:10+00';
UPDATE events SET payload = '{"temp": -1}'
 WHERE entity_id = 'device-group-B' AND ts >= '2023-10-27 10:00+00' AND ts < '2023-10-27 10:10+00';
SELECT entity_id, ts AT TIME ZONE 'UTC' AS utc, payload FROM events_by_hour
 WHERE entity_id IN ('device-group-A', 'device-group-B') AND ts >= '2023-10-27 09:00+00' AND ts < '2023-10-27 10:10+00'
 ORDER BY ts;
-- an index key whose columns have no value is left out (a sparse index),
-- and removed when an UPDATE takes the value away
CREATE FOREIGN TABLE tagged (entity_id text, ts timestamptz, tag text)
  SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', partition_key_format 'tagged#{entity_id}',
  sort_key 'SK', sort_key_format '{ts:isoformat}',
  index_partition_key 'GSI1PK', index_partition_key_format '{tag}#{ts:hour}',
  index_sort_key 'GSI1SK', index_sort_key_format '{ts:isoformat}');
INSERT INTO tagged VALUES ('e1', '2023-10-27 12:00+00', NULL), ('e2', '2023-10-27 12:00+00', 'hot');
UPDATE tagged SET tag = 'cold' WHERE entity_id = 'e1';
UPDATE tagged SET tag = NULL WHERE entity_id = 'e2';
SELECT item->'PK'->>'S' AS pk, item->'GSI1PK'->>'S' AS gsi1pk, item->'GSI1SK'->>'S' AS gsi1sk
  FROM unnest(ARRAY['tagged#e1', 'tagged#e2']) pk,
       LATERAL jsonb_path_query(shard_fdw_request('ddb', 'Query', jsonb_build_object('TableName', 'ts_gsi',
         'KeyConditionExpression', 'PK = :p', 'ExpressionAttributeValues',
         jsonb_build_object(':p', jsonb_build_object('S', pk)))), '$.Items[*]') item;
-- the index's table is read-only; its keys come with their templates
INSERT INTO events_by_hour VALUES ('x', now(), '{}', NULL);
CREATE FOREIGN TABLE bad (entity_id text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', sort_key 'SK', index_partition_key 'GSI1PK');
CREATE FOREIGN TABLE bad (entity_id text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', sort_key 'SK', index_sort_key_format '{ts:isoformat}');
CREATE FOREIGN TABLE bad (entity_id text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', sort_key 'SK', index_partition_key 'GSI1PK',
  index_partition_key_format '{entity_id}#{shard}');
CREATE FOREIGN TABLE bad (entity_id text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_gsi',
  index 'GSI1-Read-Aggregator', partition_key 'GSI1PK', sort_key 'GSI1SK',
  index_partition_key 'GSI1PK', index_partition_key_format '{entity_id}#{ts:hour}');
CREATE FOREIGN TABLE bad (entity_id text, ts timestamptz) SERVER ddb OPTIONS (table 'ts_gsi',
  partition_key 'PK', partition_key_format '{entity_id}', sort_key 'SK', sort_key_format '{ts}',
  index_partition_key 'GSI1PK', index_partition_key_format '{entity}#{ts:hour}');
ALTER TABLE tagged RENAME COLUMN tag TO label;

DROP FOREIGN TABLE events, events_by_hour, tagged;
SELECT ddb_delete_table('ts_gsi') AS deleted;
DROP SERVER ddb CASCADE;

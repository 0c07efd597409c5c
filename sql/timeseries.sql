-- Time series keyed by time buckets, as seed 004 keys them: the day in
-- the partition key (SENSOR_READING#2023-10-27#_7), Python's isoformat()
-- in the sort key (2023-10-27T14:03:05.123456+00:00#dev-xyz-789), the
-- hour bucket of its GSI (device-group-A#2023-10-27T14:00:00Z).  Buckets
-- are UTC whatever the session's time zone.
\ir sql/include/server.sql
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

-- INSERT writes them; DynamoDB holds exactly those strings
INSERT INTO by_device VALUES
  ('SENSOR_READING', '2023-10-27 14:03:05.123456+00', 'dev-xyz-789', 23.5),
  ('SENSOR_READING', '2023-10-27 14:03:05+00', 'dev-abc-123', 21.0);
SELECT k.partition_key, shard_fdw_request('ddb', 'GetItem', jsonb_build_object('TableName', 'ts_tab',
         'Key', jsonb_build_object('PK', jsonb_build_object('S', k.partition_key),
                                   'SK', jsonb_build_object('S', k.sort_key)))) -> 'Item' AS item
  FROM (VALUES ('dev-xyz-789', '2023-10-27 14:03:05.123456+00'), ('dev-abc-123', '2023-10-27 14:03:05+00')) v(d, t),
       LATERAL shard_fdw_key('by_device', jsonb_build_object('event_type', 'SENSOR_READING', 'ts', t, 'device_id', d)) k;
SELECT device_id, ts, temperature FROM by_device
 WHERE event_type = 'SENSOR_READING' AND ts = '2023-10-27 14:03:05+00' AND device_id = 'dev-abc-123';

-- items written by seed 004's code hold only the keys and a payload: the
-- timestamp is decoded from the sort key in any form isoformat() or
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
 WHERE event_type = 'SENSOR_READING' AND ts >= '2023-10-27 14:00+00' AND ts < '2023-10-27 15:00+00'
   AND item_id LIKE 'u-%'
 ORDER BY ts;

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

DROP FOREIGN TABLE readings, by_device, forms, day_part, by_hour;
SELECT ddb_delete_table('ts_tab') AS deleted;
DROP SERVER ddb CASCADE;

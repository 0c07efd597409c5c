#!/usr/bin/python3
"""The time-series article's events, written by its code, read over buckets.

The article's three patterns are written with boto3 exactly as its code
writes them (the timestamp of each event passed in where the article calls
datetime.now(timezone.utc)): a random suffix with the day in the partition
key, a suffix calculated from device_id with int(sha256 hex[:8], 16) % N,
and the GSI fan-out with hour buckets.  Through SQL, random ranges spanning
several days and hours must give exactly a local table's rows, in time
order; each read must cost exactly buckets x shards requests, counted both
by EXPLAIN ANALYZE and by the proxy (one shard a bucket when the device is
fixed); ORDER BY ts DESC LIMIT 10 must read only the newest buckets it
needs; and rows written through SQL must have the keys the article's code
computes, byte for byte, read back with boto3.  Ends with "N passed, N
failed".
"""

import datetime
import hashlib
import json
import os
import random
import re
import uuid
from decimal import Decimal

import boto3
from boto3.dynamodb.conditions import Key

import bed
from bed import sql_literal

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "20231027"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("timeseries")
UTC = datetime.timezone.utc
START = datetime.datetime(2023, 10, 26, 0, 0, tzinfo=UTC)
HOURS = 72
EVENTS = 300                 # per pattern
RANDOM_SHARDS = 10           # pattern 1
DEVICE_SHARDS = 20           # pattern 2
GSI_SHARDS = 16              # pattern 3
DEVICES = [f"dev-{i:03d}" for i in range(12)]
GROUPS = ["device-group-A", "device-group-B"]
INDEX = "GSI1-Read-Aggregator"
RANGES = 12                  # random ranges per pattern
client = None
tables = []
names = {}
used_instants = set()


# ------------------------------------------------------------ the article


class ShardedTimeSeriesWriter:
    """Pattern 1, as the article writes it."""

    def __init__(self, table, shard_count=10):
        self.table = table
        self.shard_count = shard_count

    def write_event(self, base_pk, payload, now):
        shard_id = rng.randint(0, self.shard_count - 1)
        sharded_pk = f"{base_pk}#_{shard_id}"

        timestamp = now.isoformat()
        item_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        sort_key = f"{timestamp}#{item_id}"

        self.table.put_item(Item={'PK': sharded_pk, 'SK': sort_key, 'payload': payload})
        return sharded_pk, sort_key


class CalculatedShardedWriter:
    """Pattern 2, as the article writes it."""

    def __init__(self, table, shard_count=10):
        self.table = table
        self.shard_count = shard_count

    def _calculate_shard_id(self, key_string):
        hashed = hashlib.sha256(key_string.encode('utf-8')).hexdigest()
        return int(hashed[:8], 16) % self.shard_count

    def write_event(self, base_pk, sharding_key, payload, now):
        shard_id = self._calculate_shard_id(sharding_key)
        sharded_pk = f"{base_pk}#_{shard_id}"

        timestamp = now.isoformat()
        sort_key = f"{timestamp}#{sharding_key}"

        self.table.put_item(Item={'PK': sharded_pk, 'SK': sort_key, 'payload': payload})
        return sharded_pk, sort_key


class GsiShardedService:
    """Pattern 3, as the article writes it."""

    def __init__(self, table, shard_count=16):
        self.table = table
        self.shard_count = shard_count

    def _get_time_bucket(self, dt_object, granularity='hour'):
        if granularity == 'hour':
            return dt_object.strftime('%Y-%m-%dT%H:00:00Z')
        elif granularity == 'day':
            return dt_object.strftime('%Y-%m-%d')
        return dt_object.isoformat()

    def write_event(self, entity_id, payload, now):
        shard_id = rng.randint(0, self.shard_count - 1)
        sharded_pk = f"{entity_id}#_{shard_id}"

        timestamp = now.isoformat()

        gsi1_pk = f"{entity_id}#{self._get_time_bucket(now, 'hour')}"
        gsi1_sk = timestamp

        self.table.put_item(Item={'PK': sharded_pk, 'SK': timestamp, 'GSI1PK': gsi1_pk,
                                  'GSI1SK': gsi1_sk, 'payload': payload})
        return sharded_pk, timestamp

    def get_events_for_range(self, entity_id, start_time, end_time):
        time_bucket = self._get_time_bucket(start_time, 'hour')
        gsi_pk = f"{entity_id}#{time_bucket}"
        response = self.table.query(
            IndexName=INDEX,
            KeyConditionExpression=Key('GSI1PK').eq(gsi_pk) & Key('GSI1SK').between(
                start_time.isoformat(), end_time.isoformat()))
        return response.get('Items', [])


# ---------------------------------------------------------------- helpers


sql = bed.in_database(DATABASE)


def rows(text):
    """The rows of a query in this script's database."""
    return bed.query(text, database=DATABASE)


def resource():
    """A boto3 resource straight to DynamoDB Local, as the article uses."""
    return boto3.resource(
        "dynamodb", endpoint_url=bed.env("SHARD_FDW_DIRECT_ENDPOINT"),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"))


def random_instant():
    """An instant in the 72 hours, a fifth of them on a whole second
    (isoformat() then writes no fraction); never one drawn before, so
    that the time order is one order."""
    while True:
        micros = rng.randrange(HOURS * 3600 * 10 ** 6)
        if rng.random() < 0.2:
            micros -= micros % 10 ** 6
        if micros not in used_instants:
            used_instants.add(micros)
            return START + datetime.timedelta(microseconds=micros)


def pg_time(instant):
    return sql_literal(instant.isoformat())


def plain(value):
    """A payload as JSON text, with boto3's Decimals as numbers."""
    return json.dumps(value, default=lambda d: int(d) if d == int(d) else float(d),
                      sort_keys=True)


def analyze(query):
    """EXPLAIN ANALYZE's figures of the foreign scan, and the requests the
    proxy saw for the statement."""
    before = bed.stats()["requests_total"]
    lines = [r[0] for r in rows("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + query)]
    seen = bed.stats()["requests_total"] - before
    figures = {}
    for line in lines:
        m = re.match(r"\s*(->\s*)?([A-Za-z ]+): (\d+)$", line)
        if m:
            figures[m.group(2)] = int(m.group(3))
    figures["proxy"] = seen
    figures["plan"] = "\n".join(lines)
    return figures


def buckets_between(lo, hi, hours):
    """The day (or hour) buckets from lo's to hi's, both included."""
    if hours:
        first = lo.replace(minute=0, second=0, microsecond=0)
        last = hi.replace(minute=0, second=0, microsecond=0)
        return int((last - first).total_seconds() // 3600) + 1
    return (hi.date() - lo.date()).days + 1


def random_range():
    """A random range [lo, hi) spanning from under an hour to two days."""
    lo = random_instant() - datetime.timedelta(hours=6)
    hi = lo + datetime.timedelta(microseconds=rng.randrange(1, 48 * 3600 * 10 ** 6))
    return lo, hi


# ------------------------------------------------------------------ setup


def set_up():
    """The three patterns' tables, written by the article's code, their
    foreign tables and a local table holding the same events."""
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    for pattern in ("random", "device", "gsi"):
        names[pattern] = bed.unique_name(f"ts_{pattern}")
        tables.append(names[pattern])
    for pattern in ("random", "device"):
        bed.create_table(client, names[pattern], "PK", "SK")
    bed.create_table(client, names["gsi"], "PK", "SK", gsi=(INDEX, "GSI1PK", "GSI1SK"))

    ddb = resource()
    random_writer = ShardedTimeSeriesWriter(ddb.Table(names["random"]), RANDOM_SHARDS)
    device_writer = CalculatedShardedWriter(ddb.Table(names["device"]), DEVICE_SHARDS)
    service = GsiShardedService(ddb.Table(names["gsi"]), GSI_SHARDS)
    local = []
    for i in range(EVENTS):
        now = random_instant()
        base_pk = f"SENSOR_READING#{now.strftime('%Y-%m-%d')}"
        payload = {'value': i}
        _, sk = random_writer.write_event(base_pk, payload, now)
        local.append(("random", "SENSOR_READING", now, sk.split("#", 1)[1], plain(payload)))
        now = random_instant()
        device = rng.choice(DEVICES)
        payload = {'device_id': device, 'temperature': Decimal(str(rng.randrange(-100, 400) / 10))}
        device_writer.write_event(f"SENSOR_READING#{now.strftime('%Y-%m-%d')}", device, payload, now)
        local.append(("device", "SENSOR_READING", now, device, plain(payload)))
        now = random_instant()
        group = rng.choice(GROUPS)
        payload = {'temp': Decimal(str(rng.randrange(0, 500) / 10))}
        service.write_event(group, payload, now)
        local.append(("gsi", group, now, None, plain(payload)))

    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""
        CREATE EXTENSION shard_fdw;
        {bed.server_sql()}
        {bed.foreign_table_sql(
            "readings", "event_type text, ts timestamptz, item_id text, payload jsonb",
            names["random"],
            partition_key="PK", partition_key_format="{event_type}#{ts:day}#_{shard}",
            sort_key="SK", sort_key_format="{ts:isoformat}#{item_id}",
            shard_strategy="random", shards=RANDOM_SHARDS)}
        {bed.foreign_table_sql(
            "by_device", "event_type text, ts timestamptz, device_id text, payload jsonb",
            names["device"],
            partition_key="PK", partition_key_format="{event_type}#{ts:day}#_{shard}",
            sort_key="SK", sort_key_format="{ts:isoformat}#{device_id}",
            shard_strategy="calculated", shards=DEVICE_SHARDS, shard_by="device_id",
            shard_hash="sha256_32")}
        {bed.foreign_table_sql(
            "events", "entity_id text, ts timestamptz, payload jsonb", names["gsi"],
            partition_key="PK", partition_key_format="{entity_id}#_{shard}",
            sort_key="SK", sort_key_format="{ts:isoformat}",
            shard_strategy="random", shards=GSI_SHARDS,
            index_partition_key="GSI1PK", index_partition_key_format="{entity_id}#{ts:hour}",
            index_sort_key="GSI1SK", index_sort_key_format="{ts:isoformat}")}
        {bed.foreign_table_sql(
            "events_by_hour", "entity_id text, ts timestamptz, payload jsonb", names["gsi"],
            index=INDEX,
            partition_key="GSI1PK", partition_key_format="{entity_id}#{ts:hour}",
            sort_key="GSI1SK", sort_key_format="{ts:isoformat}")}
        CREATE TABLE local_events (pattern text, key text, ts timestamptz, id text, payload jsonb);
        INSERT INTO local_events VALUES
        """ + ",\n".join(f"({sql_literal(p)}, {sql_literal(k)}, {pg_time(t)}, "
                         f"{sql_literal(d)}, {sql_literal(j)})"
                         for p, k, t, d, j in local) + ";")


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


# ------------------------------------------------------------------ reads


def compare(query, local_query, what):
    """The foreign rows are the local ones, in the same order (payloads
    compared as JSON values: DynamoDB Local keeps the 28.0 boto3 sent)."""
    got = [r[:-1] + [json.loads(r[-1])] for r in rows(query)]
    want = [r[:-1] + [json.loads(r[-1])] for r in rows(local_query)]
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    assert got == want, (f"{what}: {len(got)} rows, {len(want)} expected; first difference "
                         f"at {first}: {got[first:first + 1]} / {want[first:first + 1]}")
    return len(got)


def bounds_sql(lo, hi, inclusive):
    if inclusive:
        return f"ts BETWEEN {pg_time(lo)} AND {pg_time(hi)}"
    return f"ts >= {pg_time(lo)} AND ts < {pg_time(hi)}"


def check_range(table, fixed, local_fixed, id_column, lo, hi, inclusive, hours, shards):
    """One range read: the local rows in order, buckets x shards requests."""
    cond = bounds_sql(lo, hi, inclusive)
    out = f"to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), {id_column}, payload"
    count = compare(
        f"SELECT {out} FROM {table} WHERE {fixed} AND {cond} ORDER BY ts",
        f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), id, payload "
        f"FROM local_events WHERE {local_fixed} AND {cond} ORDER BY ts",
        f"{table} {cond}")
    last = hi if inclusive else hi - datetime.timedelta(microseconds=1)
    buckets = buckets_between(lo, last, hours)
    figures = analyze(f"SELECT {out} FROM {table} WHERE {fixed} AND {cond} ORDER BY ts")
    assert figures["Buckets Read"] == buckets, figures["plan"]
    assert figures["DynamoDB Requests"] == buckets * shards, figures["plan"]
    assert figures["proxy"] == buckets * shards, (figures["proxy"], figures["plan"])
    return count


def check_ranges(table, id_column, shards, hours, pick):
    """RANGES random ranges read from table, pick() giving each one's
    conditions on the foreign and the local table (see check_range)."""
    total = 0
    for _ in range(RANGES):
        lo, hi = random_range()
        fixed, local_fixed = pick()
        total += check_range(table, fixed, local_fixed, id_column, lo, hi,
                             rng.random() < 0.3, hours, shards)
    assert total > 0


@runner.test
def random_suffix_ranges_over_days():
    """Pattern 1: days x 10 shards, merged in time order."""
    check_ranges("readings", "item_id", RANDOM_SHARDS, False,
                 lambda: ("event_type = 'SENSOR_READING'", "pattern = 'random'"))


def one_of(values, fixed, local_fixed):
    """pick() for check_ranges: a random value in both conditions."""
    def pick():
        value = rng.choice(values)
        return fixed.format(value), local_fixed.format(value)
    return pick


@runner.test
def calculated_suffix_ranges_one_shard_a_day():
    """Pattern 2: the device fixes its shard: one Query a day; without the
    device, every shard of every day."""
    check_ranges("by_device", "device_id", 1, False,
                 one_of(DEVICES, "event_type = 'SENSOR_READING' AND device_id = '{}'",
                        "pattern = 'device' AND id = '{}'"))
    for _ in range(RANGES):
        lo, hi = random_range()
        cond = bounds_sql(lo, hi, False)
        compare(
            f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), device_id, payload "
            f"FROM by_device WHERE event_type = 'SENSOR_READING' AND {cond} ORDER BY ts, device_id",
            f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), id, payload "
            f"FROM local_events WHERE pattern = 'device' AND {cond} ORDER BY ts, id",
            f"by_device {cond}")
        figures = analyze(f"SELECT count(*) FROM by_device WHERE event_type = 'SENSOR_READING' AND {cond}")
        days = buckets_between(lo, hi - datetime.timedelta(microseconds=1), False)
        assert figures["proxy"] == days * DEVICE_SHARDS, figures["plan"]


@runner.test
def gsi_ranges_over_hours():
    """Pattern 3: the index read hour by hour."""
    check_ranges("events_by_hour", "NULL::text", 1, True,
                 one_of(GROUPS, "entity_id = '{}'", "pattern = 'gsi' AND key = '{}'"))


@runner.test
def gsi_reader_of_the_article_agrees_within_an_hour():
    """Within one hour the article's own GSI reader and SQL agree."""
    service = GsiShardedService(resource().Table(names["gsi"]), GSI_SHARDS)
    for _ in range(5):
        group = rng.choice(GROUPS)
        lo = random_instant().replace(minute=0, second=0, microsecond=0)
        hi = lo + datetime.timedelta(minutes=59, seconds=59)
        items = service.get_events_for_range(group, lo, hi)
        want = [(datetime.datetime.fromisoformat(i["GSI1SK"]).strftime("%Y-%m-%d %H:%M:%S.%f"),
                 json.loads(plain(i["payload"]))) for i in items]
        got = [(t, json.loads(p)) for t, p in rows(
            f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), payload "
            f"FROM events_by_hour WHERE entity_id = '{group}' AND {bounds_sql(lo, hi, True)} "
            f"ORDER BY ts")]
        assert got == want, (got[:3], want[:3])


@runner.test
def newest_first_reads_only_the_newest_buckets():
    """ORDER BY ts DESC LIMIT 10 over two days reads from the newest bucket
    back only as far as its tenth row; ts > a ORDER BY ts LIMIT 10 from a's
    bucket up only as far as its tenth row."""
    cases = [("readings", "event_type = 'SENSOR_READING'", "random", "SENSOR_READING",
              False, RANDOM_SHARDS),
             ("events_by_hour", "entity_id = 'device-group-A'", "gsi", "device-group-A",
              True, 1)]
    for table, fixed, pattern, key, hours, shards in cases:
        for _ in range(4):
            hi = START + datetime.timedelta(hours=rng.randrange(30, HOURS + 6))
            lo = hi - datetime.timedelta(hours=48)
            cond = bounds_sql(lo, hi, False)
            newest = rows(f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') "
                          f"FROM local_events WHERE pattern = '{pattern}' "
                          f"AND key = {sql_literal(key)} AND {cond} ORDER BY ts DESC LIMIT 10")
            got = rows(f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') "
                       f"FROM {table} WHERE {fixed} AND {cond} ORDER BY ts DESC LIMIT 10")
            assert got == newest, (table, cond, got, newest)
            last = hi - datetime.timedelta(microseconds=1)
            if len(newest) < 10:
                buckets = buckets_between(lo, last, hours)
            else:
                tenth = datetime.datetime.strptime(newest[-1][0], "%Y-%m-%d %H:%M:%S.%f") \
                    .replace(tzinfo=UTC)
                buckets = buckets_between(tenth, last, hours)
            figures = analyze(f"SELECT ts FROM {table} WHERE {fixed} AND {cond} "
                              f"ORDER BY ts DESC LIMIT 10")
            assert figures["Buckets Read"] == buckets, (buckets, figures["plan"])
            assert figures["proxy"] == buckets * shards, (buckets, figures["plan"])

            # bounded below only, read upwards until the tenth row
            cond = f"ts > {pg_time(lo)}"
            oldest = rows(f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') "
                          f"FROM local_events WHERE pattern = '{pattern}' "
                          f"AND key = {sql_literal(key)} AND {cond} ORDER BY ts LIMIT 10")
            got = rows(f"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') "
                       f"FROM {table} WHERE {fixed} AND {cond} ORDER BY ts LIMIT 10")
            assert got == oldest and len(got) == 10, (table, cond, got, oldest)
            tenth = datetime.datetime.strptime(oldest[-1][0], "%Y-%m-%d %H:%M:%S.%f") \
                .replace(tzinfo=UTC)
            figures = analyze(f"SELECT ts FROM {table} WHERE {fixed} AND {cond} "
                              f"ORDER BY ts LIMIT 10")
            buckets = buckets_between(lo, tenth, hours)
            assert figures["Buckets Read"] == buckets, (buckets, figures["plan"])
            assert figures["proxy"] == buckets * shards, (buckets, figures["plan"])


# ----------------------------------------------------------------- writes


@runner.test
def sql_writes_the_article_keys():
    """Rows inserted through SQL carry the keys the article's code computes
    for them, byte for byte: read back with boto3."""
    ddb = resource()
    device_writer = CalculatedShardedWriter(None, DEVICE_SHARDS)
    service = GsiShardedService(None, GSI_SHARDS)
    for i in range(20):
        now = random_instant()
        if i % 4 == 0:
            now = now.replace(microsecond=0)
        day = now.strftime('%Y-%m-%d')
        item_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        device = f"sql-dev-{i}"
        group = f"sql-group-{i}"
        sql(f"""
            INSERT INTO readings VALUES ('SQL_READING', {pg_time(now)}, '{item_id}', '{{"value": {i}}}');
            INSERT INTO by_device VALUES ('SQL_READING', {pg_time(now)}, '{device}', '{{"value": {i}}}');
            INSERT INTO events VALUES ('{group}', {pg_time(now)}, '{{"temp": {i}}}');""")

        # pattern 1: SENSOR_READING-style key, one of the 10 shards
        found = [client.get_item(TableName=names["random"],
                                 Key={"PK": {"S": f"SQL_READING#{day}#_{s}"},
                                      "SK": {"S": f"{now.isoformat()}#{item_id}"}}).get("Item")
                 for s in range(RANDOM_SHARDS)]
        assert sum(f is not None for f in found) == 1, (now.isoformat(), item_id)

        # pattern 2: exactly the article's shard and keys
        shard = device_writer._calculate_shard_id(device)
        item = client.get_item(TableName=names["device"],
                               Key={"PK": {"S": f"SQL_READING#{day}#_{shard}"},
                                    "SK": {"S": f"{now.isoformat()}#{device}"}}).get("Item")
        assert item is not None, (day, shard, now.isoformat(), device)

        # pattern 3: the GSI keys as write_event computes them
        items = ddb.Table(names["gsi"]).query(
            IndexName=INDEX,
            KeyConditionExpression=Key("GSI1PK").eq(f"{group}#{service._get_time_bucket(now, 'hour')}")
            & Key("GSI1SK").eq(now.isoformat()))["Items"]
        assert len(items) == 1, (group, now.isoformat())
        assert re.fullmatch(rf"{group}#_(\d+)", items[0]["PK"]) and \
            int(items[0]["PK"].rsplit("_", 1)[1]) < GSI_SHARDS, items[0]["PK"]
        assert items[0]["SK"] == now.isoformat()

    # and SQL reads them back through the buckets
    [[count]] = rows("SELECT count(*) FROM events_by_hour WHERE entity_id = 'sql-group-3' "
                     f"AND ts >= '{START.isoformat()}' AND ts < "
                     f"'{(START + datetime.timedelta(hours=HOURS)).isoformat()}'")
    assert count == "1"


if __name__ == "__main__":
    runner.main(set_up, tear_down)

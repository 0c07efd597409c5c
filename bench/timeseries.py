"""24 hours of the time-series article's events over hourly buckets:
shard_fdw against the article's readers extended to loop over the buckets.

Run by bench/timeseries.sh once DynamoDB Local, the test proxy and
PostgreSQL are up (it reads the environment test/lib.sh exports).  Every
number it prints is measured in this run.

Two tables hold the same 24 hours of events, written as the article's code
writes them:

  hourly   PK = SENSOR_READING#<hour bucket>#_<random shard of N>,
           SK = <isoformat()>#<uuid> (pattern 1 with the GSI's hour bucket)
  gsi      PK = device-group-A#_<random shard of 16>, SK = <isoformat()>,
           GSI1PK = device-group-A#<hour bucket>, GSI1SK = <isoformat()>
           (pattern 3)

and the 24 hours are read three ways, every request through the proxy with
the same added latency:

  shard_fdw   SELECT ... WHERE ts BETWEEN start AND end ORDER BY ts on a
              foreign table: a Query per hour (times N shards), up to
              max_concurrency in flight, merged in time order
  pool        hourly: the article's ShardedTimeSeriesReader (a
              ThreadPoolExecutor over the N shards) for one bucket after
              another, then a sort
  loop        gsi: the article's GSI query, one bucket after another
"""

import datetime
import os
import random
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from boto3.dynamodb.conditions import Key
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)
import topn  # noqa: E402  (boto3 resources, the psql session, bench_ms)

LATENCY_MS, RUNS, WARMUP, PER_HOUR, SHARDS = benchdata.settings(
    LATENCY_MS=10, RUNS=10, WARMUP=2, EVENTS_PER_HOUR=100, SHARDS=4)
UTC = datetime.timezone.utc
START = datetime.datetime(2023, 10, 27, 0, 0, tzinfo=UTC)
HOURS = 24
END = START + datetime.timedelta(hours=HOURS) - datetime.timedelta(microseconds=1)
GROUP = "device-group-A"
INDEX = "GSI1-Read-Aggregator"
TABLES = {"hourly": "ts_bench_hourly", "gsi": "ts_bench_gsi"}
GSI_SHARDS = 16


def say(message):
    print(f"==> {message}", flush=True)


def hour_bucket(dt_object):
    """The article's _get_time_bucket(dt, 'hour')."""
    return dt_object.strftime('%Y-%m-%dT%H:00:00Z')


def buckets():
    return [START + datetime.timedelta(hours=h) for h in range(HOURS)]


# ------------------------------------------------------------------ data


def load():
    """The same events into both tables, as the article's writers put them
    (batched here, straight to DynamoDB Local); returns their timestamps."""
    rng = random.Random(2023)
    resource = topn.dynamodb("SHARD_FDW_DIRECT_ENDPOINT")
    stamps = []
    with resource.Table(TABLES["hourly"]).batch_writer() as hourly, \
            resource.Table(TABLES["gsi"]).batch_writer() as gsi:
        for i in range(HOURS * PER_HOUR):
            now = START + datetime.timedelta(
                microseconds=rng.randrange(HOURS * 3600 * 10 ** 6))
            timestamp = now.isoformat()
            stamps.append(timestamp)
            item_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            hourly.put_item(Item={
                'PK': f"SENSOR_READING#{hour_bucket(now)}#_{rng.randint(0, SHARDS - 1)}",
                'SK': f"{timestamp}#{item_id}", 'payload': {'value': i}})
            gsi.put_item(Item={
                'PK': f"{GROUP}#_{rng.randint(0, GSI_SHARDS - 1)}", 'SK': timestamp,
                'GSI1PK': f"{GROUP}#{hour_bucket(now)}", 'GSI1SK': timestamp,
                'payload': {'value': i}})
    return sorted(stamps)


def create_tables():
    client = bed.ddb(direct=True)
    bed.create_table(client, TABLES["hourly"], "PK", "SK")
    bed.create_table(client, TABLES["gsi"], "PK", "SK", gsi=(INDEX, "GSI1PK", "GSI1SK"))


# ------------------------------------------------------------------- SQL


def setup_sql():
    """The server through the proxy, the two foreign tables, bench_ms."""
    return f"""
CREATE EXTENSION IF NOT EXISTS shard_fdw;
{bed.server_sql()}
{bed.foreign_table_sql(
    "hourly", "event_type text, ts timestamptz, item_id text, payload jsonb", TABLES["hourly"],
    partition_key="PK", partition_key_format="{event_type}#{ts:hour}#_{shard}",
    sort_key="SK", sort_key_format="{ts:isoformat}#{item_id}",
    shard_strategy="random", shards=SHARDS)}
{bed.foreign_table_sql(
    "gsi", "entity_id text, ts timestamptz, payload jsonb", TABLES["gsi"], index=INDEX,
    partition_key="GSI1PK", partition_key_format="{entity_id}#{ts:hour}",
    sort_key="GSI1SK", sort_key_format="{ts:isoformat}")}
{topn.BENCH_MS_SQL}"""


def range_query(case):
    fixed = "event_type = 'SENSOR_READING'" if case == "hourly" else f"entity_id = '{GROUP}'"
    return (f"SELECT ts, payload FROM {case} WHERE {fixed} AND ts BETWEEN "
            f"'{START.isoformat()}' AND '{END.isoformat()}' ORDER BY ts")


# ------------------------------------------------------- article's readers


class ShardedTimeSeriesReader:
    """The article's scatter-gather reader, as written (its prints aside)."""

    def __init__(self, table, shard_count=10):
        self.table = table
        self.shard_count = shard_count

    def _query_shard(self, base_pk, shard_id, start_time, end_time):
        sharded_pk = f"{base_pk}#_{shard_id}"
        response = self.table.query(
            KeyConditionExpression=Key('PK').eq(sharded_pk) & Key('SK').between(
                start_time.isoformat(),
                end_time.isoformat()
            )
        )
        return response.get('Items', [])

    def get_events_for_range(self, base_pk, start_time, end_time):
        all_items = []
        with ThreadPoolExecutor(max_workers=self.shard_count) as executor:
            futures = [
                executor.submit(self._query_shard, base_pk, i, start_time, end_time)
                for i in range(self.shard_count)
            ]
            for future in futures:
                all_items.extend(future.result())
        all_items.sort(key=lambda item: item['SK'])
        return all_items


def pool_over_buckets(resource):
    """The scatter-gather reader for each hour bucket in turn."""
    reader = ShardedTimeSeriesReader(resource.Table(TABLES["hourly"]), SHARDS)
    items = []
    for bucket in buckets():
        items.extend(reader.get_events_for_range(
            f"SENSOR_READING#{hour_bucket(bucket)}", START, END))
    items.sort(key=lambda item: item['SK'])
    return [item['SK'].split('#', 1)[0] for item in items]


def loop_over_buckets(resource):
    """The article's GSI query (get_events_for_range) for each hour bucket
    in turn."""
    table = resource.Table(TABLES["gsi"])
    items = []
    for bucket in buckets():
        response = table.query(
            IndexName=INDEX,
            KeyConditionExpression=Key('GSI1PK').eq(f"{GROUP}#{hour_bucket(bucket)}")
            & Key('GSI1SK').between(START.isoformat(), END.isoformat()))
        items.extend(response.get('Items', []))
    items.sort(key=lambda item: item['GSI1SK'])
    return [item['GSI1SK'] for item in items]


PY_READERS = {("hourly", "pool"): pool_over_buckets, ("gsi", "loop"): loop_over_buckets}
CASES = [("hourly", "shard_fdw"), ("hourly", "pool"), ("gsi", "shard_fdw"), ("gsi", "loop")]


# ---------------------------------------------------------------- checks


def sql_stamps(case):
    """The timestamps SQL reads, as isoformat() writes them."""
    rows = bed.query(
        "SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
        f"FROM ({range_query(case)}) q")
    return [datetime.datetime.fromisoformat(r[0]).replace(tzinfo=UTC).isoformat()
            for r in rows]


def check(stamps, resource):
    """Every method reads every event, in time order, with the requests
    expected: 24 x N for the hourly table, 24 for the index."""
    requests = {}
    for case, method in CASES:
        before = bed.stats()["requests_total"]
        got = (PY_READERS[(case, method)](resource) if method != "shard_fdw"
               else sql_stamps(case))
        requests[(case, method)] = bed.stats()["requests_total"] - before
        if got != stamps:
            sys.exit(f"{case} {method}: {len(got)} events read, {len(stamps)} written "
                     f"(or not in time order)")
        want = HOURS * (SHARDS if case == "hourly" else 1)
        if requests[(case, method)] != want:
            sys.exit(f"{case} {method}: {requests[(case, method)]} requests, {want} expected")
    return requests


def check_plans():
    for case in ("hourly", "gsi"):
        plan = "\n".join(r[0] for r in bed.query("EXPLAIN (COSTS OFF) " + range_query(case)))
        shards = SHARDS if case == "hourly" else 1
        want = f"Buckets: {HOURS} × {shards} shard"
        if want not in plan:
            sys.exit(f"{case}: the plan lacks '{want}':\n{plan}")


# ---------------------------------------------------------------- timing


def time_all(session, resource):
    """{case: [ms...]}: rounds of every method in shuffled order, the first
    WARMUP rounds not kept."""
    cases = list(CASES)
    times = {case: [] for case in cases}
    order = random.Random(1)
    for r in range(WARMUP + RUNS):
        order.shuffle(cases)
        for case, method in cases:
            if method == "shard_fdw":
                [ms] = session.lines(
                    f"SELECT bench_ms({topn.sql_literal(range_query(case))}, 1);", 1)
                ms = float(ms)
            else:
                started = time.perf_counter()
                PY_READERS[(case, method)](resource)
                ms = (time.perf_counter() - started) * 1000
            if r >= WARMUP:
                times[(case, method)].append(ms)
    return times


def main():
    load_before = os.getloadavg()[0]
    bed.configure(latency_ms=0)
    say(f"loading {HOURS} hours x {PER_HOUR} events into both tables "
        f"(straight to DynamoDB Local)")
    create_tables()
    stamps = load()
    bed.psql(setup_sql())
    check_plans()

    resource = topn.dynamodb("SHARD_FDW_ENDPOINT",
                             Config(retries={"total_max_attempts": 1},
                                    max_pool_connections=max(SHARDS, 10)))
    bed.configure(latency_ms=LATENCY_MS)
    say(f"proxy latency {LATENCY_MS} ms per request; checking every method's events")
    requests = check(stamps, resource)
    say(f"timing ({WARMUP} warm-up + {RUNS} rounds)")
    session = topn.Session()
    times = time_all(session, resource)
    session.close()
    bed.configure(latency_ms=0)
    medians = {case: statistics.median(ms) for case, ms in times.items()}

    print()
    print(f"{HOURS} hours of {PER_HOUR} events an hour, read over hourly buckets, the "
          f"proxy adding {LATENCY_MS} ms to each request: median ms of {RUNS} runs "
          f"(requests per read); {os.cpu_count()} CPUs, load average "
          f"{load_before:.1f} before the run")
    for case, method in CASES:
        print(f"{case:>8} {method:<10}{medians[(case, method)]:>10.1f} "
              f"({requests[(case, method)]:>3})")
    pool = medians[("hourly", "pool")] / medians[("hourly", "shard_fdw")]
    loop = medians[("gsi", "loop")] / medians[("gsi", "shard_fdw")]
    print()
    print(f"summary: 24-hour range, {LATENCY_MS} ms/request: hourly x {SHARDS} shards "
          f"shard_fdw {medians[('hourly', 'shard_fdw')]:.1f} ms, the article's thread "
          f"pool looped over the buckets {pool:.2f}x slower; GSI shard_fdw "
          f"{medians[('gsi', 'shard_fdw')]:.1f} ms, the article's GSI query looped over "
          f"the buckets {loop:.2f}x slower")


if __name__ == "__main__":
    main()

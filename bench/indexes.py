"""Three queries on a table of users with secondary indexes: the read the
planner picks, through an index, against the table's own read.

Run by bench/indexes.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The table is the one of the issue that asked for index reads: org (HASH)
and user (RANGE), BENCH_USERS items (3,000) in 20 organisations, with a
GSI on email (ALL), a KEYS_ONLY GSI on country and signup, a sparse GSI
on vip, and an LSI on seen (INCLUDE name).  Two foreign tables read it:
users, declared as a new user would (email, country, signup and seen NOT
NULL, since every user has them), and users_base, the same with
use_indexes 'false', which reads as shard_fdw did before it read indexes.
The queries:

  email        SELECT * FROM users WHERE email = 'u1234@x.test'
  country      SELECT org, "user", name, signup FROM users
                WHERE country = 'FR' ORDER BY signup DESC LIMIT 10
  seen         SELECT "user", seen, name FROM users
                WHERE org = 'o1' ORDER BY seen DESC LIMIT 5

For each, on both tables: the index read (EXPLAIN), the items DynamoDB
reads (ScannedCount, and the items got by key), the requests and read
units (EXPLAIN ANALYZE), whether the rows are the same, in the same order,
and the median time, every request through the proxy with the same added
latency.
"""

import os
import random
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)
import topn  # noqa: E402  (boto3 resources, the psql session, bench_ms)

LATENCY_MS, RUNS, WARMUP, USERS = benchdata.settings(
    LATENCY_MS=10, RUNS=20, WARMUP=3, USERS=3000)
ORGS = 20
COUNTRIES = ["FR", "DE", "US", "JP", "BR"]
TABLE = "idx_bench_users"
QUERIES = {
    "email": "SELECT * FROM {t} WHERE email = 'u1234@x.test'",
    "country": ("SELECT org, \"user\", name, signup FROM {t} "
                "WHERE country = 'FR' ORDER BY signup DESC LIMIT 10"),
    "seen": ("SELECT \"user\", seen, name FROM {t} "
             "WHERE org = 'o1' ORDER BY seen DESC LIMIT 5"),
}
TABLES = ("users", "users_base")


def say(message):
    print(f"==> {message}", flush=True)


# ------------------------------------------------------------------ data


def create_table():
    """The users' DynamoDB table and its four indexes."""
    client = bed.ddb(direct=True)
    strings = ["org", "user", "email", "country", "signup", "vip"]
    client.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "org", "KeyType": "HASH"},
                   {"AttributeName": "user", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in strings]
        + [{"AttributeName": "seen", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "byEmail",
             "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "byCountry",
             "KeySchema": [{"AttributeName": "country", "KeyType": "HASH"},
                           {"AttributeName": "signup", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "byVip",
             "KeySchema": [{"AttributeName": "vip", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[
            {"IndexName": "bySeen",
             "KeySchema": [{"AttributeName": "org", "KeyType": "HASH"},
                           {"AttributeName": "seen", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["name"]}}])


def load():
    """USERS users, straight to DynamoDB Local: every one with an email, a
    country, a signup time and a last seen time, one in ten a vip."""
    rng = random.Random(29)
    resource = topn.dynamodb("SHARD_FDW_DIRECT_ENDPOINT")
    with resource.Table(TABLE).batch_writer() as writer:
        for i in range(USERS):
            item = {"org": f"o{i % ORGS}", "user": f"u{i}", "email": f"u{i}@x.test",
                    "country": rng.choice(COUNTRIES),
                    "signup": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i:06d}",
                    "seen": rng.randrange(10 ** 9), "name": f"user {i}",
                    "plan": rng.choice(["free", "team", "enterprise"])}
            if i % 10 == 0:
                item["vip"] = "Y"
            writer.put_item(Item=item)


def setup_sql():
    """The server through the proxy, the two foreign tables, bench_ms."""
    columns = """org text, "user" text, email text NOT NULL, country text NOT NULL,
                 signup text NOT NULL, seen bigint NOT NULL, vip text, name text,
                 plan text"""
    return f"""
CREATE EXTENSION IF NOT EXISTS shard_fdw;
{bed.server_sql()}
CREATE FOREIGN TABLE users ({columns}) SERVER ddb OPTIONS (table '{TABLE}');
CREATE FOREIGN TABLE users_base ({columns}) SERVER ddb
  OPTIONS (table '{TABLE}', use_indexes 'false');
ANALYZE users;
ANALYZE users_base;
{topn.BENCH_MS_SQL}"""


# ------------------------------------------------------------ measuring


def figure(plan, name):
    """A number EXPLAIN ANALYZE printed after name, or 0."""
    found = re.search(rf"{name}: ([0-9.]+)", plan)
    return float(found[1]) if found else 0.0


def measure(name, table):
    """What one read does: its index (or the table's operation), the items
    DynamoDB reads, its requests and read units, and its rows."""
    query = QUERIES[name].format(t=table)
    plan = "\n".join(r[0] for r in bed.query(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + query))
    index = re.search(r"DynamoDB Index: (.*)", plan)
    operation = re.search(r"DynamoDB Operation: (\w+)", plan)[1]
    return {
        "read": f"{index[1]}" if index else f"table ({operation})",
        "items": int(figure(plan, "DynamoDB Items Scanned")
                     + figure(plan, "DynamoDB Items Fetched")),
        "requests": int(figure(plan, "DynamoDB Requests")),
        "units": figure(plan, "DynamoDB Consumed Capacity"),
        "rows": bed.query(query),
    }


def time_all(session):
    """{(query, table): [ms...]}: rounds of every read in shuffled order,
    the first WARMUP rounds not kept."""
    cases = [(q, t) for q in QUERIES for t in TABLES]
    times = {case: [] for case in cases}
    order = random.Random(1)
    for r in range(WARMUP + RUNS):
        order.shuffle(cases)
        for name, table in cases:
            query = topn.sql_literal(QUERIES[name].format(t=table))
            [ms] = session.lines(f"SELECT bench_ms({query}, 1);", 1)
            if r >= WARMUP:
                times[(name, table)].append(float(ms))
    return times


def main():
    load_before = os.getloadavg()[0]
    bed.configure(latency_ms=0)
    say(f"loading {USERS} users (straight to DynamoDB Local)")
    create_table()
    load()
    bed.psql(setup_sql())
    bed.configure(latency_ms=LATENCY_MS)
    say(f"proxy latency {LATENCY_MS} ms per request; measuring every read")
    figures = {(q, t): measure(q, t) for q in QUERIES for t in TABLES}
    for name in QUERIES:
        if figures[(name, "users")]["rows"] != figures[(name, "users_base")]["rows"]:
            sys.exit(f"{name}: the index read's rows are not the table's")
        if "(" not in figures[(name, "users")]["read"]:
            sys.exit(f"{name}: the planner read no index")
    say(f"timing ({WARMUP} warm-up + {RUNS} rounds)")
    session = topn.Session()
    times = time_all(session)
    session.close()
    bed.configure(latency_ms=0)

    print()
    print(f"{USERS} users, the proxy adding {LATENCY_MS} ms to each request: items "
          f"DynamoDB read, requests, read units and median ms of {RUNS} runs; "
          f"{os.cpu_count()} CPUs, load average {load_before:.1f} before the run")
    print(f"{'query':<8} {'read':<36}{'items':>7}{'requests':>10}{'units':>8}{'ms':>9}")
    for name in QUERIES:
        for table in TABLES:
            f = figures[(name, table)]
            print(f"{name:<8} {f['read']:<36}{f['items']:>7}{f['requests']:>10}"
                  f"{f['units']:>8.1f}{statistics.median(times[(name, table)]):>9.1f}")
    print()
    parts = []
    for name in QUERIES:
        index = figures[(name, "users")]
        base = figures[(name, "users_base")]
        faster = (statistics.median(times[(name, "users_base")])
                  / statistics.median(times[(name, "users")]))
        parts.append(f"{name} {base['items']} items -> {index['items']}, "
                     f"{faster:.1f}x faster")
    print(f"summary: {LATENCY_MS} ms/request, same rows: " + "; ".join(parts))


if __name__ == "__main__":
    main()

"""Loading the leaderboard hashed on player_id: shard_fdw's INSERT and COPY
against boto3.

Run by bench/insert.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

Each variant loads the same ROWS rows, row i being

  game_id   'game_' || i % 2
  player_id 'player' || i
  score     i * 7919 mod 1000000007
  achieved  2026-01-01 00:00:00 UTC + i seconds

into a fresh DynamoDB table as the leaderboard stores them: pk =
{game_id}#{shard} with shard = FNV-1a-32(player_id) mod 10, sk =
{score:020}#{player_id}, and every column its own attribute.  The variants:

  INSERT insert   INSERT INTO ft SELECT ... FROM generate_series(1, ROWS),
                  insert_mode 'insert': a conditional PutItem per row, a
                  batch of batch_size rows sent at once (max_concurrency
                  of them in flight)
  INSERT upsert   the same with insert_mode 'upsert': BatchWriteItem, 25
                  items a request
  COPY insert     psql's \\copy ft FROM a file (COPY FROM STDIN), 'insert'
  COPY upsert     the same, 'upsert': PostgreSQL 15 hands COPY's rows to
                  the extension one at a time; it gathers batch_size of
                  them and writes them like an INSERT's batch
  batch_writer    boto3's Table.batch_writer() in this process, one thread,
                  the shard computed with FNV-1a in Python (the reference)

All of them write straight to DynamoDB Local, so that what is compared is
the client.  The timed loads run in rounds, each round every variant once in
a shuffled order; each load is checked afterwards: a Select COUNT scan must
find exactly ROWS items, and a sample of them must be the items Python
computes, attribute for attribute.  Then, untimed, each variant loads a few
rows through the test proxy, which counts its write requests and the most it
had in flight at once.
"""

import datetime
import os
import random
import statistics
import subprocess
import sys
import time

import boto3
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)

ROWS, RUNS, WARMUP_ROWS, BATCH, LARGE_BATCH, PROFILE_ROWS = benchdata.settings(
    ROWS=100000, RUNS=2, WARMUP_ROWS=5000, BATCH_SIZE=400, LARGE_BATCH=1000,
    PROFILE_ROWS=5000)
SHARDS = 10
SAMPLE = 100            # items of each load compared with Python's
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def say(message):
    print(f"==> {message}", flush=True)


# ---------------------------------------------------------------- variants


class Variant:
    """One way of loading: kind 'insert', 'copy' or 'boto3'."""

    def __init__(self, kind, mode=None, batch_size=None):
        self.kind, self.mode, self.batch_size = kind, mode, batch_size
        if kind == "boto3":
            self.name = "batch_writer"
        else:
            self.name = f"{kind.upper()} {mode}"
            if kind == "insert" and batch_size != BATCH:
                self.name += f" b{batch_size}"


VARIANTS = [Variant("insert", "insert", BATCH), Variant("insert", "upsert", BATCH)]
if LARGE_BATCH:
    VARIANTS += [Variant("insert", "insert", LARGE_BATCH),
                 Variant("insert", "upsert", LARGE_BATCH)]
VARIANTS += [Variant("copy", "insert"), Variant("copy", "upsert"),
             Variant("boto3")]
REFERENCE = VARIANTS[-1]


# -------------------------------------------------------------------- data


def item(i):
    """Row i's item as the leaderboard stores it, columns as attributes."""
    game, player = f"game_{i % 2}", f"player{i}"
    score = i * 7919 % 1000000007
    shard = bed.fnv1a_32(player.encode("utf-8")) % SHARDS
    achieved = EPOCH + datetime.timedelta(seconds=i)
    return {"pk": f"{game}#{shard}", "sk": f"{score:020d}#{player}",
            "game_id": game, "player_id": player, "score": score,
            "achieved": achieved.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}


def rows_sql(rows):
    """The same rows as a query (the INSERT's source and the COPY file's)."""
    return (f"SELECT 'game_' || (i % 2), 'player' || i, "
            f"i::bigint * 7919 % 1000000007, "
            f"timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second' "
            f"FROM generate_series(1, {rows}) i")


def typed(value):
    """A Python value as a DynamoDB AttributeValue."""
    return {"N": str(value)} if isinstance(value, int) else {"S": value}


# ---------------------------------------------------------------- DynamoDB


def resource(endpoint_variable="SHARD_FDW_DIRECT_ENDPOINT"):
    """A boto3 DynamoDB resource with the SDK's default retries."""
    return boto3.session.Session().resource(
        "dynamodb", endpoint_url=bed.env(endpoint_variable),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"),
        config=Config(max_pool_connections=1))


def count_attempts(client):
    """A dict counting the client's calls and HTTP attempts from now on."""
    counts = {"requests": 0, "attempts": 0}

    def on_call(**_):
        counts["requests"] += 1

    def on_send(**_):
        counts["attempts"] += 1
    client.meta.events.register("before-call.dynamodb", on_call)
    client.meta.events.register("before-send.dynamodb", on_send)
    return counts


def boto3_load(table, first, rows):
    """The reference: the leaderboard article's writer, batch_writer in one
    thread."""
    with table.batch_writer() as writer:
        for i in range(first, first + rows):
            writer.put_item(Item=item(i))


def count_items(client, table):
    """Items in a table, by a paginated Select COUNT scan."""
    total, start = 0, None
    while True:
        args = {"TableName": table, "Select": "COUNT"}
        if start:
            args["ExclusiveStartKey"] = start
        page = client.scan(**args)
        total += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return total


def check_load(client, table, rows, label):
    """Exactly `rows` items, and a sample of them exactly Python's items."""
    found = count_items(client, table)
    if found != rows:
        sys.exit(f"{label}: {found} items in {table}, {rows} written")
    for i in random.Random(table).sample(range(1, rows + 1), min(SAMPLE, rows)):
        want = {k: typed(v) for k, v in item(i).items()}
        got = client.get_item(TableName=table, ConsistentRead=True, Key={
            "pk": want["pk"], "sk": want["sk"]}).get("Item")
        # the put token of shard_fdw's conditional PutItems (doc/writes.md)
        if got:
            got.pop("shard_fdw_put", None)
        if got != want:
            sys.exit(f"{label}: row {i} is stored as {got}, not {want}")


# ---------------------------------------------------------------------- SQL


def sql_literal(text):
    return "'" + text.replace("'", "''") + "'"


def setup_sql():
    """One server straight to DynamoDB Local, one through the proxy."""
    mapping = (f"access_key_id {sql_literal(bed.env('SHARD_FDW_ACCESS_KEY'))}, "
               f"secret_access_key {sql_literal(bed.env('SHARD_FDW_SECRET_KEY'))}")
    parts = ["CREATE EXTENSION IF NOT EXISTS shard_fdw;"]
    for server, variable in (("ddb", "SHARD_FDW_DIRECT_ENDPOINT"),
                             ("ddb_proxy", "SHARD_FDW_ENDPOINT")):
        parts += [f"CREATE SERVER {server} FOREIGN DATA WRAPPER shard_fdw "
                  f"OPTIONS (endpoint {sql_literal(bed.env(variable))});",
                  f"CREATE USER MAPPING FOR CURRENT_USER SERVER {server} "
                  f"OPTIONS ({mapping});"]
    return "\n".join(parts)


def foreign_table_sql(variant, table, server="ddb"):
    """The foreign table of one load, on its own DynamoDB table."""
    batch = f", batch_size '{variant.batch_size}'" if variant.batch_size else ""
    return f"""
DROP FOREIGN TABLE IF EXISTS ft;
CREATE FOREIGN TABLE ft (
  game_id   text   NOT NULL,
  player_id text   NOT NULL,
  score     bigint NOT NULL,
  achieved  timestamptz
) SERVER {server} OPTIONS (
  table '{table}',
  partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
  sort_key 'sk',      sort_key_format '{{score:020}}#{{player_id}}',
  shards '{SHARDS}', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32', insert_mode '{variant.mode}'{batch});"""


def load_sql(variant, rows, copy_file):
    """The statement that loads rows into ft."""
    if variant.kind == "insert":
        return f"INSERT INTO ft {rows_sql(rows)};"
    return f"\\copy ft FROM {sql_literal(copy_file)} WITH (FORMAT csv)"


def write_copy_file(path, rows):
    """The rows as CSV, exactly as PostgreSQL prints them."""
    with open(path, "w") as out:
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                        f"COPY ({rows_sql(rows)}) TO STDOUT WITH (FORMAT csv)"],
                       stdout=out, check=True)


class Session:
    """One psql session kept open: one backend for every load."""

    DONE = "__bench_done__"

    def __init__(self):
        self.proc = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        [self.pid] = self.run("SET client_min_messages = warning; "
                              "SELECT pg_backend_pid();")

    def run(self, sql):
        """Send SQL (statements or a backslash command), return its lines."""
        self.proc.stdin.write(f"{sql}\n\\echo {self.DONE}\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"psql ended during: {sql.strip()[:200]}")
            if line.rstrip("\n") == self.DONE:
                return lines
            lines.append(line.rstrip("\n"))

    def stats(self):
        """This backend's shard_fdw request counters."""
        [line] = self.run("SELECT requests || ' ' || attempts || ' ' || retries "
                          "|| ' ' || throttles FROM shard_fdw_stats();")
        return dict(zip(("requests", "attempts", "retries", "throttles"),
                        map(int, line.split())))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def cpu_s(pid):
    """User + system CPU seconds of a process, from /proc/<pid>/stat."""
    if not pid:
        return float("nan")
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks():
    """(busy, total) CPU ticks of the whole machine, from /proc/stat."""
    with open("/proc/stat") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:]]
    idle = ticks[3] + ticks[4]          # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def busy_percent(before, after):
    """The share of all CPUs busy between two machine_ticks()."""
    total = after[1] - before[1]
    return 100 * (after[0] - before[0]) / total if total else 0.0


# ------------------------------------------------------------------ loading

_tables = iter(range(1, 10 ** 6))


def load(variant, rows, session, client, copy_files, server="ddb",
         endpoint_variable="SHARD_FDW_DIRECT_ENDPOINT"):
    """Load rows into a fresh table by one variant, check it, drop it.
    Returns wall seconds, the CPU seconds of the writer (the backend, or
    this process for batch_writer) and of DynamoDB Local, the share of the
    machine's CPUs busy meanwhile, and the writer's request counters."""
    table = f"lb_{next(_tables)}"
    bed.create_table(client, table, "pk", "sk")
    ddb_pid = os.environ.get("BENCH_DDB_PID")
    if variant.kind == "boto3":
        target = resource(endpoint_variable).Table(table)
        counts = count_attempts(target.meta.client)
        cpu0, ddb0, ticks = time.process_time(), cpu_s(ddb_pid), machine_ticks()
        started = time.perf_counter()
        boto3_load(target, 1, rows)
        wall = time.perf_counter() - started
        busy = busy_percent(ticks, machine_ticks())
        cpu, ddb_cpu = time.process_time() - cpu0, cpu_s(ddb_pid) - ddb0
        counts["retries"] = counts["attempts"] - counts["requests"]
    else:
        session.run(foreign_table_sql(variant, table, server))
        statement = load_sql(variant, rows, copy_files.get(rows))
        before = session.stats()
        cpu0, ddb0, ticks = cpu_s(session.pid), cpu_s(ddb_pid), machine_ticks()
        started = time.perf_counter()
        session.run(statement)
        wall = time.perf_counter() - started
        busy = busy_percent(ticks, machine_ticks())
        cpu, ddb_cpu = cpu_s(session.pid) - cpu0, cpu_s(ddb_pid) - ddb0
        after = session.stats()
        counts = {k: after[k] - before[k] for k in after}
    check_load(client, table, rows, variant.name)
    client.delete_table(TableName=table)
    return {"wall": wall, "cpu": cpu, "ddb_cpu": ddb_cpu, "busy": busy, **counts}


def profile(session, client, copy_files):
    """Each variant through the proxy, untimed: its requests and the most
    it had in flight at once."""
    found = {}
    for variant in VARIANTS:
        bed.reset_proxy()
        load(variant, PROFILE_ROWS, session, client, copy_files,
             server="ddb_proxy", endpoint_variable="SHARD_FDW_ENDPOINT")
        stats = bed.stats()
        writes = {k: v for k, v in stats["requests"].items()
                  if k in ("PutItem", "BatchWriteItem")}
        found[variant.name] = (writes, stats["in_flight_max"])
    return found


# ------------------------------------------------------------------- report


def spread(values):
    """(max - min) / median, as a percentage."""
    return 100 * (max(values) - min(values)) / statistics.median(values)


def report(results, profiled, load_before, load_after):
    ref = REFERENCE.name
    rates = {v.name: [ROWS / r["wall"] for r in results[v.name]] for v in VARIANTS}
    median = {name: statistics.median(r) for name, r in rates.items()}
    # Ratios are taken round by round (loads of one round ran minutes apart
    # at most), then their median.
    ratios = {name: [a / b for a, b in zip(rates[name], rates[ref])]
              for name in rates}
    print()
    print(f"{ROWS} rows into the leaderboard hashed on player_id ({SHARDS} "
          f"shards), straight to DynamoDB Local; {RUNS} load(s) per variant; "
          f"{os.cpu_count()} CPUs, load average {load_before:.1f} before, {load_after:.1f} after")
    print(f"{'variant':<20}{'rows/s':>8}{'each load':>16}{'spread':>8}"
          f"{'x batch_writer':>21}{'writer CPU s':>14}{'DDB Local CPU s':>17}"
          f"{'CPUs busy':>11}{'requests':>10}{'retries':>9}")
    for v in VARIANTS:
        rs = results[v.name]
        each = " ".join(f"{x:.0f}" for x in rates[v.name])
        ratio = "" if v is REFERENCE else (
            f"{statistics.median(ratios[v.name]):.2f}x" + (
                f" ({min(ratios[v.name]):.2f}-{max(ratios[v.name]):.2f})"
                if RUNS > 1 else ""))
        print(f"{v.name:<20}{median[v.name]:>8.0f}{each:>16}"
              f"{spread(rates[v.name]):>7.0f}%{ratio:>21}"
              f"{statistics.median(r['cpu'] for r in rs):>14.1f}"
              f"{statistics.median(r['ddb_cpu'] for r in rs):>17.1f}"
              f"{statistics.median(r['busy'] for r in rs):>10.0f}%"
              f"{statistics.median(r['requests'] for r in rs):>10.0f}"
              f"{statistics.median(r['retries'] for r in rs):>9.0f}")
    print(f"(medians; INSERT batch_size {BATCH} unless bN; writer CPU: the "
          f"PostgreSQL backend for shard_fdw, this Python process for "
          f"batch_writer; CPUs busy: the whole machine's, other work included; "
          f"requests: DynamoDB calls of one load)")
    if profiled:
        print()
        print(f"through the test proxy, {PROFILE_ROWS} rows, untimed: write "
              f"requests and the most requests in flight at once")
        for v in VARIANTS:
            writes, most = profiled[v.name]
            text = ", ".join(f"{n} {k}" for k, n in sorted(writes.items()))
            print(f"{v.name:<20}{text:>28}{most:>6} in flight")
    print()
    parts = ", ".join(
        f"{v.name} {median[v.name]:.0f} "
        f"({statistics.median(ratios[v.name]):.2f}x)"
        for v in VARIANTS if v is not REFERENCE)
    noise = max(spread(r) for r in rates.values())
    print(f"summary: {ROWS} rows, rows/s (x batch_writer): {parts}; "
          f"batch_writer {median[ref]:.0f}; widest spread between loads "
          f"{noise:.0f}%")


def main():
    load_before = os.getloadavg()[0]
    client = bed.ddb(direct=True)
    bed.psql(setup_sql())
    session = Session()

    # The COPY input: the very rows the INSERTs select, printed by PostgreSQL.
    tmp = os.environ.get("BENCH_TMP") or "."
    copy_files = {}
    for rows in {ROWS, WARMUP_ROWS, PROFILE_ROWS} - {0}:
        copy_files[rows] = os.path.join(tmp, f"rows_{rows}.csv")
        write_copy_file(copy_files[rows], rows)

    # 1. Untimed warm-up loads, so that DynamoDB Local's JIT has compiled
    # its write paths and the backend has its connections.
    if WARMUP_ROWS:
        say(f"warm-up: {WARMUP_ROWS} rows by each variant")
        for variant in VARIANTS:
            load(variant, WARMUP_ROWS, session, client, copy_files)

    # 2. The timed loads, round by round, every variant once a round in a
    # shuffled order, so that whatever else the machine does weighs on all.
    results = {v.name: [] for v in VARIANTS}
    order = random.Random(1)
    for run in range(RUNS):
        variants = VARIANTS[:]
        order.shuffle(variants)
        for variant in variants:
            r = load(variant, ROWS, session, client, copy_files)
            results[variant.name].append(r)
            say(f"round {run + 1}/{RUNS}: {variant.name:<18} {r['wall']:7.1f} s "
                f"= {ROWS / r['wall']:7.0f} rows/s; {ROWS} items counted, "
                f"{min(SAMPLE, ROWS)} compared")

    # 3. Through the proxy: what each variant asks of DynamoDB.
    profiled = None
    if PROFILE_ROWS:
        say(f"counting requests through the proxy ({PROFILE_ROWS} rows each)")
        profiled = profile(session, client, copy_files)
    session.close()
    report(results, profiled, load_before, os.getloadavg()[0])


if __name__ == "__main__":
    main()

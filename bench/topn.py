"""Top-100 of a sharded leaderboard: shard_fdw against the articles' readers.

Run by bench/topn.sh once DynamoDB Local, the test proxy and PostgreSQL are
up (it reads the environment test/lib.sh exports).  Every number it prints
is measured in this run.

The leaderboard is the one hashed on player_id: pk = {game_id}#{shard}, sk =
{score:020}#{player_id}, shard = FNV-1a-32(player_id) mod N.  One game's
scores are loaded once per shard count N (BENCH_SHARDS: 1, 10, 20, 50 and
100), and its top 100 is read four ways, every request going through the proxy with the same added
latency:

  shard_fdw   SELECT ... ORDER BY score DESC LIMIT 100 on a foreign table:
              one Query(Limit=100, ScanIndexForward=false) per shard, all in
              flight at once, merged in the backend
  sequential  the same query on a server with max_concurrency 1, so the
              extension sends the same requests one after another
  shard_loop  a Python boto3 loop querying each shard in turn, then a merge
              (the ordered-sharding article's reader)
  thread_pool a Python ThreadPoolExecutor(max_workers=N) scatter-gather,
              then a sort (the time-series article's reader)
"""

import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from boto3.dynamodb.conditions import Key
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the TSV for bench/plots.sh)

GAME = "g"
SHARD_COUNTS = tuple(int(n) for n in
                     os.environ.get("BENCH_SHARDS", "1,10,20,50,100").split(","))
TOP = 100
LATENCY_MS = int(os.environ.get("BENCH_LATENCY_MS", "10"))
RUNS = int(os.environ.get("BENCH_RUNS", "20"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "3"))
SCORES = int(os.environ.get("BENCH_SCORES", "20000"))
MAX_CONCURRENCY = os.environ.get("BENCH_MAX_CONCURRENCY", "")
METHODS = ("shard_fdw", "sequential", "shard_loop", "thread_pool")
BED_RUNS = int(os.environ.get("BENCH_BED_RUNS", "100"))
TARGET = 1.3     # shard_fdw(largest N) / shard_fdw(N=1) should stay within this


def say(message):
    print(f"==> {message}", flush=True)


# ------------------------------------------------------------------ data


def shard_of(player_id, shards):
    return bed.fnv1a_32(player_id.encode("utf-8")) % shards


def table_name(shards):
    return f"topn_{shards}"


def item(player_id, score, shards, game=GAME):
    """The leaderboard's item for one score, with its columns as attributes."""
    return {"pk": f"{game}#{shard_of(player_id, shards)}",
            "sk": f"{score:020d}#{player_id}",
            "game_id": game, "player_id": player_id, "score": score}


def make_scores():
    """(player_id, score) pairs; scores are distinct so the top 100 is one list."""
    rng = random.Random(2027)
    scores = rng.sample(range(10 ** 12), SCORES)
    return [(f"player{i:06d}", s) for i, s in enumerate(scores)]


def dynamodb(endpoint_variable, config=None):
    """A boto3 DynamoDB resource in a session of its own (sessions are not
    shared between threads), signed with the test bed's credentials."""
    return boto3.session.Session().resource(
        "dynamodb", endpoint_url=bed.env(endpoint_variable),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"), config=config)


def load(shards, scores):
    """Batch-write every score straight to DynamoDB Local."""
    resource = dynamodb("SHARD_FDW_DIRECT_ENDPOINT")
    with resource.Table(table_name(shards)).batch_writer() as writer:
        for player_id, score in scores:
            writer.put_item(Item=item(player_id, score, shards))


def warm_up_dynamodb_local(rounds=10):
    """Query every shard straight, a few hundred times in all, so that
    DynamoDB Local's JIT has compiled its Query path before any timing."""
    resource = dynamodb("SHARD_FDW_DIRECT_ENDPOINT")
    for _ in range(rounds):
        for shards in SHARD_COUNTS:
            shard_loop_reader(resource.Table(table_name(shards)), shards)


# ------------------------------------------------------------------- SQL


def sql_literal(text):
    return "'" + text.replace("'", "''") + "'"


def foreign_table(name, server, shards, table=None):
    """The CREATE FOREIGN TABLE of the leaderboard as name on server, with
    that many calculated shards, over the DynamoDB table named table (by
    default table_name(shards))."""
    return f"""
CREATE FOREIGN TABLE {name} (
  game_id   text   NOT NULL,
  player_id text   NOT NULL,
  score     bigint NOT NULL
) SERVER {server} OPTIONS (
  table '{table or table_name(shards)}',
  partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
  sort_key 'sk',      sort_key_format '{{score:020}}#{{player_id}}',
  shards '{shards}', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32');"""


def fdw_table(method, shards):
    return f"lb_{shards}" + ("_seq" if method == "sequential" else "")


def top_query(table):
    return (f"SELECT player_id, score FROM {table} WHERE game_id = '{GAME}' "
            f"ORDER BY score DESC LIMIT {TOP}")


# bench_ms runs a query `runs` times and returns each run's wall-clock
# milliseconds as measured in the server: planning and execution, all rows
# fetched, no psql start-up and no client round trip.
BENCH_MS_SQL = """
CREATE FUNCTION bench_ms(query text, runs int) RETURNS SETOF float8
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz;
BEGIN
  FOR r IN 1 .. runs LOOP
    t0 := clock_timestamp();
    EXECUTE query;
    RETURN NEXT extract(epoch FROM clock_timestamp() - t0) * 1000;
  END LOOP;
END $$;"""


def setup_sql():
    """Two servers through the proxy: the default one, and max_concurrency 1."""
    endpoint = sql_literal(bed.env("SHARD_FDW_ENDPOINT"))
    mapping = (f"access_key_id {sql_literal(bed.env('SHARD_FDW_ACCESS_KEY'))}, "
               f"secret_access_key {sql_literal(bed.env('SHARD_FDW_SECRET_KEY'))}")
    ours = f", max_concurrency '{MAX_CONCURRENCY}'" if MAX_CONCURRENCY else ""
    parts = [
        "CREATE EXTENSION IF NOT EXISTS shard_fdw;",
        f"CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw "
        f"OPTIONS (endpoint {endpoint}{ours});",
        f"CREATE SERVER ddb_seq FOREIGN DATA WRAPPER shard_fdw "
        f"OPTIONS (endpoint {endpoint}, max_concurrency '1');",
        f"CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({mapping});",
        f"CREATE USER MAPPING FOR CURRENT_USER SERVER ddb_seq OPTIONS ({mapping});",
    ]
    for shards in SHARD_COUNTS:
        parts.append(foreign_table(fdw_table("shard_fdw", shards), "ddb", shards))
        parts.append(foreign_table(fdw_table("sequential", shards), "ddb_seq",
                                   shards))
    parts.append(BENCH_MS_SQL)
    return "\n".join(parts)


def check_formats(scores):
    """Make sure Python's items and the extension's templates and hash agree."""
    # Every loaded score reads back through the extension.
    for shards in SHARD_COUNTS:
        [[count]] = bed.query(f"SELECT count(*) FROM lb_{shards} "
                              f"WHERE game_id = '{GAME}'")
        if int(count) != len(scores):
            sys.exit(f"lb_{shards}: {count} rows read back, {len(scores)} loaded")
    sample = random.Random(7).sample(scores, 5)
    client = bed.ddb(direct=True)
    for shards in SHARD_COUNTS:
        for player_id, score in sample:
            # With player_id fixed the extension reads only the shard its own
            # FNV-1a picks: the row is found only if the hashes agree.
            rows = bed.query(f"SELECT score FROM lb_{shards} WHERE game_id = "
                             f"'{GAME}' AND player_id = {sql_literal(player_id)}")
            if rows != [[str(score)]]:
                sys.exit(f"lb_{shards}: {player_id} reads back as {rows}, "
                         f"not {score}")
        # A row written by the extension lands on the item Python computes.
        player_id, score = "format-check", 4200
        bed.psql(f"INSERT INTO lb_{shards} VALUES ('fmt', "
                 f"{sql_literal(player_id)}, {score})")
        expected = item(player_id, score, shards, game="fmt")
        key = {"pk": {"S": expected["pk"]}, "sk": {"S": expected["sk"]}}
        found = client.get_item(TableName=table_name(shards), Key=key)
        if "Item" not in found:
            sys.exit(f"lb_{shards}: the extension did not write {key}")
        client.delete_item(TableName=table_name(shards), Key=key)


def check_plans():
    """The timed queries must be pushed down: N Queries, merged, each with a Limit."""
    for method in ("shard_fdw", "sequential"):
        for shards in SHARD_COUNTS:
            plan = "\n".join(r[0] for r in bed.query(
                "EXPLAIN (VERBOSE, COSTS OFF) "
                + top_query(fdw_table(method, shards))))
            for line in ("DynamoDB Operation: Query", f"Shards: {shards}",
                         "Merge: sk DESC", "Limit per Shard: "):
                if line not in plan:
                    sys.exit(f"{fdw_table(method, shards)}: the plan lacks "
                             f"'{line}':\n{plan}")


# ------------------------------------------------------- article's readers


def proxy_table(resource, shards):
    return resource.Table(table_name(shards))


def query_shard(table, shard):
    """One shard's top 100, as the leaderboard article asks for it."""
    return table.query(
        KeyConditionExpression=Key("pk").eq(f"{GAME}#{shard}"),
        ScanIndexForward=False, Limit=TOP)["Items"]


def shard_loop_reader(table, shards):
    """The ordered-sharding article's loop: query each shard in turn, then
    merge."""
    items = []
    for shard in range(shards):
        items.extend(query_shard(table, shard))
    items.sort(key=lambda i: i["sk"], reverse=True)
    return items[:TOP]


def thread_pool_reader(table, shards):
    """The time-series article's thread pool: one thread per shard, gather
    the futures, then sort."""
    items = []
    with ThreadPoolExecutor(max_workers=shards) as executor:
        futures = [executor.submit(query_shard, table, shard)
                   for shard in range(shards)]
        for future in futures:
            items.extend(future.result())
    items.sort(key=lambda i: i["sk"], reverse=True)
    return items[:TOP]


PY_READERS = {"shard_loop": shard_loop_reader, "thread_pool": thread_pool_reader}


def proxy_resource():
    """boto3 through the proxy, its connection pool as large as the largest N
    so that no reader waits for a connection; no SDK retries."""
    return dynamodb("SHARD_FDW_ENDPOINT",
                    Config(retries={"total_max_attempts": 1},
                           max_pool_connections=max(SHARD_COUNTS)))


# ----------------------------------------------------------------- timing


class Session:
    """One psql session kept open: one backend whose connections to the
    proxy stay warm between runs, as an application's would."""

    def __init__(self):
        self.proc = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def lines(self, sql, count):
        """Send one statement, read the count lines it prints."""
        self.proc.stdin.write(sql + "\n")
        self.proc.stdin.flush()
        lines = [self.proc.stdout.readline() for _ in range(count)]
        if not all(lines):
            sys.exit(f"psql ended during: {sql}")
        return [line.rstrip("\n") for line in lines]

    def times(self, method, shards, runs):
        query = sql_literal(top_query(fdw_table(method, shards)))
        return [float(ms) for ms in self.lines(
            f"SELECT bench_ms({query}, {runs});", runs)]

    def cpu_s(self):
        """The backend's own CPU seconds so far."""
        [stat] = self.lines("SELECT rtrim(pg_read_file('/proc/self/stat'), "
                            "E'\\n');", 1)
        return process_cpu_s(stat)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def time_all(session, resource):
    """{(method, N): [ms...]}.  Each round runs every method for every N
    once, in a shuffled order, so that whatever else the machine does
    weighs on all of them alike; the first WARMUP rounds are not kept.
    The extension is timed in the server (bench_ms), the Python readers
    around their call."""
    cases = [(m, n) for n in SHARD_COUNTS for m in METHODS]
    times = {case: [] for case in cases}
    order = random.Random(1)
    for r in range(WARMUP + RUNS):
        order.shuffle(cases)
        for method, shards in cases:
            if method in PY_READERS:
                table = proxy_table(resource, shards)
                started = time.perf_counter()
                PY_READERS[method](table, shards)
                ms = (time.perf_counter() - started) * 1000
            else:
                [ms] = session.times(method, shards, 1)
            if r >= WARMUP:
                times[(method, shards)].append(ms)
    return times


def process_cpu_s(stat_line):
    """User + system CPU seconds from a /proc/<pid>/stat line."""
    fields = stat_line.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pid_cpu_s(pid):
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as stat:
        return process_cpu_s(stat.read())


def bed_cost(session, shards):
    """shard_fdw's top 100 with no added latency: the median ms, and the CPU
    ms one read costs the backend, the proxy and DynamoDB Local, i.e. what
    the test bed itself adds on this machine's CPUs."""
    pids = [os.environ.get("BENCH_PROXY_PID"), os.environ.get("BENCH_DDB_PID")]
    session.times("shard_fdw", shards, WARMUP)
    before = [session.cpu_s()] + [pid_cpu_s(p) for p in pids]
    ms = session.times("shard_fdw", shards, BED_RUNS)
    after = [session.cpu_s()] + [pid_cpu_s(p) for p in pids]
    return statistics.median(ms), [
        None if b is None else (a - b) * 1000 / BED_RUNS
        for b, a in zip(before, after)]


def requests_per_read(resource):
    """Requests the proxy sees for one top-100 read by each method."""
    counts = {}
    for shards in SHARD_COUNTS:
        for method in METHODS:
            before = bed.stats()["requests_total"]
            if method in PY_READERS:
                PY_READERS[method](proxy_table(resource, shards), shards)
            else:
                bed.query(top_query(fdw_table(method, shards)))
            counts[(method, shards)] = bed.stats()["requests_total"] - before
    return counts


def check_results(scores, resource):
    """Every method returns the same top 100: the loaded scores' own."""
    expected = sorted(scores, key=lambda s: s[1], reverse=True)[:TOP]
    for shards in SHARD_COUNTS:
        for method in METHODS:
            if method in PY_READERS:
                got = [(i["player_id"], int(i["score"])) for i in
                       PY_READERS[method](proxy_table(resource, shards), shards)]
            else:
                got = [(p, int(s)) for p, s in
                       bed.query(top_query(fdw_table(method, shards)))]
            if got != expected:
                sys.exit(f"{method} N={shards}: its top {TOP} differs from the "
                         f"loaded scores' (first rows {got[:3]} vs {expected[:3]})")


# ----------------------------------------------------------------- report


def report(medians, requests, costs, load_before):
    methods = "".join(f"{m:>17}" for m in METHODS)
    print()
    print(f"top {TOP} of {SCORES} scores, the proxy adding {LATENCY_MS} ms to "
          f"each request: median ms of {RUNS} runs (requests per read)")
    print(f"{'N':>4}{methods}")
    for n in SHARD_COUNTS:
        print(f"{n:>4}" + "".join(f"{medians[(m, n)]:>11.1f} ({requests[(m, n)]:>3})"
                                  for m in METHODS))
    print()
    ratios = [("shard_fdw(N) / shard_fdw(N=1)", "shard_fdw", 1)] + [
        (f"{m}(N) / shard_fdw(N)", m, None) for m in METHODS[1:]]
    print(f"{'ratio':<32}" + "".join(f"{f'N={n}':>9}" for n in SHARD_COUNTS[1:]))
    for label, method, base in ratios:
        print(f"{label:<32}" + "".join(
            f"{medians[(method, n)] / medians[('shard_fdw', base or n)]:>8.2f}x"
            for n in SHARD_COUNTS[1:]))
    print()
    print(f"the test bed's own cost: shard_fdw with no added latency, median ms "
          f"of {BED_RUNS} runs, and CPU ms per read; {os.cpu_count()} CPUs, "
          f"load average {load_before:.1f} before the run")
    print(f"{'N':>4}{'median':>9}{'backend':>10}{'proxy':>9}{'DynamoDB Local':>16}"
          f"{'backend us/request':>20}{'backend us/row':>16}")
    for n in SHARD_COUNTS:
        ms, cpu = costs[n]
        print(f"{n:>4}{ms:>9.1f}" + "".join(
            f"{'-' if c is None else f'{c:.2f}':>{w}}"
            for c, w in zip(cpu, (10, 9, 16))) +
            f"{cpu[0] * 1000 / requests[('shard_fdw', n)]:>20.1f}"
            f"{cpu[0] * 1000 / min(TOP * n, SCORES):>16.2f}")
    print()
    top = SHARD_COUNTS[-1]
    scale = medians[("shard_fdw", top)] / medians[("shard_fdw", 1)]
    verdict = "met" if scale <= TARGET else "missed"
    others = ", ".join(
        f"{m} {medians[(m, top)] / medians[('shard_fdw', top)]:.2f}x"
        for m in METHODS[1:])
    print(f"summary: shard_fdw top-{TOP} at {LATENCY_MS} ms/request: N=1 "
          f"{medians[('shard_fdw', 1)]:.1f} ms, N={top} "
          f"{medians[('shard_fdw', top)]:.1f} ms = {scale:.2f}x N=1 (target "
          f"{TARGET}x {verdict}); backend CPU per read at N={top} "
          f"{costs[top][1][0]:.2f} ms; time relative to shard_fdw at N={top}: "
          f"{others}")


def write_data(medians, requests, costs, load_before):
    """topn.tsv for bench/plots.sh: per N, each method's median ms and
    requests per read, then the no-latency median and CPU ms per read of
    the backend, the proxy and DynamoDB Local (NaN where unknown)."""
    columns = (["shards"] + [f"{m}_ms" for m in METHODS]
               + [f"{m}_requests" for m in METHODS]
               + ["no_latency_ms", "backend_cpu_ms", "proxy_cpu_ms", "ddb_cpu_ms"])
    rows = [[n] + [medians[(m, n)] for m in METHODS]
            + [requests[(m, n)] for m in METHODS]
            + [costs[n][0]] + costs[n][1] for n in SHARD_COUNTS]
    benchdata.write("topn", columns, rows, {
        "bench": f"top {TOP} of {SCORES} scores over N shards (bench/topn.py)",
        "latency added per request": f"{LATENCY_MS} ms",
        "runs": f"median of {RUNS} runs after {WARMUP} warm-up rounds; "
                f"CPU over {BED_RUNS} runs with no added latency",
        "max_concurrency": MAX_CONCURRENCY or "the default",
        "load average before": f"{load_before:.1f}"})


def main():
    load_before = os.getloadavg()[0]     # what else runs here weighs on every number

    # 1. The same scores in three tables, sharded N = 1, 10, 20, written
    # straight to DynamoDB Local; then the extension's view of them is
    # checked: every row, the shard its hash picks, the plans it makes.
    scores = make_scores()
    say(f"loading {SCORES} scores into tables sharded N = "
        f"{', '.join(map(str, SHARD_COUNTS))} (straight to DynamoDB Local)")
    bed.configure(latency_ms=0)
    client = bed.ddb(direct=True)
    for shards in SHARD_COUNTS:
        bed.create_table(client, table_name(shards), "pk", "sk")
    with ThreadPoolExecutor(max_workers=len(SHARD_COUNTS)) as executor:
        for done in [executor.submit(load, n, scores) for n in SHARD_COUNTS]:
            done.result()
    warm_up_dynamodb_local()
    bed.psql(setup_sql())
    say("checking that the extension reads and writes the same items")
    check_formats(scores)
    check_plans()

    # 2. Latency on: every method must return the loaded top 100, with one
    # request per shard; then the medians, all methods and N interleaved.
    resource = proxy_resource()
    bed.configure(latency_ms=LATENCY_MS)
    say(f"proxy latency {LATENCY_MS} ms per request; checking every "
        f"method's top {TOP}")
    check_results(scores, resource)
    requests = requests_per_read(resource)
    say(f"timing every method for every N ({WARMUP} warm-up + {RUNS} rounds)")
    session = Session()
    times = time_all(session, resource)
    medians = {case: statistics.median(ms) for case, ms in times.items()}

    # 3. Latency off: what the backend, the proxy and DynamoDB Local spend
    # of this machine's CPUs on one read, the floor under step 2's numbers.
    bed.configure(latency_ms=0)
    say(f"timing shard_fdw with no added latency ({BED_RUNS} runs each)")
    costs = {n: bed_cost(session, n) for n in SHARD_COUNTS}
    session.close()
    report(medians, requests, costs, load_before)
    write_data(medians, requests, costs, load_before)


if __name__ == "__main__":
    main()

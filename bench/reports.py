"""Reports over a sharded leaderboard: what shard_fdw reads, and how fast.

Run by bench/reports.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The leaderboard is seed 002's: pk = {game_id}#{shard}, sk =
{score:020}#{player_id}, shard = FNV-1a-32(player_id) mod 10.  Game "g" has
PLAYERS players whose scores tie in threes or so; game "h", a tenth as many,
is there so that every read must be keyed.  The items are written straight
to DynamoDB Local; every timed read goes through the proxy, which adds
LATENCY_MS to each request.

Each section is a function registered in SECTIONS; it measures, checks its
answers against the loaded data and prints its own table and ratios.  The
extension is timed in the server (EXPLAIN ANALYZE's planning and execution
time, in one psql session kept open), the Python readers around their call.
"""

import json
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)

LATENCY_MS = int(os.environ.get("BENCH_LATENCY_MS", "5"))
PLAYERS = int(os.environ.get("BENCH_PLAYERS", "3000"))
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
SHARDS = 10
TABLE = "reports_lb"
GAME = "g"
TOP = 100
SECTIONS = {}


def say(message):
    print(f"==> {message}", flush=True)


def section(name):
    """Register a section: a function of the Bench, run in order."""
    def register(function):
        SECTIONS[name] = function
        return function
    return register


# ------------------------------------------------------------------ data


def make_scores():
    """{game: [(player_id, score)]}: scores tie in threes or so."""
    rng = random.Random(2028)
    return {game: [(f"player{i:06d}", rng.randint(0, count // 3))
                   for i in range(count)]
            for game, count in ((GAME, PLAYERS), ("h", max(PLAYERS // 10, 1)))}


def item(game, player_id, score):
    """The item seed 002 stores for one score."""
    shard = bed.fnv1a_32(player_id.encode("utf-8")) % SHARDS
    return {"pk": f"{game}#{shard}", "sk": f"{score:020d}#{player_id}",
            "game_id": game, "player_id": player_id, "score": score}


def resource(endpoint_variable):
    """A boto3 DynamoDB resource signed with the test bed's credentials; its
    connection pool holds a connection per shard, and it does not retry."""
    return boto3.session.Session().resource(
        "dynamodb", endpoint_url=bed.env(endpoint_variable),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"),
        config=Config(retries={"total_max_attempts": 1},
                      max_pool_connections=SHARDS))


def load(scores):
    """The DynamoDB table, its items, the server and the foreign table."""
    bed.create_table(bed.ddb(direct=True), TABLE, "pk", "sk")
    with resource("SHARD_FDW_DIRECT_ENDPOINT").Table(TABLE).batch_writer() as writer:
        for game, players in scores.items():
            for player_id, score in players:
                writer.put_item(Item=item(game, player_id, score))
    bed.psql(f"""
CREATE EXTENSION IF NOT EXISTS shard_fdw;
CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
  OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb
  OPTIONS (access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
           secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}');
CREATE FOREIGN TABLE lb (
  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL
) SERVER ddb OPTIONS (
  table '{TABLE}',
  partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
  sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
  shards '{SHARDS}', shard_strategy 'calculated', shard_by 'player_id',
  shard_hash 'fnv1a_32');""")


# --------------------------------------------------------------- running


class Session:
    """One psql process kept open, so that its backend keeps its
    connections from one statement to the next, as an application's
    would.  Each statement's rows come back up to a marker line."""

    MARKER = "@@statement done"

    def __init__(self):
        self.process = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def rows(self, statement):
        """The lines statement prints."""
        self.process.stdin.write(f"{statement};\n\\echo {self.MARKER}\n")
        self.process.stdin.flush()
        lines = []
        for line in self.process.stdout:
            if line.rstrip("\n") == self.MARKER:
                return lines
            lines.append(line.rstrip("\n"))
        sys.exit(f"psql ended during: {statement}")

    def explain(self, query):
        """(milliseconds, {counter: total over the plan's nodes}, top node)
        of one run of query under EXPLAIN ANALYZE."""
        [result] = json.loads("\n".join(self.rows(
            "EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, BUFFERS OFF) " + query)))
        totals = {}

        def walk(node):
            for key, value in node.items():
                if key.startswith("DynamoDB") and isinstance(value, (int, float)):
                    totals[key] = totals.get(key, 0) + value
            for child in node.get("Plans", []):
                walk(child)
        walk(result["Plan"])
        return (result["Planning Time"] + result["Execution Time"], totals,
                result["Plan"])

    def close(self):
        self.process.stdin.close()
        self.process.wait()


class Bench:
    """What every section uses: the loaded scores, the psql session and a
    boto3 resource through the proxy."""

    def __init__(self, scores):
        self.scores = scores
        self.session = Session()
        self.table = resource("SHARD_FDW_ENDPOINT").Table(TABLE)

    def fdw(self, query):
        """Median ms of RUNS runs of query, DynamoDB's figures for one run,
        the plan's node types, and the rows."""
        runs = [self.session.explain(query) for _ in range(RUNS)]
        ms, totals, plan = runs[-1]
        nodes = []
        while plan is not None:
            nodes.append(plan["Node Type"])
            plan = (plan.get("Plans") or [None])[0]
        return (statistics.median(r[0] for r in runs), totals, " > ".join(nodes),
                self.session.rows(query))

    def python(self, reader, *args):
        """Median ms of RUNS calls of reader, the proxy's requests for one
        call, and its answer."""
        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            answer = reader(self.table, *args)
            times.append((time.perf_counter() - started) * 1000)
        before = bed.stats()["requests_total"]
        answer = reader(self.table, *args)
        return statistics.median(times), bed.stats()["requests_total"] - before, answer


# ------------------------------------------------------- section: count


def count_shard(table, shard, low):
    """Items of one shard of the game (with sort keys from low), by Query
    with Select COUNT, page after page."""
    condition = "pk = :pk" + (" AND sk >= :low" if low else "")
    values = {":pk": f"{GAME}#{shard}"}
    if low:
        values[":low"] = low
    arguments = {"KeyConditionExpression": condition, "Select": "COUNT",
                 "ExpressionAttributeValues": values}
    count = 0
    while True:
        page = table.query(**arguments)
        count += page["Count"]
        if "LastEvaluatedKey" not in page:
            return count
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def boto3_count(table, low=None):
    """boto3's Select COUNT reader: every shard on a thread pool, summed."""
    with ThreadPoolExecutor(max_workers=SHARDS) as pool:
        return sum(pool.map(lambda shard: count_shard(table, shard, low), range(SHARDS)))


@section("count")
def count_and_rank(bench):
    """count(*) of the game and the rank of its median player."""
    players = bench.scores[GAME]
    median_score = sorted(s for _, s in players)[len(players) // 2]
    where = f"game_id = '{GAME}'"
    rank_where = f"{where} AND score > {median_score}"
    expected = {"count": len(players),
                "rank": 1 + sum(1 for _, s in players if s > median_score)}
    cases = {
        "count": (f"SELECT count(*) FROM lb WHERE {where}",
                  f"SELECT count(*) FROM (SELECT 1 FROM lb WHERE {where} OFFSET 0) s",
                  lambda: bench.python(boto3_count)),
        "rank": (f"SELECT count(*) + 1 FROM lb WHERE {rank_where}",
                 f"SELECT count(*) + 1 FROM (SELECT 1 FROM lb WHERE {rank_where} OFFSET 0) s",
                 lambda: bench.python(lambda t: 1 + boto3_count(t, f"{median_score + 1:020d}"))),
    }
    say(f"count and rank ({RUNS} runs each)")
    lines = []
    for name, (pushed, read_all, python) in cases.items():
        ms, totals, nodes, rows = bench.fdw(pushed)
        all_ms, all_totals, _, all_rows = bench.fdw(read_all)
        py_ms, py_requests, answer = python()
        for method, got in (("shard_fdw", rows), ("read every item", all_rows),
                            ("boto3", [str(answer)])):
            if got != [str(expected[name])]:
                sys.exit(f"{name} by {method}: {got}, not {expected[name]}")
        if "Select" not in json.dumps(nodes) and nodes != "Foreign Scan":
            sys.exit(f"{name}: not pushed down ({nodes})")
        lines.append((name, ms, totals, all_ms, all_totals, py_ms, py_requests))
    print()
    print(f"count(*) of {PLAYERS} players over {SHARDS} shards and the rank of the "
          f"median score, {LATENCY_MS} ms per request: median ms of {RUNS} runs "
          f"(requests, items returned)")
    print(f"{'':<8}{'shard_fdw':>24}{'read every item':>24}{'boto3 Select COUNT':>24}")
    for name, ms, t, all_ms, all_t, py_ms, py_requests in lines:
        print(f"{name:<8}"
              f"{ms:>10.1f} ({t['DynamoDB Requests']:>3}, {t['DynamoDB Items Returned']:>5})"
              f"{all_ms:>10.1f} ({all_t['DynamoDB Requests']:>3}, "
              f"{all_t['DynamoDB Items Returned']:>5})"
              f"{py_ms:>10.1f} ({py_requests:>3},     0)")
    print()
    for name, ms, _, all_ms, _, py_ms, _ in lines:
        print(f"summary: {name}: shard_fdw {ms:.1f} ms = {ms / py_ms:.2f}x boto3's Select "
              f"COUNT reader ({py_ms:.1f} ms); reading every item {all_ms / ms:.2f}x "
              f"slower ({all_ms:.1f} ms)")


# -------------------------------------------------------- section: topn


@section("topn")
def top_with_tiebreak(bench):
    """Items DynamoDB reads for the game's top 100 with a tie-breaker."""
    players = bench.scores[GAME]
    expected = [f"{p}|{s}" for p, s in sorted(players, key=lambda r: (r[1], r[0]),
                                               reverse=True)[:TOP]]
    select = f"SELECT player_id, score FROM lb WHERE game_id = '{GAME}' ORDER BY"
    cases = [
        ("both keys pushed down", f"score DESC, player_id DESC", expected),
        ('both keys, "C"', f'score DESC, player_id COLLATE "C" DESC', expected),
        ('tie-breaker "en-x-icu"', f'score DESC, player_id COLLATE "en-x-icu" DESC', None),
        ("nothing claimed", "score::numeric DESC, player_id DESC", expected),
    ]
    say(f"top {TOP} with a tie-breaker ({RUNS} runs each)")
    results = []
    for label, order, want in cases:
        ms, totals, nodes, rows = bench.fdw(f"{select} {order} LIMIT {TOP}")
        if want is None:
            # PostgreSQL's own sort of every item is the expectation
            want = bench.session.rows(f"{select} score::numeric DESC, "
                                      f'player_id COLLATE "en-x-icu" DESC LIMIT {TOP}')
        if rows != want:
            sys.exit(f"{label}: the top {TOP} differs (first rows {rows[:3]} vs {want[:3]})")
        results.append((label, ms, totals, nodes))
    print()
    print(f"top {TOP} of {PLAYERS} players over {SHARDS} shards with a tie-breaker, "
          f"{LATENCY_MS} ms per request: median ms of {RUNS} runs, DynamoDB's items "
          f"and requests per query, the plan")
    print(f"{'':<24}{'ms':>8}{'scanned':>9}{'returned':>10}{'requests':>10}  plan")
    for label, ms, t, nodes in results:
        print(f"{label:<24}{ms:>8.1f}{t['DynamoDB Items Scanned']:>9}"
              f"{t['DynamoDB Items Returned']:>10}{t['DynamoDB Requests']:>10}  {nodes}")
    print()
    _, all_ms, all_t, _ = results[-1]
    for label, ms, t, _ in results[:-1]:
        print(f"summary: top-{TOP} {label}: {t['DynamoDB Items Scanned']} items read, "
              f"{all_t['DynamoDB Items Scanned'] / t['DynamoDB Items Scanned']:.1f}x fewer "
              f"than every item ({all_t['DynamoDB Items Scanned']}), "
              f"{all_ms / ms:.2f}x faster")


# ------------------------------------------------------------------ main


def main():
    wanted = [s for s in os.environ.get("BENCH_SECTIONS", ",".join(SECTIONS)).split(",") if s]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        sys.exit(f"unknown sections {unknown}; there are {list(SECTIONS)}")
    scores = make_scores()
    say(f"loading {sum(map(len, scores.values()))} scores (straight to DynamoDB Local)")
    bed.configure(latency_ms=0)
    load(scores)
    bed.configure(latency_ms=LATENCY_MS)
    say(f"proxy latency {LATENCY_MS} ms per request")
    bench = Bench(scores)
    for name in wanted:
        SECTIONS[name](bench)
    bench.session.close()


if __name__ == "__main__":
    main()

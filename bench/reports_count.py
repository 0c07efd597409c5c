"""Reports over a sharded leaderboard: what shard_fdw reads, and how fast.

Run by bench/reports.sh (its count, topn, lookup and units sections) once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The leaderboard is the one hashed on player_id: pk = {game_id}#{shard}, sk =
{score:020}#{player_id}, shard = FNV-1a-32(player_id) mod 10.  Game "g" has
PLAYERS players whose scores tie in threes or so; game "h", a tenth as many,
is there so that every read must be keyed.  The items are written straight
to DynamoDB Local; every timed read goes through the proxy, which adds
LATENCY_MS to each request.

Each section is a function registered in SECTIONS; it measures, checks its
answers against the loaded data and prints its own table and ratios, and
returns what shard_fdw's queries read, as rows of reports_items.tsv (see
bench/benchdata.py).  The extension is timed in the server (EXPLAIN
ANALYZE's planning and execution time, in one psql session kept open), the
Python readers around their call; after WARMUP untimed rounds, each of RUNS
rounds runs every case of a section once, in a shuffled order, so that
whatever else the machine does weighs on all of them alike.
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
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)
import topn  # noqa: E402  (the leaderboard's items and foreign table)

LATENCY_MS, PLAYERS, RUNS, WARMUP = benchdata.settings(
    LATENCY_MS=5, PLAYERS=3000, RUNS=15, WARMUP=3)
SHARDS = 10
TABLE = "reports_lb"
GAME = "g"
TOP = 100
SECTIONS = {}


def say(message):
    print(f"==> {message}", flush=True)


ITEM_COLUMNS = ("query", "requests", "items_scanned", "items_returned", "ms")


def section(name):
    """Register a section: a function of the Bench, run in order, returning
    rows of ITEM_COLUMNS."""
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
                writer.put_item(Item=topn.item(player_id, score, SHARDS, game=game))
    bed.psql(f"""
CREATE EXTENSION IF NOT EXISTS shard_fdw;
{bed.server_sql()}
{topn.foreign_table("lb", "ddb", SHARDS, TABLE)}""")


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
            """Add up the counters of node, of its aggregates' reads (a
            list under "DynamoDB Aggregates") and of the nodes below."""
            for key, value in node.items():
                if key.startswith("DynamoDB") and isinstance(value, (int, float)):
                    totals[key] = totals.get(key, 0) + value
            for child in node.get("DynamoDB Aggregates", []) + node.get("Plans", []):
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
        """A case running query: (ms, (DynamoDB's figures, the plan's nodes))."""
        def run():
            ms, totals, plan = self.session.explain(query)
            nodes = []
            while plan is not None:
                nodes.append(plan["Node Type"])
                plan = (plan.get("Plans") or [None])[0]
            return ms, (totals, " > ".join(nodes))
        return run

    def python(self, reader, *args):
        """A case calling reader: (ms, its answer)."""
        def run():
            started = time.perf_counter()
            answer = reader(self.table, *args)
            return (time.perf_counter() - started) * 1000, answer
        return run

    def requests(self, reader, *args):
        """The requests the proxy sees for one call of reader."""
        before = bed.stats()["requests_total"]
        reader(self.table, *args)
        return bed.stats()["requests_total"] - before

    @staticmethod
    def traffic(case):
        """The requests the proxy sees for one run of case (bench.fdw() or
        bench.python()), and the bytes of their answers."""
        before = bed.stats()
        case()
        after = bed.stats()
        return (after["requests_total"] - before["requests_total"],
                sum(after["answer_bytes"].values()) - sum(before["answer_bytes"].values()))


def measure(cases):
    """{name: (median ms, what its last run gave)} of cases ({name: a
    function returning (ms, what it gave)}): WARMUP rounds untimed, then
    RUNS rounds, every case once a round in a shuffled order."""
    names = list(cases)
    times = {name: [] for name in names}
    last = {}
    order = random.Random(1)
    for r in range(WARMUP + RUNS):
        order.shuffle(names)
        for name in names:
            ms, gave = cases[name]()
            if r >= WARMUP:
                times[name].append(ms)
                last[name] = gave
    return {name: (statistics.median(times[name]), last[name]) for name in cases}


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


def boto3_rank(table, low):
    """A rank: 1 + the count of sort keys from low (the next score's)."""
    return 1 + boto3_count(table, low)


def median_score(players):
    """The median of the players' scores."""
    return sorted(s for _, s in players)[len(players) // 2]


def count_queries(players):
    """{(report, method): SQL} of the count section."""
    where = f"game_id = '{GAME}'"
    rank_where = f"{where} AND score > {median_score(players)}"
    return {
        ("count", "shard_fdw"): f"SELECT count(*) FROM lb WHERE {where}",
        ("count", "read every item"):
            f"SELECT count(*) FROM (SELECT 1 FROM lb WHERE {where} OFFSET 0) s",
        ("rank", "shard_fdw"): f"SELECT count(*) + 1 FROM lb WHERE {rank_where}",
        ("rank", "read every item"):
            f"SELECT count(*) + 1 FROM (SELECT 1 FROM lb WHERE {rank_where} OFFSET 0) s",
    }


@section("count")
def count_and_rank(bench):
    """count(*) of the game and the rank of its median player."""
    players = bench.scores[GAME]
    low = f"{median_score(players) + 1:020d}"
    expected = {"count": len(players),
                "rank": 1 + sum(1 for _, s in players if s > median_score(players))}
    queries = count_queries(players)
    readers = {"count": (boto3_count,), "rank": (boto3_rank, low)}
    for (name, method), query in queries.items():
        got = bench.session.rows(query)
        if got != [str(expected[name])]:
            sys.exit(f"{name} by {method}: {got}, not {expected[name]}")
        plan = "\n".join(bench.session.rows("EXPLAIN (COSTS OFF) " + query))
        if ("Select: COUNT" in plan) != (method == "shard_fdw"):
            sys.exit(f"{name} by {method}: an unexpected plan\n{plan}")
    cases = {key: bench.fdw(query) for key, query in queries.items()}
    for name, reader in readers.items():
        cases[(name, "boto3 Select COUNT")] = bench.python(*reader)
    say(f"count and rank ({WARMUP} warm-up + {RUNS} rounds)")
    results = measure(cases)
    for name in readers:
        answer = results[(name, "boto3 Select COUNT")][1]
        if answer != expected[name]:
            sys.exit(f"{name} by boto3: {answer}, not {expected[name]}")
    print()
    print(f"count(*) of {PLAYERS} players over {SHARDS} shards and the rank of the "
          f"median score, {LATENCY_MS} ms per request: median ms of {RUNS} runs "
          f"(requests, items returned)")
    methods = ("shard_fdw", "read every item", "boto3 Select COUNT")
    print(f"{'':<8}" + "".join(f"{m:>24}" for m in methods))
    for name, reader in readers.items():
        line = f"{name:<8}"
        for method in methods[:2]:
            ms, (totals, _) = results[(name, method)]
            line += (f"{ms:>10.1f} ({totals['DynamoDB Requests']:>3}, "
                     f"{totals['DynamoDB Items Returned']:>5})")
        ms = results[(name, methods[2])][0]
        line += f"{ms:>10.1f} ({bench.requests(*reader):>3},     0)"
        print(line)
    print()
    for name in readers:
        ms, boto3_ms, all_ms = (results[(name, m)][0] for m in
                                ("shard_fdw", "boto3 Select COUNT", "read every item"))
        print(f"summary: {name}: shard_fdw {ms:.1f} ms = {ms / boto3_ms:.2f}x boto3's "
              f"Select COUNT reader ({boto3_ms:.1f} ms); reading every item "
              f"{all_ms / ms:.2f}x shard_fdw's time ({all_ms:.1f} ms)")
    return [item_row("count(*)" if name == "count" else name, *results[(name, "shard_fdw")])
            for name in readers]


def item_row(query, ms, figures):
    """A row of ITEM_COLUMNS from a bench.fdw() case's result."""
    totals, _ = figures
    return (query, totals["DynamoDB Requests"], totals.get("DynamoDB Items Scanned"),
            totals["DynamoDB Items Returned"], ms)


# -------------------------------------------------------- section: topn


TOPN_SELECT = f"SELECT player_id, score FROM lb WHERE game_id = '{GAME}' ORDER BY"


def topn_cases():
    """The top-N section's cases: (label, ORDER BY, LIMIT, its order with
    nothing claimed, or None when it is the loaded data's byte order).  The
    labels hold no double quote, which the plots' data refuses."""
    icu = 'player_id COLLATE "en-x-icu" DESC'
    return [
        ("both keys", "score DESC, player_id DESC", TOP, None),
        ("both keys, C collation", 'score DESC, player_id COLLATE "C" DESC', TOP, None),
        ("en-x-icu tie-breaker", f"score DESC, {icu}", TOP,
         f"score::numeric DESC, {icu}"),
        ("en-x-icu tie-breaker", f"score DESC, {icu}", TOP // 2,
         f"score::numeric DESC, {icu}"),
        ("nothing claimed", "score::numeric DESC, player_id DESC", TOP, None),
    ]


@section("topn")
def top_with_tiebreak(bench):
    """Items DynamoDB reads for the game's top 100 with a tie-breaker."""
    players = bench.scores[GAME]
    ranked = [f"{p}|{s}" for p, s in sorted(players, key=lambda r: (r[1], r[0]),
                                             reverse=True)]
    select = TOPN_SELECT
    cases = topn_cases()
    for label, order, limit, unclaimed in cases:
        rows = bench.session.rows(f"{select} {order} LIMIT {limit}")
        want = (ranked[:limit] if unclaimed is None else
                bench.session.rows(f"{select} {unclaimed} LIMIT {limit}"))
        if rows != want:
            sys.exit(f"{label}: the top {limit} differs (first rows {rows[:3]} "
                     f"vs {want[:3]})")
    say(f"top {TOP} with a tie-breaker ({WARMUP} warm-up + {RUNS} rounds)")
    results = measure({(label, limit): bench.fdw(f"{select} {order} LIMIT {limit}")
                       for label, order, limit, _ in cases})
    print()
    print(f"the top of {PLAYERS} players over {SHARDS} shards with a tie-breaker, "
          f"{LATENCY_MS} ms per request: median ms of {RUNS} runs, DynamoDB's items "
          f"and requests per query, the plan")
    print(f"{'':<24}{'LIMIT':>6}{'ms':>8}{'scanned':>9}{'returned':>10}{'requests':>10}  plan")
    for (label, limit), (ms, (t, nodes)) in results.items():
        print(f"{label:<24}{limit:>6}{ms:>8.1f}{t['DynamoDB Items Scanned']:>9}"
              f"{t['DynamoDB Items Returned']:>10}{t['DynamoDB Requests']:>10}  {nodes}")
    print()
    all_ms, (all_t, _) = results[("nothing claimed", TOP)]
    every = all_t["DynamoDB Items Scanned"]
    for (label, limit), (ms, (t, _)) in results.items():
        if label != "nothing claimed":
            print(f"summary: top-{limit} {label}: {t['DynamoDB Items Scanned']} items read "
                  f"({every / t['DynamoDB Items Scanned']:.1f}x fewer than the {every} "
                  f"read when nothing is claimed), {all_ms / ms:.2f}x faster")
    return [item_row(f"top-{limit} {label}".replace('"', ""), *result)
            for (label, limit), result in results.items()]


# ------------------------------------------------------ section: lookup

# what shard_fdw's lookup asks for: its columns and the keys
LOOKUP_PROJECTION = {"ProjectionExpression": "#g, #p, #s, #pk, #sk",
                     "ExpressionAttributeNames": {"#g": "game_id", "#p": "player_id",
                                                  "#s": "score", "#pk": "pk", "#sk": "sk"}}


def shard_lookup(table, player_id, filtered):
    """A player's score by a Query of its shard, page after page, and the
    items DynamoDB read and returned: the shard sent back whole (filtered
    false: shard_fdw's request before its filters took the columns key
    templates hold), or with a FilterExpression on player_id (the
    application's own lookup).  Returns (score, items read, items returned)."""
    arguments = {"KeyConditionExpression": "#pk = :pk",
                 "ExpressionAttributeValues": {
                     ":pk": f"{GAME}#{topn.shard_of(player_id, SHARDS)}"},
                 **LOOKUP_PROJECTION}
    if filtered:
        arguments["FilterExpression"] = "#p = :p"
        arguments["ExpressionAttributeValues"][":p"] = player_id
    score, read, returned = None, 0, 0
    while True:
        page = table.query(**arguments)
        read += page["ScannedCount"]
        returned += page["Count"]
        score = next((int(i["score"]) for i in page["Items"]
                      if i["player_id"] == player_id), score)
        if "LastEvaluatedKey" not in page:
            return score, read, returned
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def shard_rank(table, player_id, filtered):
    """A player's rank: its lookup (shard_lookup), then boto3's Select COUNT
    of the scores above, which reads every item it counts; (rank, items
    read, items returned)."""
    score, read, returned = shard_lookup(table, player_id, filtered)
    above = boto3_count(table, f"{score + 1:020d}")
    return 1 + above, read + above, returned


def median_player(players):
    """(player_id, score) of the median player, by score then id."""
    return sorted(players, key=lambda p: (p[1], p[0]))[len(players) // 2]


def lookup_queries(players):
    """{report: SQL} of the lookup section: the median player's score and
    rank."""
    lookup = (f"SELECT score FROM lb WHERE game_id = '{GAME}' "
              f"AND player_id = '{median_player(players)[0]}'")
    return {"lookup": lookup,
            "rank": f"SELECT count(*) + 1 FROM lb WHERE game_id = '{GAME}' "
                    f"AND score > ({lookup})"}


@section("lookup")
def own_position(bench):
    """The player's own position, which the leaderboard's readers want beside the
    top 100: the median player's score (a lookup of one shard) and rank (a
    count over every shard above that score, the lookup in its InitPlan);
    items and bytes DynamoDB returns, against the shard read whole."""
    players = bench.scores[GAME]
    player_id, score = median_player(players)
    shard = sum(1 for p, _ in players
                if topn.shard_of(p, SHARDS) == topn.shard_of(player_id, SHARDS))
    queries = lookup_queries(players)
    expected = {"lookup": score, "rank": 1 + sum(1 for _, s in players if s > score)}
    readers = {"lookup": shard_lookup, "rank": shard_rank}
    methods = {"shard_fdw": None, "the shard read whole": False,
               "boto3 FilterExpression": True}
    for name, query in queries.items():
        if bench.session.rows(query) != [str(expected[name])]:
            sys.exit(f"{name}: {bench.session.rows(query)}, not {expected[name]}")
    cases = {}
    for name, reader in readers.items():
        cases[(name, "shard_fdw")] = bench.fdw(queries[name])
        for method, filtered in methods.items():
            if filtered is not None:
                cases[(name, method)] = bench.python(reader, player_id, filtered)
    say(f"a player's lookup and rank ({WARMUP} warm-up + {RUNS} rounds)")
    results = measure(cases)
    figures = {}
    for (name, method), case in cases.items():
        (ms, gave), (requests, answer_bytes) = results[(name, method)], bench.traffic(case)
        if method == "shard_fdw":
            totals = gave[0]
            read, returned = totals["DynamoDB Items Scanned"], totals["DynamoDB Items Returned"]
        else:
            answer, read, returned = gave
            if answer != expected[name]:
                sys.exit(f"{name} by {method}: {answer}, not {expected[name]}")
        figures[(name, method)] = (ms, requests, read, returned, answer_bytes)
    print()
    print(f"the median player's lookup and rank among {PLAYERS} players over "
          f"{SHARDS} shards ({shard} in the player's), {LATENCY_MS} ms per request: "
          f"median ms of {RUNS} runs; requests, items DynamoDB read and returned, "
          f"bytes of its answers, of one run")
    print(f"{'':<32}{'ms':>8}{'requests':>10}{'read':>8}{'returned':>10}{'bytes':>10}")
    for (name, method), (ms, requests, read, returned, answer_bytes) in figures.items():
        print(f"{name + ': ' + method:<32}{ms:>8.1f}{requests:>10}{read:>8}"
              f"{returned:>10}{answer_bytes:>10}")
    print()
    for name in readers:
        ms, _, _, returned, answer_bytes = figures[(name, "shard_fdw")]
        whole_ms, _, _, whole_returned, whole_bytes = figures[(name, "the shard read whole")]
        print(f"summary: {name}: shard_fdw's items returned {returned} instead of the "
              f"shard's {whole_returned} ({whole_returned / max(returned, 1):.0f}x fewer), "
              f"bytes {answer_bytes} instead of {whole_bytes} "
              f"({whole_bytes / answer_bytes:.1f}x fewer); {ms:.1f} ms, "
              f"{ms / whole_ms:.2f}x the time of the shard read whole")
    return [(f"player's {name}", requests, read, returned, ms)
            for (name, method), (ms, requests, read, returned, _) in figures.items()
            if method == "shard_fdw"]


# ------------------------------------------------------- section: units


UNIT_COLUMNS = ("query", "estimated", "consumed", "proxy", "ratio")


@section("units")
def estimated_and_consumed(bench):
    """The read units EXPLAIN estimates for each report of the count, topn
    and lookup sections, after ANALYZE, against what it consumed:
    shard_fdw_stat's read_units of the table, and the ConsumedCapacity the
    proxy added up."""
    bench.session.rows("ANALYZE lb")
    reports = [(f"{name}, {method}", sql)
               for (name, method), sql in count_queries(bench.scores[GAME]).items()]
    reports += [(f"top-{limit} {label}", f"{TOPN_SELECT} {order} LIMIT {limit}")
                for label, order, limit, _ in topn_cases()]
    reports += [(f"player's {name}", sql)
                for name, sql in lookup_queries(bench.scores[GAME]).items()]
    say("estimated and consumed read units, after ANALYZE lb")
    rows = [units_row(bench.session, label, sql, "lb", TABLE) for label, sql in reports]
    print_units(f"read units of each report over {PLAYERS} players of one game, "
                f"{SHARDS} shards, after ANALYZE", rows)
    benchdata.write("reports_units", UNIT_COLUMNS, rows, {
        "bench": "EXPLAIN's estimated read units against those consumed, per report "
                 "(bench/reports_count.py)",
        "consumed": "shard_fdw_stat's read_units of the foreign table; proxy: the "
                    "ConsumedCapacity of DynamoDB Local's answers"})
    return []


def estimated_units(plan):
    """The Estimated Read Units of an EXPLAIN (FORMAT JSON) plan, summed over
    its nodes (and its aggregates' reads)."""
    if isinstance(plan, list):
        return sum(estimated_units(p) for p in plan)
    if not isinstance(plan, dict):
        return 0.0
    return plan.get("Estimated Read Units", 0.0) + sum(
        estimated_units(v) for v in plan.values() if isinstance(v, (list, dict)))


def units_row(session, label, sql, ftable, table):
    """(label, estimated, consumed per shard_fdw_stat, per the proxy,
    estimated / consumed) of one run of sql, which reads foreign table
    ftable over DynamoDB table table; session runs psql."""
    plan = json.loads("\n".join(session.rows("EXPLAIN (FORMAT JSON) " + sql)))
    view = (f"SELECT coalesce(sum(read_units), 0) FROM shard_fdw_stat "
            f"WHERE ftable = '{ftable}'::regclass")
    before = float(session.rows(view)[0])
    before_proxy = bed.stats()["consumed_capacity"].get(table, 0.0)
    session.rows(sql)
    consumed = float(session.rows(view)[0]) - before
    proxy = bed.stats()["consumed_capacity"].get(table, 0.0) - before_proxy
    estimated = estimated_units(plan)
    return (label, estimated, consumed, proxy, estimated / consumed if consumed else None)


def print_units(title, rows):
    """The table of units_row rows, and the summary line."""
    print()
    print(title)
    print(f"{'report':<44}{'estimated':>11}{'consumed':>10}{'proxy':>8}{'ratio':>8}")
    for label, estimated, consumed, proxy, ratio in rows:
        print(f"{label:<44}{estimated:>11.1f}{consumed:>10.1f}{proxy:>8.1f}"
              + (f"{ratio:>7.2f}x" if ratio is not None else f"{'-':>8}"))
    estimated = sum(r[1] for r in rows)
    consumed = sum(r[2] for r in rows)
    ratios = [r[4] for r in rows if r[4] is not None]
    print()
    print(f"summary: read units: estimated {estimated:.1f} against {consumed:.1f} consumed "
          f"({estimated / consumed:.2f}x) over {len(rows)} reports; per report "
          f"{min(ratios):.2f}x to {max(ratios):.2f}x")


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
    load_before = os.getloadavg()[0]
    rows = [row for name in wanted for row in SECTIONS[name](bench)]
    bench.session.close()
    if rows:
        benchdata.write("reports_items", ITEM_COLUMNS, rows, {
            "bench": f"what shard_fdw's reports read over {PLAYERS} players of one "
                     f"game, {SHARDS} shards (bench/reports_count.py)",
            "latency added per request": f"{LATENCY_MS} ms",
            "runs": f"median ms of {RUNS} runs after {WARMUP} warm-up rounds; "
                    "requests and items of the last (EXPLAIN ANALYZE)",
            "load average before": f"{load_before:.1f}"})


if __name__ == "__main__":
    main()

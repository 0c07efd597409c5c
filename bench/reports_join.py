"""Reports over a sharded leaderboard: shard_fdw against boto3 clients.

Run by bench/reports.sh (its join section), in a database of its own, once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The leaderboard is the one hashed on player_id: pk = {game_id}#{shard}, sk =
{score:020}#{player_id}, shard = FNV-1a-32(player_id) mod 10, with two
games: "g" of BENCH_PLAYERS players and "big" of BENCH_BIG_WATCHED.  The
foreign table is analyzed, so the planner knows both.  Each section is a
function in SECTIONS, run in order, returning its summary line:

  join   SELECT w.player, l.score FROM watch w JOIN leaderboard l
           ON l.game_id = w.game AND l.player_id = w.player
         for 10 and 1,000 watched players of "g" and every player of "big"
         (none when BENCH_BIG_WATCHED is 0), against
           lookups16    boto3 sending one Query per watched player (its
                        shard, FilterExpression on player_id: the
                        leaderboard's sort key starts with the score), 16 at
                        a time
           shards_join  boto3 reading the game's 10 shards at once (every
                        page), then joining in memory

  units  the read units EXPLAIN estimates for each of those joins against
         what it consumed (shard_fdw_stat, and the proxy's sum of DynamoDB
         Local's ConsumedCapacity)
"""

import os
import random
import re
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from boto3.dynamodb.conditions import Key
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)
import reports_count  # noqa: E402  (its psql session and the units' table)
import topn  # noqa: E402  (the leaderboard's items and foreign table, boto3, psql)

SHARDS = 10
TABLE = topn.table_name(SHARDS)
LATENCY_MS, RUNS, WARMUP, PLAYERS, BIG_WATCHED, LOOKUP_CAP = benchdata.settings(
    LATENCY_MS=5, RUNS=5, WARMUP=1, PLAYERS=3000, BIG_WATCHED=100000, LOOKUP_CAP=100)
LOOKUP_THREADS = 16
TARGET = 3.0     # the 1,000-player join / shards_join should stay within this
LOAD_BEFORE = os.getloadavg()[0]    # what else runs here weighs on every number


def say(message):
    print(f"==> {message}", flush=True)


# ------------------------------------------------------------------ data


def players(game, count):
    """{player_id: score} of one game; scores are distinct."""
    rng = random.Random(f"{game}-{count}")
    return {f"{game}-p{i:06d}": s
            for i, s in enumerate(rng.sample(range(10 ** 9), count))}


def load(game, scores):
    """Batch-write one game's scores straight to DynamoDB Local, four
    writers at once."""
    rows = list(scores.items())

    def write(part):
        resource = topn.dynamodb("SHARD_FDW_DIRECT_ENDPOINT")
        with resource.Table(TABLE).batch_writer() as writer:
            for player_id, score in part:
                writer.put_item(Item=topn.item(player_id, score, SHARDS, game=game))

    with ThreadPoolExecutor(max_workers=4) as executor:
        for done in [executor.submit(write, rows[i::4]) for i in range(4)]:
            done.result()


def setup_sql():
    """The server through the proxy, the leaderboard (topn.py's) and bench_ms."""
    endpoint = topn.sql_literal(bed.env("SHARD_FDW_ENDPOINT"))
    mapping = (f"access_key_id {topn.sql_literal(bed.env('SHARD_FDW_ACCESS_KEY'))}, "
               f"secret_access_key {topn.sql_literal(bed.env('SHARD_FDW_SECRET_KEY'))}")
    return f"""
CREATE EXTENSION IF NOT EXISTS shard_fdw;
CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint {endpoint});
CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({mapping});
{topn.foreign_table("leaderboard", "ddb", SHARDS)}
{topn.BENCH_MS_SQL}"""


def proxy_table():
    """The leaderboard through the proxy, with a connection per thread of
    the largest pool and no SDK retries."""
    return topn.dynamodb("SHARD_FDW_ENDPOINT",
                         Config(retries={"total_max_attempts": 1},
                                max_pool_connections=LOOKUP_THREADS)).Table(TABLE)


def timed(function):
    """Milliseconds one call of function takes, and what it returns."""
    started = time.perf_counter()
    result = function()
    return (time.perf_counter() - started) * 1000, result


def median_ms(session, sql, runs):
    """The median of runs timings of sql in the server (bench_ms)."""
    return statistics.median(float(ms) for ms in session.lines(
        f"SELECT bench_ms({topn.sql_literal(sql)}, {runs});", runs))


def explain_figures(sql):
    """The plan's top node, its DynamoDB operations, and the requests and
    items DynamoDB read, from EXPLAIN ANALYZE."""
    lines = [r[0] for r in bed.query(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {sql}")]

    def total(label):
        return sum(int(m.group(1)) for line in lines
                   for m in [re.search(label + r": (\d+)", line)] if m)

    operations = sorted({m.group(1) for line in lines
                         for m in [re.search(r"DynamoDB Operation: (\w+)", line)] if m})
    top = next(line.strip().split(" (actual")[0] for line in lines
               if "Join" in line or "Nested Loop" in line)
    return (f"{top} / {'+'.join(operations)}", total("DynamoDB Requests"),
            total("DynamoDB Items Scanned"))


# ------------------------------------------------------------------- join


JOIN_SQL = ("SELECT w.player, l.score FROM {watch} w JOIN leaderboard l "
            "ON l.game_id = w.game AND l.player_id = w.player")


def lookups16(table, game, watched):
    """One Query per watched player, 16 at a time: (rows, items read)."""
    def one(player_id):
        rows, scanned, start = [], 0, None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            page = table.query(
                KeyConditionExpression="pk = :pk", FilterExpression="player_id = :p",
                ExpressionAttributeValues={
                    ":pk": f"{game}#{topn.shard_of(player_id, SHARDS)}",
                    ":p": player_id}, **extra)
            rows += [(i["player_id"], int(i["score"])) for i in page["Items"]]
            scanned += page["ScannedCount"]
            start = page.get("LastEvaluatedKey")
            if not start:
                return rows, scanned

    with ThreadPoolExecutor(max_workers=LOOKUP_THREADS) as executor:
        results = list(executor.map(one, watched))
    return [r for rows, _ in results for r in rows], sum(s for _, s in results)


def shards_join(table, game, watched):
    """The game's shards read at once, every page, then joined in memory:
    (rows, items read)."""
    def shard(number):
        scores, scanned, start = {}, 0, None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            page = table.query(KeyConditionExpression=Key("pk").eq(f"{game}#{number}"),
                               **extra)
            scores.update((i["player_id"], int(i["score"])) for i in page["Items"])
            scanned += page["ScannedCount"]
            start = page.get("LastEvaluatedKey")
            if not start:
                return scores, scanned

    with ThreadPoolExecutor(max_workers=SHARDS) as executor:
        results = list(executor.map(shard, range(SHARDS)))
    scores = {}
    for part, _ in results:
        scores.update(part)
    return ([(p, scores[p]) for p in watched if p in scores],
            sum(s for _, s in results))


def watched_players(games):
    """{N: (game, its watched players)} of the joins: 10 and 1,000 players
    of "g", and every player of "big"."""
    cases = [(10, "g"), (1000, "g")] + ([(BIG_WATCHED, "big")] if BIG_WATCHED else [])
    rng = random.Random(5)
    return {count: (game, rng.sample(sorted(games[game]), count)) for count, game in cases}


def watch_table(count, game, watched):
    """The local table of N watched players (made and analyzed once)."""
    watch = f"watch_{count}"
    if bed.query(f"SELECT to_regclass('{watch}') IS NULL") == [["t"]]:
        bed.psql(f"CREATE TABLE {watch} (game text, player text);\n"
                 f"COPY {watch} FROM STDIN;\n"
                 + "".join(f"{game}\t{p}\n" for p in watched) + "\\.\n"
                 f"ANALYZE {watch};")
    return watch


def join_section(session, games):
    """The join for 10, 1,000 and every player of "big"; returns the summary."""
    table = proxy_table()
    results = {}
    for count, (game, watched) in watched_players(games).items():
        sql = JOIN_SQL.format(watch=watch_table(count, game, watched))
        expected = sorted((p, games[game][p]) for p in watched)

        # the same rows from every method, and what each reads
        got = sorted((p, int(s)) for p, s in bed.query(sql))
        if got != expected:
            sys.exit(f"join of {count}: shard_fdw's rows differ from the loaded scores")
        plan, requests, items = explain_figures(sql)
        figures = {"shard_fdw": (requests, items)}
        capped = watched[:LOOKUP_CAP] if count > 1000 else watched
        for name, client, players_read in (("lookups16", lookups16, capped),
                                           ("shards_join", shards_join, watched)):
            before = bed.stats()["requests_total"]
            rows, scanned = client(table, game, players_read)
            figures[name] = (bed.stats()["requests_total"] - before, scanned)
            if sorted(rows) != sorted((p, games[game][p]) for p in players_read):
                sys.exit(f"join of {count}: {name}'s rows differ from the loaded scores")

        # interleaved timings
        times = {"shard_fdw": [], "lookups16": [], "shards_join": []}
        for r in range(WARMUP + RUNS):
            ms = {"shard_fdw": median_ms(session, sql, 1),
                  "lookups16": timed(lambda: lookups16(table, game, capped))[0]
                  * len(watched) / len(capped),
                  "shards_join": timed(lambda: shards_join(table, game, watched))[0]}
            if r >= WARMUP:
                for name, value in ms.items():
                    times[name].append(value)
        results[count] = (plan, {m: statistics.median(t) for m, t in times.items()},
                          figures, len(capped) < len(watched))

    print()
    print(f"join of N watched players with the leaderboard, the proxy adding "
          f"{LATENCY_MS} ms to each request: median ms of {RUNS} runs "
          f"(requests, items read per query)")
    print(f"{'N':>7}  {'shard_fdw':>28}  {'lookups16':>28}  {'shards_join':>28}  plan")
    for count, (plan, medians, figures, capped) in results.items():
        cells = []
        for method in ("shard_fdw", "lookups16", "shards_join"):
            requests, items = figures[method]
            mark = "*" if method == "lookups16" and capped else " "
            cells.append(f"{medians[method]:>9.1f}{mark}({requests:>6}, {items:>8})")
        print(f"{count:>7}  " + "  ".join(f"{c:>28}" for c in cells) + f"  {plan}")
    if any(capped for _, _, _, capped in results.values()):
        print(f"  * timed over its first {LOOKUP_CAP} lookups and scaled to N "
              f"(each reads a whole shard); requests and items are those lookups'")
    print()
    print(f"{'ratio':<28}" + "".join(f"{f'N={c}':>10}" for c in results))
    for method in ("lookups16", "shards_join"):
        print(f"{'shard_fdw / ' + method:<28}" + "".join(
            f"{r[1]['shard_fdw'] / r[1][method]:>9.2f}x" for r in results.values()))
    write_data(results)
    ratio = results[1000][1]["shard_fdw"] / results[1000][1]["shards_join"]
    verdict = "met" if ratio <= TARGET else "missed"
    return (f"join of 1,000 players at {LATENCY_MS} ms/request: shard_fdw "
            f"{results[1000][1]['shard_fdw']:.1f} ms = {ratio:.2f}x shards_join "
            f"(target {TARGET}x {verdict}), "
            f"{results[1000][1]['shard_fdw'] / results[1000][1]['lookups16']:.2f}x lookups16; "
            + ", ".join(f"N={c}: {r[1]['shard_fdw'] / r[1]['shards_join']:.2f}x shards_join"
                        for c, r in results.items() if c != 1000))


def write_data(results):
    """reports_join.tsv for bench/plots.sh: per number of watched players,
    each method's median ms, requests and items read, and the plan."""
    methods = ("shard_fdw", "lookups16", "shards_join")
    columns = (["watched"] + [f"{m}_ms" for m in methods]
               + [f"{m}_{what}" for m in methods for what in ("requests", "items")]
               + ["lookups16_scaled", "plan"])
    rows = [[count] + [medians[m] for m in methods]
            + [n for m in methods for n in figures[m]]
            + ["yes" if capped else "no", plan]
            for count, (plan, medians, figures, capped) in results.items()]
    benchdata.write("reports_join", columns, rows, {
        "bench": f"a local table of N watched players joined with the leaderboard, "
                 f"{SHARDS} shards (bench/reports_join.py)",
        "latency added per request": f"{LATENCY_MS} ms",
        "runs": f"median of {RUNS} runs after {WARMUP} warm-up rounds",
        "lookups16_scaled": f"yes: timed over its first {LOOKUP_CAP} lookups and "
                            "scaled to N; its requests and items are those lookups'",
        "load average before": f"{LOAD_BEFORE:.1f}"})


def units_section(session, games):
    """The read units EXPLAIN estimates for each join against those it
    consumed; returns the summary."""
    psql = reports_count.Session()
    rows = [reports_count.units_row(
                psql, f"join of {count} watched players",
                JOIN_SQL.format(watch=watch_table(count, game, watched)), "leaderboard", TABLE)
            for count, (game, watched) in watched_players(games).items()]
    psql.close()
    reports_count.print_units("read units of each join, the leaderboard analyzed", rows)
    benchdata.write("reports_join_units", reports_count.UNIT_COLUMNS, rows, {
        "bench": "EXPLAIN's estimated read units against those consumed, per join "
                 "(bench/reports_join.py)",
        "load average before": f"{LOAD_BEFORE:.1f}"})
    estimated = sum(r[1] for r in rows)
    consumed = sum(r[2] for r in rows)
    return (f"read units of the joins: estimated {estimated:.1f} against {consumed:.1f} "
            f"consumed ({estimated / consumed:.2f}x)")


SECTIONS = {"join": join_section, "units": units_section}


def main():
    chosen = [s for s in os.environ.get("BENCH_SECTIONS", ",".join(SECTIONS)).split(",") if s]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        sys.exit(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    games = {"g": players("g", PLAYERS), "big": players("big", BIG_WATCHED)}
    say(f"loading {PLAYERS} + {BIG_WATCHED} scores (straight to DynamoDB Local)")
    bed.configure(latency_ms=0)
    bed.create_table(bed.ddb(direct=True), TABLE, "pk", "sk")
    for game, scores in games.items():
        load(game, scores)
    bed.psql(setup_sql())
    say("ANALYZE leaderboard")
    bed.psql("ANALYZE leaderboard;")
    bed.configure(latency_ms=LATENCY_MS)
    session = topn.Session()
    summaries = []
    for name in chosen:
        say(f"section {name}: proxy latency {LATENCY_MS} ms per request "
            f"({WARMUP} warm-up + {RUNS} rounds)")
        summaries.append(SECTIONS[name](session, games))
    session.close()
    print()
    for line in summaries:
        print(f"summary: {line}")


if __name__ == "__main__":
    main()

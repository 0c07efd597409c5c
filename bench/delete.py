"""DELETE of one game's scores: inside the scan against row by row.

Run by bench/delete.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The table is the leaderboard hashed on player_id over 10 calculated shards.
Before each timed DELETE the game's ROWS scores are loaded straight into
DynamoDB Local; the DELETE then goes through the proxy, which adds
LATENCY_MS to every request:

  direct      DELETE FROM lb WHERE game_id = 'g': the scan deletes each
              item it reads with a conditional DeleteItem, up to twice
              max_concurrency in flight
  row_by_row  WITH d AS (DELETE ... RETURNING 1) SELECT count(*) FROM d:
              RETURNING keeps PostgreSQL's row-by-row path, one DeleteItem
              (and one round trip) per row

Each run checks that the statement deleted ROWS rows and left no item.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)

LATENCY_MS, ROWS, RUNS = benchdata.settings(LATENCY_MS=5, ROWS=2000, RUNS=3)
SHARDS = 10
TABLE = "delete_bench"
STATEMENTS = {
    "direct": "DELETE FROM lb WHERE game_id = 'g'",
    "row_by_row": "WITH d AS (DELETE FROM lb WHERE game_id = 'g' RETURNING 1) "
                  "SELECT count(*) FROM d",
}


def say(message):
    print(f"==> {message}", flush=True)


def set_up():
    """The table and its two foreign tables (bed.leaderboard_pair): lb
    through the proxy and lb_load straight to DynamoDB Local."""
    bed.leaderboard_pair(TABLE, SHARDS)


def load():
    bed.psql(f"INSERT INTO lb_load SELECT 'g', 'player' || i, i * 7 % 100000 "
             f"FROM generate_series(1, {ROWS}) i")


def timed_delete(method):
    """Seconds the DELETE took; checks what it deleted and what is left."""
    load()
    started = time.perf_counter()
    result = bed.psql(f"{STATEMENTS[method]};\n\\echo :ROW_COUNT")
    seconds = time.perf_counter() - started
    last = result.stdout.split()[-1]
    deleted = int(result.stdout.split()[0]) if method == "row_by_row" else int(last)
    assert deleted == ROWS, f"{method} deleted {deleted} rows, not {ROWS}"
    left = bed.query("SELECT count(*) FROM lb_load WHERE game_id = 'g'")[0][0]
    assert left == "0", f"{method} left {left} items"
    return seconds


def main():
    set_up()
    bed.configure(latency_ms=LATENCY_MS)
    try:
        say(f"{ROWS} rows over {SHARDS} shards, {LATENCY_MS} ms added per request, "
            f"{RUNS} run(s) per method")
        timed_delete("direct")       # warm-up: connections, catalog caches
        seconds = {method: [] for method in STATEMENTS}
        for run in range(RUNS):
            order = list(STATEMENTS) if run % 2 == 0 else list(reversed(STATEMENTS))
            for method in order:
                seconds[method].append(timed_delete(method))
                say(f"run {run + 1}/{RUNS}: {method:<10} {seconds[method][-1]:7.2f} s")
    finally:
        bed.configure(latency_ms=0)
        bed.ddb(direct=True).delete_table(TableName=TABLE)
    median = {method: statistics.median(s) for method, s in seconds.items()}
    print()
    for method in STATEMENTS:
        print(f"{method:<12}{median[method]:8.2f} s  {ROWS / median[method]:8.0f} rows/s")
    print(f"\nsummary: DELETE of {ROWS} rows at {LATENCY_MS} ms per request: "
          f"direct {median['direct']:.2f} s, row by row {median['row_by_row']:.2f} s "
          f"({median['row_by_row'] / median['direct']:.1f}x slower)")


if __name__ == "__main__":
    main()

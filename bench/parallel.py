"""Scan throughput with PostgreSQL's parallel workers: a count(*)-free
aggregate over a whole-table Scan of BENCH_ITEMS items (1,000,000), with
max_parallel_workers_per_gather 0, 2 and 4, against DynamoDB Local
directly (no proxy, no added latency).

Run by bench/parallel.sh once DynamoDB Local and PostgreSQL are up (it
reads the environment test/lib.sh exports); python3 bench/parallel.py
also runs against a test bed from test/serve.sh, loading the table only
once.  Every number it prints is measured in this run.

DynamoDB Local answers a Scan page of a large table slowly (its segment
is found among every item), more so with many segments in flight on a
loaded machine: the server's attempt_timeout_ms is BENCH_ATTEMPT_TIMEOUT_MS
(120 s) and its request_timeout_ms three times that.

The items are written through shard_fdw itself (INSERT ... SELECT
generate_series: BatchWriteItem, max_concurrency requests in flight),
then the table is analyzed, so that the planner sizes the workers from
its row count and width.  min_parallel_table_scan_size is lowered to
BENCH_MIN_SCAN_SIZE (1MB) so that the table, counted as the heap its rows
would fill, earns up to 4 workers; max_parallel_workers_per_gather caps
them at 0, 2 or 4; parallel_setup_cost is BENCH_SETUP_COST (1000,
PostgreSQL's own).  The EXPLAIN ANALYZE of each setting is printed first
(the workers launched and the segments each participant read).

Per setting, BENCH_RUNS statements (3) after the EXPLAIN ANALYZE, their
median:
  wall      the statement's time in psql's session
  rows/s    items read per second of it
  ratio     the wall time of 0 workers over this one's
  leader    the leader backend's CPU (/proc/self/schedstat, read in it)
  workers   the parallel workers' CPU: what the postmaster's children
            that exited during the statement used (its cutime and cstime
            in /proc/PID/stat, counted as it reaps them; autovacuum is
            off while the bench runs, so no other child comes and goes)
  DDB       DynamoDB Local's CPU (/proc/PID/stat) when its pid is given
            (BENCH_DDB_PID), which runs on the same cores
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql and boto3 helpers)
import benchdata  # noqa: E402

ITEMS = int(os.environ.get("BENCH_ITEMS", "1000000"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
WORKERS = tuple(int(n) for n in os.environ.get("BENCH_WORKERS", "0,2,4").split(","))
MIN_SCAN_SIZE = os.environ.get("BENCH_MIN_SCAN_SIZE", "1MB")
SETUP_COST = os.environ.get("BENCH_SETUP_COST", "1000")
TIMEOUT_MS = int(os.environ.get("BENCH_ATTEMPT_TIMEOUT_MS", "120000"))
DDB_PID = os.environ.get("BENCH_DDB_PID")
TABLE = f"parallel_scan_{ITEMS}"
QUERY = "SELECT sum(score), avg(level), max(note) FROM big"


def say(message):
    print(f"==> {message}", flush=True)


def setup_sql():
    """The server on DynamoDB Local itself and the foreign table."""
    return f"""CREATE EXTENSION IF NOT EXISTS shard_fdw;
        DROP SERVER IF EXISTS ddb CASCADE;
        {bed.server_sql(direct=True)}
        ALTER SERVER ddb OPTIONS (ADD attempt_timeout_ms '{TIMEOUT_MS}',
                                  ADD request_timeout_ms '{3 * TIMEOUT_MS}');
        CREATE FOREIGN TABLE big (
          player_id text NOT NULL, game_id text, score bigint, level int, note text
        ) SERVER ddb OPTIONS (table '{TABLE}', partition_key 'player_id');"""


def load(client):
    """The items, written through shard_fdw, unless the table has them."""
    if TABLE in client.list_tables()["TableNames"]:
        return
    bed.create_table(client, TABLE, "player_id")
    say(f"writing {ITEMS} items through shard_fdw (INSERT ... SELECT)")
    bed.psql(f"""INSERT INTO big
        SELECT 'player' || lpad(i::text, 7, '0'), 'game' || (i % 100), (i::bigint * 7919) % 100000,
               i % 60, md5(i::text)
          FROM generate_series(1, {ITEMS}) i""")


def ticks(stat):
    """utime + stime and cutime + cstime of a /proc/PID/stat line, in s."""
    fields = stat.rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return ((int(fields[11]) + int(fields[12])) / tick,
            (int(fields[13]) + int(fields[14])) / tick)


class Leader:
    """One session: the leader backend of every statement timed."""

    def __init__(self):
        self.session = bed.Session(os.environ.get("PGDATABASE", "postgres"))
        [self.postmaster] = self.session.run(
            "SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1)")

    def counters(self):
        """The leader's CPU seconds so far, and the postmaster's reaped
        children's."""
        [oncpu] = self.session.run(
            "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)")
        [stat] = self.session.run(
            f"SELECT rtrim(pg_read_file('/proc/{self.postmaster}/stat'), E'\\n')")
        return int(oncpu) / 1e9, ticks(stat)[1]

    def settings(self, workers):
        self.session.run(f"SET max_parallel_workers_per_gather = {workers}")

    def explain(self):
        return self.session.run(
            f"EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) {QUERY}")

    def timed(self):
        """One statement: its wall, leader and workers' CPU seconds, and
        DynamoDB Local's (None without its pid)."""
        ddb = ddb_cpu()
        leader, children = self.counters()
        got = self.session.run(QUERY)
        wall = self.session.seconds
        leader_after, children_after = self.counters()
        ddb_after = ddb_cpu()
        if len(got) != 1:
            sys.exit(f"the aggregate returned {got}")
        return (wall, leader_after - leader, children_after - children,
                None if ddb is None else ddb_after - ddb, got[0])


def ddb_cpu():
    """DynamoDB Local's CPU seconds so far, or None."""
    if not DDB_PID:
        return None
    with open(f"/proc/{DDB_PID}/stat", encoding="ascii") as f:
        return ticks(f.read())[0]


def main():
    load_before = os.getloadavg()
    client = bed.ddb(direct=True)
    bed.psql(setup_sql())
    load(client)
    say("ANALYZE")
    bed.psql("ANALYZE big")
    [[rows]] = bed.query("SELECT reltuples::bigint FROM pg_class WHERE relname = 'big'")
    bed.psql("ALTER SYSTEM SET autovacuum = off; SELECT pg_reload_conf();")
    leader = Leader()
    leader.session.run(f"SET min_parallel_table_scan_size = '{MIN_SCAN_SIZE}'")
    leader.session.run(f"SET parallel_setup_cost = {SETUP_COST}")
    results = []
    answer = None
    try:
        for workers in WORKERS:
            leader.settings(workers)
            say(f"max_parallel_workers_per_gather = {workers}: EXPLAIN ANALYZE")
            plan = leader.explain()
            for line in plan:
                print(f"    {line}")
            launched = re.search(r"Workers Launched: (\d+)", "\n".join(plan))
            runs = [leader.timed() for _ in range(RUNS)]
            for run in runs:
                if answer is not None and run[4] != answer:
                    sys.exit(f"{workers} workers answered {run[4]}, not {answer}")
                answer = run[4]
            results.append((workers, int(launched.group(1)) if launched else 0,
                            *(statistics.median(r[i] for r in runs)
                                       if runs[0][i] is not None else None
                                       for i in range(4))))
    finally:
        leader.session.close()
        bed.psql("ALTER SYSTEM RESET autovacuum; SELECT pg_reload_conf();")

    base = results[0][2]
    print()
    print(f"{QUERY}: a Scan of {ITEMS} items ({rows} by ANALYZE), DynamoDB Local directly;")
    print(f"{os.cpu_count()} CPUs, load average {load_before[0]:.1f} before and "
          f"{os.getloadavg()[0]:.1f} after; median of {RUNS} statements")
    print(f"{'workers':>7}{'launched':>9}{'wall s':>9}{'rows/s':>10}{'ratio':>7}"
          f"{'leader CPU s':>14}{'workers CPU s':>15}{'DDB Local CPU s':>17}")
    for workers, launched, wall, lead, children, ddb in results:
        print(f"{workers:>7}{launched:>9}{wall:>9.2f}{ITEMS / wall:>10.0f}{base / wall:>6.2f}x"
              f"{lead:>14.2f}{children:>15.2f}"
              f"{'' if ddb is None else f'{ddb:.2f}':>17}")
    print()
    print("summary: " + ", ".join(
        f"{workers} workers ({launched} launched) {base / wall:.2f}x the rows/s of none, "
        f"backends' CPU {lead + children:.2f} s"
        for workers, launched, wall, lead, children, _ in results))
    benchdata.write("parallel",
                    ["workers", "launched", "wall_s", "rows_per_s", "ratio",
                     "leader_cpu_s", "workers_cpu_s", "ddb_cpu_s"],
                    [(w, n, wall, ITEMS / wall, base / wall, lead, children, ddb)
                     for w, n, wall, lead, children, ddb in results],
                    {"items": ITEMS, "query": QUERY,
                     "load average before": f"{load_before[0]:.1f}",
                     "runs": RUNS})


if __name__ == "__main__":
    main()

"""Instructions per top-100, counted by callgrind in the backend: run by
bench/instructions.sh once PostgreSQL runs under callgrind, each process
writing CG_DIR/cg.PID when it exits.

For each N in BENCH_SHARDS, one backend runs the top-100 over N shards
SHORT times and another LONG times; the difference of their totals over
LONG - SHORT is one statement's instructions, whatever a backend's start
and end cost. Every number it prints is measured in this run.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql and boto3 helpers)
import cpu  # noqa: E402  (the tables and statements of bench/cpu.py)

SHORT = 2
LONG = 12


def say(message):
    print(f"==> {message}", flush=True)


def backend_instructions(cg_dir, sql, times):
    """The instructions of a backend that ran sql times, from the file
    callgrind writes when the backend exits."""
    script = "SELECT pg_backend_pid();\n" + f"{sql};\n" * times
    out = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                         input=script, capture_output=True, text=True,
                         check=True).stdout
    pid = out.split("\n", 1)[0].strip()
    path = os.path.join(cg_dir, f"cg.{pid}")
    for _ in range(600):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.startswith("totals:") or line.startswith("summary:"):
                        return int(line.split()[1])
        time.sleep(0.1)
    sys.exit(f"callgrind wrote no total to {path}")


def main():
    cg_dir = sys.argv[1]
    client = bed.ddb(direct=True)
    existing = set(client.list_tables()["TableNames"])
    for shards in cpu.SHARD_COUNTS:
        if cpu.topn_table(shards) not in existing:
            say(f"loading the leaderboard of {shards} shards")
            cpu.load_topn(client, shards)
    bed.psql(cpu.setup_sql())

    rows = []
    for shards in cpu.SHARD_COUNTS:
        sql = cpu.top_query(shards)
        say(f"counting the top-{cpu.TOP} over {shards} shards "
            f"({SHORT} and {LONG} statements)")
        short = backend_instructions(cg_dir, sql, SHORT)
        long = backend_instructions(cg_dir, sql, LONG)
        rows.append((shards, (long - short) / (LONG - SHORT)))

    print()
    print("backend instructions (user space, callgrind), DynamoDB Local directly")
    print(f"{'top-100 over N':>14}{'M/statement':>13}{'k/request':>11}")
    for shards, per_statement in rows:
        print(f"{shards:>14}{per_statement / 1e6:>13.2f}"
              f"{per_statement / 1e3 / shards:>11.1f}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""bench/instructions.sh end to end, in a tiny configuration.

The script restarts its own PostgreSQL under callgrind and counts the
backend's instructions per top-100 over 1 and 4 shards of a 300-score
leaderboard.  The test checks that it prints a row per shard count, that
every count is a positive number of instructions, and that four shard
requests cost more than one.  valgrind is installed by the script when
missing; when it is missing and this is not root, the test is skipped with
a line saying so.  Ends with "N passed, N failed".
"""

import os
import re
import shutil
import subprocess
import sys

import bed

runner = bed.Runner()
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SHARDS = (1, 4)
state = {}


@runner.test
def a_row_per_shard_count():
    result = state["run"]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert sorted(state["rows"]) == list(SHARDS), result.stdout[-2000:]
    for shards, (per_statement, per_request) in state["rows"].items():
        assert per_statement > 0 and per_request > 0, (shards, per_statement)
        # the statement's count is printed to 0.01 M, the request's to 0.1 k
        assert abs(per_statement * 1000 / shards - per_request) <= 5 / shards + 0.05, \
            (shards, per_statement, per_request)


@runner.test
def more_shards_cost_more_instructions():
    rows = state["rows"]
    assert rows[4][0] > rows[1][0], rows


def set_up():
    env = {**os.environ, "BENCH_SKIP_BUILD": "1",
           "BENCH_SHARDS": ",".join(map(str, SHARDS)), "BENCH_SCORES": "300"}
    run = subprocess.run(["bash", os.path.join(ROOT, "bench", "instructions.sh")],
                         env=env, text=True, capture_output=True, check=False,
                         timeout=900)
    print(run.stdout[-800:], end="")
    state["run"] = run
    state["rows"] = {
        int(m[1]): (float(m[2]), float(m[3]))
        for m in re.finditer(r"^\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)$", run.stdout, re.M)}


def main():
    if shutil.which("valgrind") is None and os.geteuid() != 0:
        print("skipped: valgrind is not installed and installing it needs "
              "root (apt-get install valgrind)")
        print("0 passed, 0 failed")
        sys.exit(0)
    runner.main(set_up, lambda: None)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# bench/indexes.sh — three queries on a table of users with secondary
# indexes (a GSI on email, a KEYS_ONLY GSI on country and signup, an LSI on
# seen): the read the planner picks, through an index, against the table's
# own read (use_indexes 'false'), every request through the test proxy
# with the same added latency. Prints the items DynamoDB reads, the
# requests, the read units and the median milliseconds of each, measured
# in this run, then one summary line (the work is in bench/indexes.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (10)
#   BENCH_RUNS             timed runs per read; medians are printed (20)
#   BENCH_WARMUP           untimed runs before them (3)
#   BENCH_USERS            users loaded (3000)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench indexes

"$PYTHON" bench/indexes.py

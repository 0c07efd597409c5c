#!/usr/bin/env bash
# bench/update.sh — how long a bulk UPDATE of one game's scores takes on a
# sharded leaderboard behind the proxy's latency, against a boto3 client
# sending the same writes 16 at a time: an UPDATE that moves every row to a
# new sort key (a TransactWriteItems per row) and one that keeps the keys
# (an UpdateItem per row). Prints medians and their ratios measured in this
# run (the work is in bench/update.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (5)
#   BENCH_ROWS             scores of the game updated per run (2000)
#   BENCH_RUNS             timed runs per method, in alternating order (3)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench update

"$PYTHON" bench/update.py

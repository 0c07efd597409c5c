#!/usr/bin/env bash
# bench/delete.sh — how long a DELETE of one game's scores takes on a
# sharded leaderboard behind the proxy's latency: run inside the scan
# (direct modify: conditional DeleteItems, many in flight) against the same
# DELETE made to go row by row (a RETURNING clause, one DeleteItem and one
# round trip per row). Prints medians and their ratio measured in this run
# (the work is in bench/delete.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (5)
#   BENCH_ROWS             scores deleted per run (2000)
#   BENCH_RUNS             timed runs per method, in alternating order (3)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench delete

"$PYTHON" bench/delete.py

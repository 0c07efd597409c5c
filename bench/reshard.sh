#!/usr/bin/env bash
# bench/reshard.sh — how fast shard_fdw_reshard moves a loaded leaderboard's
# items into a new layout behind the proxy's latency: the leaderboard hashed
# on player_id grown from 10 to 20 shards (about half the items move) and
# shrunk to 5, each move timed and checked with boto3 (every item at the
# key the newest layout gives, none lost or doubled). Prints items moved
# per second measured in this run (the work is in bench/reshard.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (2)
#   BENCH_ROWS             scores loaded (5000, over 5 games)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench reshard

"$PYTHON" bench/reshard.py

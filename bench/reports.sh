#!/usr/bin/env bash
# bench/reports.sh — reports over seed 002's leaderboard (one game's players
# over 10 shards) behind the proxy's latency, one section each:
#   count  count(*) of a game and a player's rank (count above a score):
#          shard_fdw's Select COUNT per shard against boto3's Select COUNT
#          reader (a Query per shard on a thread pool) and against reading
#          every item
#   topn   top-100 with a tie-breaker: items DynamoDB reads per query with
#          the order pushed down (both keys, or the score alone under a
#          linguistic tie-breaker) against an order nothing of which is
#          claimed (every item of the game)
# Prints medians, items and ratios measured in this run (the work is in
# bench/reports.py, a function per section).
#
# Environment (all optional):
#   BENCH_SECTIONS         sections to run, comma-separated (all)
#   BENCH_LATENCY_MS       latency the proxy adds to each request (5)
#   BENCH_PLAYERS          players of the game (3000)
#   BENCH_RUNS             timed runs per method; medians are printed (15)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench reports

"$PYTHON" bench/reports.py

#!/usr/bin/env bash
# bench/cpu.sh — the backend's own CPU per request and per item, against
# DynamoDB Local directly (no proxy, no added latency): the top-100 of the
# leaderboard hashed on player_id over N = 1, 10 and 100 shards (ms per
# statement, µs per shard request and per item), and a whole-table Scan of
# 200-byte items, count(*) and every column converted (µs per item); then the
# kernel CPU per request of a bare client of its own sending the largest
# top-100's shard Queries, the floor under the backend's kernel share. Medians
# of several rounds measured in this run, with the machine's load (the work is
# in bench/cpu.py).
#
# Environment (all optional):
#   BENCH_SHARDS       the shard counts of the top-100, comma-separated (1,10,100)
#   BENCH_SCORES       scores loaded into each leaderboard (20000)
#   BENCH_SCAN_ITEMS   items of the scanned table (20000)
#   BENCH_RUNS         top-100 statements per round (30)
#   BENCH_SCAN_RUNS    Scan statements per round (10)
#   BENCH_ROUNDS       rounds; their median is printed (5)
#   BENCH_PARTS        what to measure, comma-separated (topn,scan,loopback)
#   BENCH_SKIP_BUILD=1 use the extension already installed instead of
#                      building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench cpu

"$PYTHON" bench/cpu.py

#!/usr/bin/env bash
# bench/reports.sh — reports over seed 002's sharded leaderboard (pk =
# {game_id}#{shard}, shard = FNV-1a-32(player_id) mod 10, sk =
# {score:020}#{player_id}), shard_fdw against Python boto3 clients doing the
# same work, every request through the test proxy with the same added
# latency. Each section prints median milliseconds, requests and items read
# per query and ratios measured in this run, then one summary line (the work
# is in bench/reports.py):
#
#   join   a local table of 10, 1,000 and BENCH_BIG_WATCHED watched players
#          joined with the leaderboard on game and player, against boto3
#          sending one Query per player 16 at a time, and boto3 reading the
#          game's 10 shards at once and joining in memory
#
# Environment (all optional):
#   BENCH_SECTIONS         comma-separated sections to run (all)
#   BENCH_LATENCY_MS       latency the proxy adds to each request (5)
#   BENCH_RUNS             timed runs per method and case; medians are printed (5)
#   BENCH_WARMUP           untimed runs before them (1)
#   BENCH_PLAYERS          players of the game the 10 and 1,000 are taken from (3000)
#   BENCH_BIG_WATCHED      players of a second game, all watched in the
#                          largest join (100000)
#   BENCH_LOOKUP_CAP       in the largest join, only this many lookups of
#                          the one-Query-per-player client are timed (each
#                          reads a whole shard), its time scaled up to the
#                          whole join (100)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench reports

"$PYTHON" bench/reports.py

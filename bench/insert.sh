#!/usr/bin/env bash
# bench/insert.sh — rows per second of a 100,000-row load into the leaderboard
# hashed on player_id (pk = {game_id}#{shard}, shard = FNV-1a-32(player_id)
# mod 10, sk = {score:020}#{player_id}): shard_fdw's INSERT ... SELECT and
# COPY FROM STDIN, each with insert_mode 'insert' and 'upsert', against Python
# boto3's Table.batch_writer() run single-threaded as the articles do. Every
# variant writes the same items straight to DynamoDB Local (no proxy in
# between), into a table of its own, and must leave exactly the rows it was
# given. Prints rows/s per variant, each one's ratio to batch_writer measured
# in this run, then one summary line (the work is in bench/insert.py).
#
# Environment (all optional):
#   BENCH_ROWS             rows per load (100000)
#   BENCH_RUNS             timed loads per variant, rounds in shuffled order (2)
#   BENCH_WARMUP_ROWS      rows of an untimed load per variant first (5000)
#   BENCH_BATCH_SIZE       batch_size of the INSERT variants (400, the default)
#   BENCH_LARGE_BATCH      also INSERT with this batch_size; 0 skips (1000)
#   BENCH_PROFILE_ROWS     rows per variant loaded through the test proxy,
#                          untimed, to count requests and requests in
#                          flight; 0 skips (5000)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench insert

# DynamoDB Local's pid lets insert.py read its CPU time; the COPY input is
# written into this run's directory.
BENCH_DDB_PID="$DDB_PID" BENCH_TMP="$RUN_DIR" "$PYTHON" bench/insert.py

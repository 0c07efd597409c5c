#!/usr/bin/env bash
# bench/topn.sh — how long the top-100 takes on a leaderboard hashed on
# player_id: shard_fdw's parallel, merged Query per shard against the same
# requests sent one at a time (max_concurrency 1) and against the Python
# readers of the ordered-sharding article (a boto3 loop over the shards) and
# the time-series article (a boto3 ThreadPoolExecutor scatter-gather), for
# N = 1, 10, 20, 50 and 100 shards, every request through the test proxy with the
# same added latency. Prints median milliseconds and ratios measured in this
# run, then one summary line (the work is in bench/topn.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (10)
#   BENCH_RUNS             timed runs per method and N; medians are printed (20)
#   BENCH_WARMUP           untimed runs before them (3)
#   BENCH_SCORES           scores loaded into each table (20000)
#   BENCH_SHARDS           the shard counts, comma-separated (1,10,20,50,100)
#   BENCH_BED_RUNS         runs of the no-latency measurement of the test
#                          bed's own cost (100)
#   BENCH_MAX_CONCURRENCY  max_concurrency of the server the shard_fdw column
#                          uses (default: the extension's default)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
#   BENCH_DATA_DIR         also write the measurements there as TSV files
#                          (bench/benchdata.py; bench/plots.sh draws them)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench topn

# The proxy's and DynamoDB Local's pids let topn.py read their CPU time.
BENCH_PROXY_PID="$PROXY_PID" BENCH_DDB_PID="$DDB_PID" "$PYTHON" bench/topn.py

#!/usr/bin/env bash
# bench/parallel.sh — Scan throughput with PostgreSQL's parallel workers: a
# count(*)-free aggregate (sum, avg, max) over a whole-table Scan of
# BENCH_ITEMS items with max_parallel_workers_per_gather 0, 2 and 4, against
# DynamoDB Local directly: wall time, rows/s, the ratio to 0 workers, the
# CPU of the leader backend, of its workers and of DynamoDB Local, medians
# measured in this run (the work is in bench/parallel.py).
#
# Environment (all optional):
#   BENCH_ITEMS          items of the table (1000000), written through
#                        shard_fdw; a table already holding them is kept
#   BENCH_WORKERS        the settings of max_parallel_workers_per_gather
#                        (0,2,4)
#   BENCH_RUNS           timed statements per setting; the median is
#                        printed (3)
#   BENCH_MIN_SCAN_SIZE  min_parallel_table_scan_size (1MB): low enough
#                        for the table to earn 4 workers
#   BENCH_SETUP_COST     parallel_setup_cost (1000, PostgreSQL's default)
#   BENCH_ATTEMPT_TIMEOUT_MS  the server's attempt_timeout_ms (120000; its
#                        request_timeout_ms is three times that): DynamoDB
#                        Local answers a large table's Scan pages slowly
#   BENCH_SKIP_BUILD=1   use the extension already installed instead of
#                        building and installing this tree
#   BENCH_DATA_DIR       also write the measurements there as a TSV file
#                        (bench/benchdata.py; bench/plots.sh draws it)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench parallel

BENCH_DDB_PID="$DDB_PID" "$PYTHON" bench/parallel.py

#!/usr/bin/env bash
# bench/timeseries.sh — how long a 24-hour range of the time-series article's
# events takes over hourly buckets: shard_fdw's read (a Query per hour and
# shard, max_concurrency in flight, merged in time order) against the
# article's readers extended to loop over the buckets, every request through
# the test proxy with the same added latency. Two tables: hourly partition
# keys sharded N ways (SENSOR_READING#<hour>#_<shard>, read by the article's
# ThreadPoolExecutor scatter-gather, one bucket after another) and the GSI
# fan-out (<group>#<hour>, read by the article's get_events_for_range, one
# bucket after another). Prints median milliseconds and ratios measured in
# this run, then one summary line (the work is in bench/timeseries.py).
#
# Environment (all optional):
#   BENCH_LATENCY_MS       latency the proxy adds to each request (10)
#   BENCH_RUNS             timed runs per method; medians are printed (10)
#   BENCH_WARMUP           untimed runs before them (2)
#   BENCH_EVENTS_PER_HOUR  events written per hour of the 24 (100)
#   BENCH_SHARDS           shards of the hourly partition keys (4)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench timeseries

"$PYTHON" bench/timeseries.py

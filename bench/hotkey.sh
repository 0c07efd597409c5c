#!/usr/bin/env bash
# bench/hotkey.sh — sustained rows per second into one hot key under a
# per-key write budget B (the test proxy's key_budget): static N = 1,
# static N = 10 and dynamic sharding (from one shard, never told N), each
# for the same time with the same concurrent psql sessions, then static
# N = 1 and dynamic again without a budget: the most the sessions, the
# proxy and DynamoDB Local carry. Prints rows/s and rows/s ÷ B, the dynamic
# key's shard history and final number_of_shards, and the rows lost or
# duplicated (read back and checked: none expected), then one summary line
# (the work is in bench/hotkey.py).
#
# Environment (all optional):
#   BENCH_BUDGET       B: writes per second per partition key value, and the
#                      bucket size (100)
#   BENCH_SECONDS      seconds each variant writes (20)
#   BENCH_SESSIONS     concurrent psql sessions (8)
#   BENCH_CHUNK        rows per INSERT statement (100)
#   BENCH_COOLDOWN_S   cooldown_s of the dynamic table (1)
#   BENCH_SKIP_BUILD=1 use the extension already installed instead of
#                      building and installing this tree
#   BENCH_DATA_DIR     also write the measurements there as TSV files
#                      (bench/benchdata.py; bench/plots.sh draws them)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench hotkey

"$PYTHON" bench/hotkey.py

#!/usr/bin/env bash
# test/demo.sh — the demo command: installs what is missing, builds and
# installs the extension, starts DynamoDB Local and a throwaway PostgreSQL,
# runs test/demo.sql with psql and prints what it shows, then stops
# everything. SHARD_FDW_ENDPOINT points straight at DynamoDB Local here (no
# proxy), so any credentials work.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

[ -f test/demo.sql ] || die "test/demo.sql is missing"

ensure_deps
ensure_dynamodb_local
build_and_install
make_run_dir
start_dynamodb_local
export SHARD_FDW_ENDPOINT="$SHARD_FDW_DIRECT_ENDPOINT"
start_postgres

say "running test/demo.sql"
psql -X -v ON_ERROR_STOP=1 -f test/demo.sql || die "test/demo.sql failed"
say "demo finished"

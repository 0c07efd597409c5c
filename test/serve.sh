#!/usr/bin/env bash
# test/serve.sh [ENV_FILE] — a test bed that stays up: installs what is
# missing, builds and installs the extension, starts DynamoDB Local, the
# proxy and a throwaway PostgreSQL, writes the exports that reach them to
# ENV_FILE (default .cache/serve.env), and keeps everything running until
# interrupted. With it, one iteration is ". ENV_FILE; make install;
# make installcheck" or one scripted test: "python3 test/scripts/test_x.py".
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

env_file="${1:-$CACHE_DIR/serve.env}"
ensure_deps
ensure_dynamodb_local
build_and_install
make_run_dir
start_dynamodb_local
start_proxy
start_postgres
mkdir -p "$(dirname "$env_file")"
{
    for name in PATH PGHOST PGPORT PGUSER PGDATABASE SHARD_FDW_ENDPOINT \
        SHARD_FDW_DIRECT_ENDPOINT SHARD_FDW_PROXY SHARD_FDW_ACCESS_KEY \
        SHARD_FDW_SECRET_KEY SHARD_FDW_REGION; do
        printf 'export %s=%q\n' "$name" "${!name}"
    done
    printf 'export SHARD_FDW_PG_LOG=%q\n' "$RUN_DIR/pg/postgres.log"
} >"$env_file"
say "services up; their settings are in $env_file (source it); Ctrl-C stops them"
while kill -0 "$DDB_PID" 2>/dev/null && kill -0 "$PROXY_PID" 2>/dev/null; do
    sleep 2
done
die "DynamoDB Local or the proxy stopped"

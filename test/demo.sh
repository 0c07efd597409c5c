#!/usr/bin/env bash
# test/demo.sh [--keep | --stop] — the demo command: installs what is
# missing, builds and installs the extension, starts DynamoDB Local and a
# throwaway PostgreSQL, runs test/demo.sql with psql and prints what it
# shows, then stops everything. SHARD_FDW_ENDPOINT points straight at
# DynamoDB Local here (no proxy), so any credentials work.
#
#   --keep  leave both running as a playground: DynamoDB Local on
#           127.0.0.1:8000 and PostgreSQL on 127.0.0.1:5432 (the ports the
#           README's quick start uses), and print the psql command that
#           reaches them; their settings go to .cache/playground.env
#   --stop  stop the playground that --keep left running
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

PLAYGROUND_ENV="$CACHE_DIR/playground.env"
PLAYGROUND_DDB_PORT=8000
PLAYGROUND_PG_PORT=5432

# stop_playground: stop what a --keep run left, from its settings file.
stop_playground() {
    [ -f "$PLAYGROUND_ENV" ] || die "no playground is running (no $PLAYGROUND_ENV)"
    # shellcheck disable=SC1090
    . "$PLAYGROUND_ENV"
    pg_stop
    stop_pid "$DDB_PID" || true
    rm -rf "$RUN_DIR"
    rm -f "$PLAYGROUND_ENV"
    say "playground stopped"
}

# keep_playground: leave the services running, note how to reach and stop
# them, and print both.
keep_playground() {
    trap - EXIT INT TERM
    {
        printf 'RUN_DIR=%q\nPG_DATA=%q\nPG_OS_USER=%q\nDDB_PID=%q\n' \
            "$RUN_DIR" "$PG_DATA" "$PG_OS_USER" "$DDB_PID"
        printf 'export PGHOST=%q PGPORT=%q PGUSER=postgres\n' "$PGHOST" "$PGPORT"
        printf 'export SHARD_FDW_ENDPOINT=%q\n' "$SHARD_FDW_DIRECT_ENDPOINT"
    } >"$PLAYGROUND_ENV"
    say "DynamoDB Local ($SHARD_FDW_DIRECT_ENDPOINT) and PostgreSQL keep running"
    echo
    echo "  connect:  psql -h $PGHOST -p $PGPORT -U postgres"
    echo "  stop:     bash test/demo.sh --stop"
    echo
    echo "The database postgres holds the demo's server ddb and table leaderboard;"
    echo "the README's \"Quick start in psql\" goes on from here."
}

mode="${1:-}"
case "$mode" in
    "") ;;
    --stop) stop_playground; exit 0 ;;
    --keep)
        [ ! -f "$PLAYGROUND_ENV" ] ||
            die "a playground is already running; stop it first: bash test/demo.sh --stop"
        for port in "$PLAYGROUND_DDB_PORT" "$PLAYGROUND_PG_PORT"; do
            port_is_free "$port" || die "port $port on 127.0.0.1 is in use; --keep needs it free"
        done
        ;;
    *) die "usage: bash test/demo.sh [--keep | --stop]" ;;
esac

[ -f test/demo.sql ] || die "test/demo.sql is missing"

ensure_deps
ensure_dynamodb_local
build_and_install
make_run_dir
if [ "$mode" = --keep ]; then
    start_dynamodb_local "$PLAYGROUND_DDB_PORT"
else
    start_dynamodb_local
fi
export SHARD_FDW_ENDPOINT="$SHARD_FDW_DIRECT_ENDPOINT"
if [ "$mode" = --keep ]; then
    start_postgres "$PLAYGROUND_PG_PORT"
else
    start_postgres
fi

say "running test/demo.sql"
psql -X -v ON_ERROR_STOP=1 -f test/demo.sql || die "test/demo.sql failed"
say "demo finished"
if [ "$mode" = --keep ]; then
    keep_playground
fi

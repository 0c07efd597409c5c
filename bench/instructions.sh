#!/usr/bin/env bash
# bench/instructions.sh — the backend's own work per top-100 counted in
# instructions, which neither the machine's load nor DynamoDB Local's JIT
# on the other core changes: the same build and statements give the same
# count to a few parts in ten thousand, where CPU time moves by a third
# from one hour to the next. So it tells whether a change to the request
# path made it cheaper, which bench/cpu.sh cannot below about 10%.
#
# The cluster is restarted under valgrind's callgrind (Debian's valgrind,
# installed when missing); a backend runs 2, then another 12, top-100s of the
# leaderboard hashed on player_id over N shards against DynamoDB Local
# directly, and the difference of their totals over 10 is what one statement
# costs (user space only: the kernel's share, a third of the CPU time, is not
# counted). The tables are those of bench/cpu.py.
#
# Environment (all optional):
#   BENCH_SHARDS       the shard counts, comma-separated (1,10,100)
#   BENCH_SKIP_BUILD=1 use the extension already installed instead of
#                      building and installing this tree
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
DEB_PACKAGES+=(valgrind)
start_bench instructions

say "restarting PostgreSQL under callgrind"
pg_stop
CG_DIR="$RUN_DIR/callgrind"
mkdir -p "$CG_DIR"
is_root && chown "$PG_OS_USER:" "$CG_DIR"
cat >"$RUN_DIR/postgres-callgrind" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$CG_DIR/cg.%p \\
    --log-file=$CG_DIR/valgrind.%p.log "$PG_BIN/postgres" "\$@"
EOF
chmod 755 "$RUN_DIR/postgres-callgrind"
as_pg_user env "${PG_AWS_UNSET[@]}" "${PG_AWS_SET[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" \
    -p "$RUN_DIR/postgres-callgrind" -l "$RUN_DIR/pg/postgres.log" -w -t 300 start >/dev/null ||
    { tail -n 30 "$RUN_DIR/pg/postgres.log" >&2; die "PostgreSQL did not start under callgrind"; }

"$PYTHON" bench/instructions.py "$CG_DIR"

#!/usr/bin/env bash
# test/wire.sh [SECONDS] [SEED] — the wire-fault matrix of
# test/scripts/test_wire.py run for longer than CI runs it: statements of
# every kind through a plain and a TLS wire front (test/proxy/wirefront.py)
# until SECONDS are spent (default 1800), against the test bed that
# `bash test/serve.sh` keeps up (.cache/serve.env is sourced first).  The
# seed (default: the time) is printed first; rerun with it to get the
# same statements and faults.  The output is kept in
# .cache/wire-SEED.out; the last line is "N passed, N failed".
#
# Environment: SHARD_FDW_WIRE_KINDS, SHARD_FDW_WIRE_FAULTS (comma lists
# narrowing the statement and fault kinds), SHARD_FDW_WIRE_TIMEOUT_OPTION and
# SHARD_FDW_WIRE_TIMEOUT_MS (the option bounding an attempt, by default
# attempt_timeout_ms, 2000 ms), SHARD_FDW_WIRE_CREDENTIALS=0
# (skip the credential refresh test), SHARD_FDW_WIRE_CORES=1 (let crashed
# backends of the bed dump core in its data directory: raises the
# postmaster's core size limit with prlimit).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f .cache/serve.env ]; then
    echo "wire.sh: no .cache/serve.env: start the test bed with 'bash test/serve.sh'" >&2
    exit 2
fi
# shellcheck source=/dev/null
. .cache/serve.env

seconds="${1:-${SHARD_FDW_WIRE_SECONDS:-1800}}"
seed="${2:-${SHARD_FDW_TEST_SEED:-$(date +%s)}}"
export SHARD_FDW_WIRE_SECONDS="$seconds" SHARD_FDW_TEST_SEED="$seed"

if [ "${SHARD_FDW_WIRE_CORES:-0}" = 1 ]; then
    data="$(psql -X -A -t -c 'SHOW data_directory')"
    pid="$(head -n 1 "$data/postmaster.pid")"
    prlimit --pid "$pid" --core=unlimited
    echo "wire.sh: backends of postmaster $pid dump core in $data (kernel.core_pattern: $(cat /proc/sys/kernel/core_pattern))"
fi

mkdir -p .cache
out=".cache/wire-$seed.out"
echo "wire.sh: $seconds s of statements, seed $seed, output in $out"
status=0
/usr/bin/python3 test/scripts/test_wire.py 2>&1 | tee "$out" || status=$?
exit "$status"

#!/usr/bin/env bash
# test/sqlsmith.sh — random SQL against every kind of foreign table: makes
# a database of foreign tables of every strategy over DynamoDB Local
# (test/sqlsmith.sql), lets sqlsmith run a bounded number of queries in it,
# and fails when a backend was terminated by a signal, a sanitizer reported
# an error, or shard_fdw raised an internal error (SQLSTATE XX000 from one
# of its own functions) instead of a clean ereport.  Prints the queries run
# and sqlsmith's error summary; the last line is "N passed, N failed".
#
# Needs a running bed: the environment test/serve.sh writes (PGHOST,
# PGPORT, PGUSER, SHARD_FDW_DIRECT_ENDPOINT, SHARD_FDW_ACCESS_KEY,
# SHARD_FDW_SECRET_KEY) and SHARD_FDW_PG_LOG, the server's log.
#   SQLSMITH_QUERIES  queries to run (default 12000, about 2-3 minutes)
#   SQLSMITH_SEED     sqlsmith's seed (default: a fresh one, printed)
#   SQLSMITH_DB       the database to (re)create (default shard_fdw_sqlsmith)
# The database and its DynamoDB tables are dropped when the run passes and
# kept for reproducing a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

for name in PGHOST PGPORT PGUSER SHARD_FDW_DIRECT_ENDPOINT SHARD_FDW_ACCESS_KEY \
    SHARD_FDW_SECRET_KEY SHARD_FDW_PG_LOG; do
    if [ -z "${!name:-}" ]; then
        echo "error: $name is not set: source the env file of test/serve.sh" >&2
        exit 2
    fi
done
command -v sqlsmith >/dev/null || { echo "error: sqlsmith is not installed" >&2; exit 2; }

QUERIES="${SQLSMITH_QUERIES:-12000}"
SEED="${SQLSMITH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
DB="${SQLSMITH_DB:-shard_fdw_sqlsmith}"
OUT="$(mktemp "${TMPDIR:-/tmp}/sqlsmith.XXXXXX")"
SANITIZER_REPORT='ERROR: (Address|Leak)Sanitizer|WARNING: AddressSanitizer|runtime error:'
trap 'rm -f "$OUT" "$OUT.last"' EXIT

echo "==> sqlsmith: seed $SEED, $QUERIES queries, database $DB"
PGOPTIONS="-c client_min_messages=warning" dropdb --if-exists "$DB"
createdb "$DB"
psql -X -q -d "$DB" -o /dev/null -v endpoint="$SHARD_FDW_DIRECT_ENDPOINT" \
    -v akid="$SHARD_FDW_ACCESS_KEY" -v secret="$SHARD_FDW_SECRET_KEY" \
    -f test/sqlsmith.sql
# sqlsmith sets a statement_timeout of its own (1 s); this bounds it where
# it does not.  Verbose errors log the SQLSTATE and the raising function.
psql -X -q -d "$DB" -c "ALTER DATABASE \"$DB\" SET statement_timeout = '5s'" \
    -c "ALTER DATABASE \"$DB\" SET log_error_verbosity = verbose"

offset="$(stat -c %s "$SHARD_FDW_PG_LOG")"
started=$SECONDS
sqlsmith --seed="$SEED" --exclude-catalog --max-queries="$QUERIES" --verbose \
    --target="host=$PGHOST port=$PGPORT dbname=$DB user=$PGUSER" >"$OUT" 2>&1 ||
    echo "sqlsmith exited with status $?"
ran="$(grep -Eo '^queries: [0-9]+' "$OUT" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)"
echo "==> $ran queries in $((SECONDS - started)) s; sqlsmith's errors (count, message),"
echo "    the 20 most frequent and every one that names DynamoDB or shard_fdw:"
# the last report, from its "queries:" line on
awk '/^queries: /{block=""} {block = block $0 "\n"} END{printf "%s", block}' "$OUT" >"$OUT.last"
grep -E '^[0-9]+'$'\t' "$OUT.last" | awk 'NR <= 20 || /DynamoDB|shard_fdw|shard|foreign/' || true
grep -E '^error rate' "$OUT.last" || true
echo "    ($(grep -cE '^[0-9]+'$'\t' "$OUT.last" || true) distinct errors in all)"

failed=0
log_tail() {
    tail -c +"$((offset + 1))" "$SHARD_FDW_PG_LOG"
}
if log_tail | grep -q 'terminated by signal'; then
    echo "FAIL: a backend was terminated by a signal:"
    log_tail | grep -A 30 'terminated by signal' | head -n 60
    failed=1
fi
if log_tail | grep -Eq "$SANITIZER_REPORT"; then
    echo "FAIL: the sanitizers reported errors:"
    log_tail | grep -E -A 30 "$SANITIZER_REPORT" | head -n 60
    failed=1
fi
# XX000 errors with their LOCATION: a function defined under src/ fails the
# run ("ours"), PostgreSQL's own are shown
xx000="$(log_tail | python3 -c '
import os, re, sys
lines = sys.stdin.read().splitlines()
ours = {}
for folder, _, names in os.walk("src"):
    for name in names:
        if name.endswith(".c"):
            with open(os.path.join(folder, name)) as f:
                ours[name] = set(re.findall(r"^(\w+)\(", f.read(), re.M))
for i, line in enumerate(lines):
    m = re.search(r"\b(ERROR|FATAL|PANIC):  XX000: (.*)", line)
    if not m:
        continue
    for later in lines[i + 1:i + 40]:
        loc = re.search(r"LOCATION:  (\w+), ([\w.]+):\d+", later)
        if loc:
            whose = "ours" if loc.group(1) in ours.get(loc.group(2), ()) else "core"
            print(whose, m.group(2) + "  (" + loc.group(1) + ", " + loc.group(2) + ")")
            break
' | sort | uniq -c)"
if grep -q '^ *[0-9]* core ' <<<"$xx000"; then
    echo "internal errors of PostgreSQL itself (count, message, where):"
    grep '^ *[0-9]* core ' <<<"$xx000" | sed 's/ core / /'
fi
if grep -q '^ *[0-9]* ours ' <<<"$xx000"; then
    echo "FAIL: internal errors of shard_fdw (count, message, where):"
    grep '^ *[0-9]* ours ' <<<"$xx000" | sed 's/ ours / /'
    failed=1
fi

if [ "$failed" -eq 0 ]; then
    psql -X -q -d "$DB" -o /dev/null -c "SELECT shard_fdw_request('ddb', 'DeleteTable',
        jsonb_build_object('TableName', name))
      FROM jsonb_array_elements_text(shard_fdw_request('ddb', 'ListTables', '{}')
                                     -> 'TableNames') AS name
     WHERE name LIKE 'sqlsmith\\_%'"
    dropdb "$DB"
    echo "sqlsmith: no crash, no sanitizer report, no internal error (seed $SEED)"
    echo "1 passed, 0 failed"
else
    echo "sqlsmith: reproduce with SQLSMITH_SEED=$SEED SQLSMITH_QUERIES=$QUERIES; database $DB kept"
    echo "0 passed, 1 failed"
    exit 1
fi

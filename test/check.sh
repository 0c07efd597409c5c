#!/usr/bin/env bash
# test/check.sh — the test command: installs what is missing, builds and
# installs the extension, checks that calls between its layers go only
# downward (test/layers.py) and that the release's versions agree
# (test/release.py), runs the C unit tests and the fuzz targets, starts
# DynamoDB Local, the fault-injecting proxy and a throwaway PostgreSQL,
# runs the regression tests (sql/ against expected/), the scripted tests
# (test/scripts/test_*.py) and sqlsmith (test/sqlsmith.sh), repeats the
# regression tests, a shorter sqlsmith run and the connection-fault tests
# with the extension built under AddressSanitizer and
# UndefinedBehaviorSanitizer, reinstalls the normal build, and builds,
# installs and tests the Debian packages of the PostgreSQL versions Debian
# ships (test/versions.sh; CHECK_VERSIONS, by default "15 17 18", empty to
# skip). A stage fails when its server log shows a backend killed by a
# signal. Stops at the first failing stage; the last line is "check: N
# passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

STAGE_TOTAL=12
STAGE_NO=0
STAGE=""
PASSED=0
FAILED=0
SANITIZED_INSTALL=0
SANITIZER_REPORT='ERROR: (Address|Leak)Sanitizer|WARNING: AddressSanitizer|runtime error:'
# What the postmaster logs when a backend dies of a signal (and then resets
# every session of the cluster).
CRASH_REPORT='terminated by signal|was terminated by exception|terminating any other active server processes'

# stage NAME: start the next stage with a one-line header.
stage() {
    STAGE_NO=$((STAGE_NO + 1))
    STAGE="$1"
    echo
    echo "==== [$STAGE_NO/$STAGE_TOTAL] $STAGE"
}

# add_counts PASSED FAILED: add to the totals of the summary line.
add_counts() {
    PASSED=$((PASSED + $1))
    FAILED=$((FAILED + $2))
}

# add_runner_counts FILE: add the last "N passed, N failed" line of FILE;
# fails when there is none.
add_runner_counts() {
    local line passed failed
    line="$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)" || return 1
    read -r passed _ failed _ <<<"$line"
    add_counts "$passed" "$failed"
}

# add_regress_counts FILE: add pg_regress's result ("All N tests passed." or
# "F of N tests failed."); fails when there is none.
add_regress_counts() {
    local numbers failed total
    if numbers="$(grep -Eo 'All [0-9]+ tests passed' "$1" | grep -Eo '[0-9]+')"; then
        add_counts "$numbers" 0
    elif numbers="$(grep -Eo '[0-9]+ of [0-9]+ tests failed' "$1" | tr -cs '0-9' ' ')"; then
        read -r failed total <<<"$numbers"
        add_counts $((total - failed)) "$failed"
    else
        return 1
    fi
}

# unit_tests: the C unit tests (make unit).
unit_tests() {
    local out="$RUN_DIR/unit.out"
    if ! make -s unit 2>&1 | tee "$out"; then
        add_runner_counts "$out" || true
        die "make unit failed"
    fi
    add_runner_counts "$out" || die "make unit printed no \"N passed, N failed\" line"
}

# fuzzing: run each libFuzzer target for FUZZ_SECONDS (default 30; make
# fuzz) and count a target that ran out its time without a finding as one
# passed check.
fuzzing() {
    local out="$RUN_DIR/fuzz.out" targets
    if ! make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}" 2>&1 | tee "$out"; then
        add_counts "$(grep -c '^==> test/fuzz/' "$out")" 1
        die "a fuzz target found a crash (its input is in test/fuzz/found/)"
    fi
    targets="$(grep -c '^==> test/fuzz/' "$out")" || die "make fuzz ran no target"
    add_counts "$targets" 0
}

# installcheck: the regression tests; prints regression.diffs and returns
# non-zero on failure.
installcheck() {
    local out="$RUN_DIR/installcheck.out"
    if ! compgen -G "sql/*.sql" >/dev/null; then
        echo "no sql/*.sql files: no regression tests to run"
        return 0
    fi
    if ! make -s installcheck 2>&1 | tee "$out"; then
        add_regress_counts "$out" || true
        if [ -f regression.diffs ]; then
            echo "---- regression.diffs"
            cat regression.diffs
        fi
        echo "make installcheck failed (regression.diffs above)" >&2
        return 1
    fi
    add_regress_counts "$out" || die "make installcheck printed no pg_regress result"
}

# scripted_tests: run every test/scripts/test_*.py against a freshly reset proxy.
scripted_tests() {
    local script out scripts=()
    mapfile -t scripts < <(compgen -G "test/scripts/test_*.py" | sort)
    for script in "${scripts[@]}"; do
        echo "---- $script"
        curl -s -f -X POST "$SHARD_FDW_PROXY/reset" >/dev/null ||
            die "the proxy does not answer at $SHARD_FDW_PROXY"
        out="$RUN_DIR/$(basename "$script").out"
        if ! "$PYTHON" "$script" 2>&1 | tee "$out"; then
            add_runner_counts "$out" || add_counts 0 1
            die "$script failed"
        fi
        add_runner_counts "$out" || add_counts 1 0
    done
}

# no_backend_crashed: fail when the server log shows a backend that died of
# a signal at any time in this run, printing the lines around it and the
# statement the backend was running.
no_backend_crashed() {
    local log="$RUN_DIR/pg/postgres.log"
    [ -f "$log" ] || return 0
    if grep -Eq "$CRASH_REPORT" "$log"; then
        grep -E -B 3 -A 3 "$CRASH_REPORT" "$log" | head -n 60
        die "a backend was terminated by a signal (server log above)"
    fi
}

# random_sql QUERIES: run test/sqlsmith.sh for QUERIES queries with the seed
# in SQLSMITH_SEED (default 42: the same queries every run; set it to try
# others) and add its count.
random_sql() {
    local out="$RUN_DIR/sqlsmith-$1.out"
    if ! SQLSMITH_QUERIES="$1" SQLSMITH_SEED="${SQLSMITH_SEED:-42}" \
        bash test/sqlsmith.sh 2>&1 | tee "$out"; then
        add_runner_counts "$out" || add_counts 0 1
        return 1
    fi
    add_runner_counts "$out" || die "test/sqlsmith.sh printed no \"N passed, N failed\" line"
}

# build_asan_helper FILE: compile a stub swift_demangle() to preload with
# the sanitizer runtime. A preloaded ASan runtime initialises lazily inside
# libp11-kit's constructor, in newlocale() with the locale lock held; its
# failed dlsym("swift_demangle") then makes dlerror() call gettext, which
# takes that lock again and corrupts it, and PostgreSQL hangs at start.
# With the symbol present, dlsym succeeds and gettext is never reached.
build_asan_helper() {
    gcc -shared -fPIC -x c -o "$1" - <<'EOF'
#include <stddef.h>
#include <stdint.h>
char *swift_demangle(const char *name, size_t length, char *buffer,
                     size_t *buffer_length, uint32_t flags);
/* Demangles nothing: the sanitizers fall back to the plain name. */
char *swift_demangle(const char *name, size_t length, char *buffer,
                     size_t *buffer_length, uint32_t flags)
{
    (void) name; (void) length; (void) buffer; (void) buffer_length; (void) flags;
    return NULL;
}
EOF
}

# sanitizer_reports DIR LOG OFFSET: print the sanitizer reports written as
# files in DIR or into the server log LOG after byte OFFSET; fails if any.
# (A backend's sanitizer runtime may read its options after PostgreSQL has
# overwritten the process environment with its title, and then reports to
# stderr, which is the server log.)
sanitizer_reports() {
    local dir="$1" log="$2" offset="$3" found=0
    if compgen -G "$dir/*" >/dev/null; then
        head -n 60 "$dir"/*
        found=1
    fi
    if tail -c +"$((offset + 1))" "$log" | grep -Eq "$SANITIZER_REPORT"; then
        tail -c +"$((offset + 1))" "$log" | grep -E -A 30 "$SANITIZER_REPORT" | head -n 200
        found=1
    fi
    [ "$found" -eq 0 ]
}

# faults_under_sanitizers: the request path under connection faults with
# the sanitizer build: the lost answers' reproductions and a shorter run of
# the wire-fault matrix (SHARD_FDW_WIRE_ASAN_STATEMENTS, default 80), whose
# own cluster for the credential refresh test is left out.
faults_under_sanitizers() {
    local script out
    for script in test/scripts/test_lost_answers.py test/scripts/test_wire.py; do
        echo "---- $script (sanitizer build)"
        curl -s -f -X POST "$SHARD_FDW_PROXY/reset" >/dev/null ||
            die "the proxy does not answer at $SHARD_FDW_PROXY"
        out="$RUN_DIR/asan-$(basename "$script").out"
        if ! SHARD_FDW_WIRE_STATEMENTS="${SHARD_FDW_WIRE_ASAN_STATEMENTS:-80}" \
            SHARD_FDW_WIRE_CREDENTIALS=0 "$PYTHON" "$script" 2>&1 | tee "$out"; then
            add_runner_counts "$out" || add_counts 0 1
            return 1
        fi
        add_runner_counts "$out" || add_counts 1 0
    done
}

# sanitized_installcheck: rebuild with SANITIZE=1, restart PostgreSQL with
# the sanitizer runtimes preloaded, rerun the regression tests, a shorter
# sqlsmith run and the connection-fault tests, and fail on any sanitizer
# report.
sanitized_installcheck() {
    local reports="$RUN_DIR/sanitizer" helper="$RUN_DIR/swift_demangle_stub.so"
    local log="$RUN_DIR/pg/postgres.log" offset status=0
    mkdir -p "$reports"
    chmod 1777 "$reports"
    build_asan_helper "$helper" || die "cannot build the sanitizer preload helper"
    make -s clean
    SANITIZED_INSTALL=1
    build_and_install SANITIZE=1
    # the library is in shared_preload_libraries: the postmaster loads the
    # sanitizer build too, so every start of it preloads the runtimes
    local runtimes=(
        LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so):$helper"
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$reports/asan"
        UBSAN_OPTIONS="print_stacktrace=1:log_path=$reports/ubsan")
    pg_stop
    offset="$(stat -c %s "$log")"
    pg_start "${runtimes[@]}"
    installcheck || status=1
    [ "$status" -ne 0 ] || random_sql "${SQLSMITH_ASAN_QUERIES:-3000}" || status=1
    [ "$status" -ne 0 ] || faults_under_sanitizers || status=1
    pg_stop
    pg_start "${runtimes[@]}"
    no_backend_crashed
    sanitizer_reports "$reports" "$log" "$offset" ||
        die "the sanitizers reported errors (above; copies in log/)"
    [ "$status" -eq 0 ] || die "make installcheck or sqlsmith failed under the sanitizers"
    echo "no sanitizer reports"
}

# reinstall_normal_build: replace the sanitizer build with the normal one.
reinstall_normal_build() {
    make -s clean
    build_and_install
    SANITIZED_INSTALL=0
}

# packages: the Debian package of each version of CHECK_VERSIONS (default
# "15 17 18"), built with its unit tests, installed and run through the
# regression suite in a chroot of the Debian suite that ships the version
# (test/versions.sh, as root); its logs are kept in log/.
packages() {
    local versions version log status=0 as_root=()
    read -ra versions <<<"${CHECK_VERSIONS-15 17 18}"
    if [ "${#versions[@]}" -eq 0 ]; then
        echo "skipped: CHECK_VERSIONS is empty"
        return 0
    fi
    if ! is_root; then
        sudo -n true 2>/dev/null ||
            die "the chroots need root (or passwordless sudo); CHECK_VERSIONS= skips this stage"
        as_root=(sudo)
    fi
    "${as_root[@]}" env SHARD_FDW_LOG_DIR="$RUN_DIR/versions" \
        bash test/versions.sh "${versions[@]}" || status=$?
    for version in "${versions[@]}"; do
        add_runner_counts "$RUN_DIR/versions/versions-$version-build.log" 2>/dev/null || true
        log="$RUN_DIR/versions/versions-$version-installcheck.log"
        [ -f "$log" ] && add_regress_counts "$log" || add_counts 0 1
    done
    [ "$status" -eq 0 ] || die "a package failed to build, install or pass its tests on PostgreSQL ${versions[*]} (see above)"
}

# report STATUS: the EXIT_HOOK: restore the normal build if a failure left
# the sanitizer build installed, then print the summary line.
report() {
    local status="$1"
    if [ "$SANITIZED_INSTALL" -eq 1 ]; then
        say "reinstalling the normal build"
        reinstall_normal_build >/dev/null 2>&1 || echo "warning: could not reinstall the normal build" >&2
    fi
    echo
    if [ "$status" -ne 0 ]; then
        [ "$FAILED" -gt 0 ] || FAILED=1
        echo "FAILED at stage [$STAGE_NO/$STAGE_TOTAL] $STAGE (logs in log/)"
    else
        echo "all $STAGE_TOTAL stages passed in $SECONDS s"
    fi
    echo "check: $PASSED passed, $FAILED failed"
}

EXIT_HOOK=report
make_run_dir

stage "dependencies"
ensure_deps

stage "DynamoDB Local"
ensure_dynamodb_local

stage "build and install"
build_and_install
"$PYTHON" test/layers.py || die "a call or an include goes up the layers (above)"
"$PYTHON" test/release.py check || die "the release's versions or files disagree (above)"

stage "unit tests"
unit_tests

stage "fuzzing"
fuzzing

stage "services"
start_dynamodb_local
start_proxy
start_postgres

stage "regression tests"
installcheck || die "make installcheck failed"
no_backend_crashed

stage "scripted tests"
scripted_tests
no_backend_crashed

stage "sqlsmith"
random_sql "${SQLSMITH_QUERIES:-6000}" || die "test/sqlsmith.sh failed"
no_backend_crashed

stage "regression tests, sqlsmith and connection faults under ASan and UBSan"
sanitized_installcheck

stage "reinstall the normal build"
reinstall_normal_build
# the postmaster preloads the library: start it again without the runtimes
pg_stop
pg_start

stage "Debian packages on PostgreSQL ${CHECK_VERSIONS-15 17 18}"
packages

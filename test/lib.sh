# test/lib.sh — the test bed's shared functions, sourced by test/check.sh and
# test/demo.sh: install what the tests need, build and install the
# extension, start and stop DynamoDB Local, the fault-injecting proxy and a
# throwaway PostgreSQL cluster, and export how the tests reach them.
#
# Environment exported once the services run:
#   PGHOST=127.0.0.1 PGPORT PGUSER=postgres PGDATABASE=postgres
#   SHARD_FDW_ENDPOINT          DynamoDB as the extension sees it (the proxy)
#   SHARD_FDW_DIRECT_ENDPOINT   DynamoDB Local itself
#   SHARD_FDW_PROXY             the proxy's control API (…/__proxy)
#   SHARD_FDW_ACCESS_KEY, SHARD_FDW_SECRET_KEY   credentials the proxy accepts
#   SHARD_FDW_REGION=us-east-1
#   SHARD_FDW_PG_LOG            the cluster's server log
# shellcheck shell=bash

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"   # another tree for another version or a private copy
PYTHON=/usr/bin/python3
CACHE_DIR="$REPO_ROOT/.cache"
LOG_DIR="${SHARD_FDW_LOG_DIR:-$REPO_ROOT/log}"   # where the services' logs are kept
export PATH="$PG_BIN:$PATH"     # pg_config, psql and pg_regress of PostgreSQL 15

# DynamoDB Local comes from this npm package (its emulator/ folder).
DDB_LOCAL_PACKAGE=amplify-dynamodb-simulator
DDB_LOCAL_VERSION=2.9.30
DDB_LOCAL_INTEGRITY='sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ=='
DDB_LOCAL_DIR="$CACHE_DIR/dynamodb-local-$DDB_LOCAL_VERSION"

# Debian packages the build, the services and these scripts use.
DEB_PACKAGES=(
    build-essential postgresql-15 postgresql-server-dev-15
    libcurl4-openssl-dev libssl-dev openjdk-17-jre-headless
    zlib1g-dev python3 python3-boto3 curl ca-certificates openssl procps iproute2 sqlsmith clang
    libclang-rt-dev
)

# Test credentials the proxy accepts; DynamoDB Local (which the proxy
# forwards them to) takes only letters and digits in an access key id.
TEST_ACCESS_KEY=regressakid
TEST_SECRET_KEY=regresssecret

RUN_DIR=""          # this run's temporary directory (make_run_dir)
DDB_PID=""          # DynamoDB Local, when started
PROXY_PID=""        # the proxy, when started
PG_DATA=""          # the cluster's data directory, when created
PG_OS_USER=""       # the system user the cluster runs as
USED_PORTS=()       # ports handed out by free_port in this run
EXIT_HOOK=""        # a function the caller wants run after cleanup

# say MESSAGE: print a progress line.
say() {
    echo "==> $*"
}

# die MESSAGE: print an error and exit non-zero (cleanup runs from the trap).
die() {
    echo "error: $*" >&2
    exit 1
}

# is_root: whether this shell runs as root.
is_root() {
    [ "$(id -u)" -eq 0 ]
}

# package_installed PKG: whether a Debian package is installed.
package_installed() {
    dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed
}

# missing_packages: print the Debian packages still to install, one a line.
missing_packages() {
    local pkg
    for pkg in "${DEB_PACKAGES[@]}"; do
        package_installed "$pkg" || echo "$pkg"
    done
    # Node.js may come from elsewhere (NodeSource's nodejs bundles npm).
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo nodejs
        echo npm
    fi
}

# disable_main_cluster: keep postgresql-15's install from creating (and
# starting) a "main" cluster; only done before postgresql-common is there.
disable_main_cluster() {
    local conf=/etc/postgresql-common/createcluster.conf
    if ! package_installed postgresql-common && [ ! -e "$conf" ]; then
        mkdir -p "$(dirname "$conf")"
        echo "create_main_cluster = false" >"$conf"
    fi
}

# ensure_deps: install the missing Debian packages (root), or print the
# command that would (not root) and fail.
ensure_deps() {
    local missing
    mapfile -t missing < <(missing_packages)
    if [ "${#missing[@]}" -eq 0 ]; then
        say "dependencies: all installed"
        return 0
    fi
    local install=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
    if ! is_root; then
        echo "missing packages: ${missing[*]}" >&2
        echo "install them as root with:" >&2
        echo "  apt-get update && DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 ${install[*]}" >&2
        exit 1
    fi
    say "installing: ${missing[*]} (apt's output in .cache/apt.log)"
    disable_main_cluster
    export DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1
    mkdir -p "$CACHE_DIR"
    { apt-get update -qq && "${install[@]}"; } >"$CACHE_DIR/apt.log" 2>&1 ||
        { tail -n 40 "$CACHE_DIR/apt.log" >&2; die "apt-get failed (log above)"; }
}

# ensure_dynamodb_local: download the pinned npm package into .cache/ once,
# check its integrity, extract DynamoDB Local from it once.
ensure_dynamodb_local() {
    local tarball="$CACHE_DIR/$DDB_LOCAL_PACKAGE-$DDB_LOCAL_VERSION.tgz"
    if [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ]; then
        say "DynamoDB Local: cached in ${DDB_LOCAL_DIR#"$REPO_ROOT"/}"
        return 0
    fi
    mkdir -p "$CACHE_DIR"
    if [ ! -f "$tarball" ]; then
        say "downloading $DDB_LOCAL_PACKAGE@$DDB_LOCAL_VERSION"
        (cd "$CACHE_DIR" && npm pack --loglevel=warn "$DDB_LOCAL_PACKAGE@$DDB_LOCAL_VERSION" >/dev/null) ||
            die "npm pack $DDB_LOCAL_PACKAGE@$DDB_LOCAL_VERSION failed"
    fi
    if [ "$(sri_sha512 "$tarball")" != "$DDB_LOCAL_INTEGRITY" ]; then
        rm -f "$tarball"
        die "$tarball does not match its pinned integrity; removed it, run again"
    fi
    extract_emulator "$tarball"
}

# sri_sha512 FILE: the file's sha512 as an npm integrity string.
sri_sha512() {
    "$PYTHON" -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$1"
}

# extract_emulator TARBALL: unpack package/emulator/ into DDB_LOCAL_DIR.
extract_emulator() {
    local tmp
    tmp="$(mktemp -d "$CACHE_DIR/extract.XXXXXX")"
    tar -xzf "$1" -C "$tmp" package/emulator || { rm -rf "$tmp"; die "cannot extract $1"; }
    rm -rf "$DDB_LOCAL_DIR"
    mv "$tmp/package/emulator" "$DDB_LOCAL_DIR"
    rm -rf "$tmp"
    [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ] || die "no DynamoDBLocal.jar in $1"
    say "DynamoDB Local: extracted to ${DDB_LOCAL_DIR#"$REPO_ROOT"/}"
}

# build_and_install [MAKE ARGS...]: build the extension and install it into
# PostgreSQL's directories.
# shellcheck disable=SC2120  # the arguments are optional
build_and_install() {
    say "building the extension${1:+ ($*)}"
    make -C "$REPO_ROOT" -s -j"$(nproc)" "$@" || die "the build failed"
    if is_root || [ -w "$("$PG_BIN/pg_config" --pkglibdir)" ]; then
        make -C "$REPO_ROOT" -s install "$@" || die "make install failed"
    elif sudo -n true 2>/dev/null; then
        sudo make -C "$REPO_ROOT" -s install "$@" || die "make install failed"
    else
        die "make install needs root (or passwordless sudo) to write into PostgreSQL's directories"
    fi
}

# make_run_dir: create this run's temporary directory and install the
# cleanup trap.
make_run_dir() {
    RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/shard_fdw.XXXXXX")"
    chmod 755 "$RUN_DIR"
    trap on_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# on_exit: stop everything, then run the caller's EXIT_HOOK with the status.
on_exit() {
    local status=$?
    trap - EXIT INT TERM
    set +e
    stop_all
    if [ -n "$EXIT_HOOK" ]; then
        "$EXIT_HOOK" "$status"
    fi
    exit "$status"
}

# free_port: print a free TCP port on 127.0.0.1 not handed out before.
free_port() {
    local port
    port="$("$PYTHON" - "${USED_PORTS[@]}" <<'EOF'
import random, socket, sys
used = set(sys.argv[1:])
for _ in range(500):
    port = random.randint(20000, 29999)
    if str(port) in used:
        continue
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
else:
    sys.exit("no free port between 20000 and 29999")
EOF
)" || die "no free port"
    USED_PORTS+=("$port")
    echo "$port"
}

# wait_until_up NAME PID LOG CURL-ARGS...: wait until curl succeeds against
# a service started as PID, failing if it dies or takes over a minute.
wait_until_up() {
    local name="$1" pid="$2" log="$3" deadline=$((SECONDS + 60))
    shift 3
    until curl -s -o /dev/null --max-time 2 "$@"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 30 "$log" >&2
            die "$name exited while starting (log above)"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 30 "$log" >&2
            die "$name did not answer within 60 s (log above)"
        fi
        sleep 0.2
    done
}

# port_is_free PORT: whether nothing listens on 127.0.0.1:PORT.
port_is_free() {
    "$PYTHON" -c 'import socket, sys
with socket.socket() as sock:
    sock.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

# start_dynamodb_local [PORT]: start DynamoDB Local in memory on PORT, or
# on a free port, and parse each kind of expression once (test/ddbwarmup.py).
start_dynamodb_local() {
    local port="${1:-}"
    [ -n "$port" ] || port="$(free_port)"
    (cd "$RUN_DIR" && exec java -Djava.library.path="$DDB_LOCAL_DIR/DynamoDBLocal_lib" \
        -jar "$DDB_LOCAL_DIR/DynamoDBLocal.jar" \
        -inMemory -port "$port" -sharedDb -disableTelemetry) \
        >"$RUN_DIR/dynamodb.log" 2>&1 &
    DDB_PID=$!
    wait_until_up "DynamoDB Local" "$DDB_PID" "$RUN_DIR/dynamodb.log" \
        -X POST "http://127.0.0.1:$port/"
    "$PYTHON" "$REPO_ROOT/test/ddbwarmup.py" "http://127.0.0.1:$port" ||
        die "DynamoDB Local failed the warm-up requests of test/ddbwarmup.py (above)"
    export SHARD_FDW_DIRECT_ENDPOINT="http://127.0.0.1:$port"
    export SHARD_FDW_ACCESS_KEY="$TEST_ACCESS_KEY" SHARD_FDW_SECRET_KEY="$TEST_SECRET_KEY"
    export SHARD_FDW_REGION=us-east-1
    say "DynamoDB Local: $SHARD_FDW_DIRECT_ENDPOINT (pid $DDB_PID)"
}

# start_proxy: start the DynamoDB proxy in front of DynamoDB Local.
start_proxy() {
    local port
    port="$(free_port)"
    "$PYTHON" "$REPO_ROOT/test/proxy/ddbproxy.py" --listen-port "$port" \
        --backend "$SHARD_FDW_DIRECT_ENDPOINT" \
        --credentials "$TEST_ACCESS_KEY:$TEST_SECRET_KEY" \
        >"$RUN_DIR/proxy.log" 2>&1 &
    PROXY_PID=$!
    wait_until_up "the proxy" "$PROXY_PID" "$RUN_DIR/proxy.log" \
        -f "http://127.0.0.1:$port/__proxy/stats"
    export SHARD_FDW_ENDPOINT="http://127.0.0.1:$port"
    export SHARD_FDW_PROXY="http://127.0.0.1:$port/__proxy"
    say "proxy: $SHARD_FDW_ENDPOINT (pid $PROXY_PID)"
}

# pg_os_user: the unprivileged system user the cluster runs as: ourselves
# when not root, else "postgres" (created here if the package did not).
pg_os_user() {
    if ! is_root; then
        id -un
    elif id postgres >/dev/null 2>&1; then
        echo postgres
    else
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres
        echo postgres
    fi
}

# as_pg_user CMD...: run a command as the cluster's user, from RUN_DIR.
as_pg_user() {
    if is_root; then
        (cd "$RUN_DIR" && setpriv --reuid="$PG_OS_USER" --regid="$PG_OS_USER" \
            --init-groups -- env HOME="$RUN_DIR" "$@")
    else
        (cd "$RUN_DIR" && "$@")
    fi
}

# write_pg_conf FILE PORT SOCKET-DIR: the test cluster's settings: on
# 127.0.0.1:PORT, its socket in SOCKET-DIR, durability off, UTC, messages
# in English, shard_fdw preloaded (its shard_fdw_stat view counts in
# shared memory; test_stat.py checks a cluster without it).
write_pg_conf() {
    cat >>"$1" <<EOF
listen_addresses = '127.0.0.1'
port = $2
unix_socket_directories = '$3'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
timezone = 'UTC'
log_timezone = 'UTC'
lc_messages = 'C'
log_line_prefix = '%m [%p] %q%u@%d '
shared_preload_libraries = 'shard_fdw'
EOF
}

# start_postgres [PORT]: create a throwaway cluster in RUN_DIR and start it
# on 127.0.0.1 and PORT, or a free port, with its socket in RUN_DIR.
start_postgres() {
    PG_OS_USER="$(pg_os_user)"
    local pgdir="$RUN_DIR/pg" port="${1:-}"
    mkdir -p "$pgdir"
    is_root && chown "$PG_OS_USER:" "$pgdir"
    PG_DATA="$pgdir/data"
    as_pg_user "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 --no-sync >"$RUN_DIR/initdb.log" 2>&1 ||
        { cat "$RUN_DIR/initdb.log" >&2; die "initdb failed"; }
    [ -n "$port" ] || port="$(free_port)"
    write_pg_conf "$PG_DATA/postgresql.conf" "$port" "$pgdir"
    export PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
    pg_start
}

# The test cluster's environment holds none of the AWS credential sources
# and endpoint settings of whoever runs the tests, and looks for no
# instance metadata, so that the default credential chain finds nothing
# (test_credentials.py starts clusters of its own with the sources it
# tests); its region is us-east-1, as AWS_REGION says on an AWS host.
PG_AWS_UNSET=(-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN
    -u AWS_PROFILE -u AWS_WEB_IDENTITY_TOKEN_FILE -u AWS_ROLE_ARN
    -u AWS_ROLE_SESSION_NAME -u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
    -u AWS_CONTAINER_CREDENTIALS_FULL_URI -u AWS_CONTAINER_AUTHORIZATION_TOKEN
    -u AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE -u AWS_EC2_METADATA_SERVICE_ENDPOINT
    -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_STS -u AWS_ENDPOINT_URL_DYNAMODB
    -u AWS_DEFAULT_REGION -u AWS_USE_FIPS_ENDPOINT -u AWS_USE_DUALSTACK_ENDPOINT
    -u AWS_IGNORE_CONFIGURED_ENDPOINT_URLS)
PG_AWS_SET=(AWS_SHARED_CREDENTIALS_FILE=/nonexistent/.aws/credentials
    AWS_CONFIG_FILE=/nonexistent/.aws/config AWS_EC2_METADATA_DISABLED=true
    AWS_REGION=us-east-1)

# pg_start [VAR=VALUE...]: start the cluster, the assignments in the
# server's environment (e.g. LD_PRELOAD for the sanitizer run).
# shellcheck disable=SC2120  # the arguments are optional
pg_start() {
    as_pg_user env "${PG_AWS_UNSET[@]}" "${PG_AWS_SET[@]}" "$@" "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$RUN_DIR/pg/postgres.log" \
        -w -t 60 start >/dev/null ||
        { tail -n 30 "$RUN_DIR/pg/postgres.log" >&2; die "PostgreSQL did not start (log above)"; }
    export SHARD_FDW_PG_LOG="$RUN_DIR/pg/postgres.log"
    say "PostgreSQL: $PGHOST:$PGPORT as $PG_OS_USER${1:+ (with $*)}"
}

# pg_stop: stop the cluster (fast shutdown; killed if it hangs).
pg_stop() {
    [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ] || return 0
    if ! as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null; then
        local pid
        pid="$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null)"
        [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    fi
}

# stop_pid PID: stop a process this script started, TERM then KILL.
stop_pid() {
    local pid="$1" waited=0
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# save_logs: copy this run's logs and test output to log/ in the repo.
save_logs() {
    [ -n "$RUN_DIR" ] && [ -d "$RUN_DIR" ] || return 0
    { rm -rf "$LOG_DIR" && mkdir -p "$LOG_DIR"; } 2>/dev/null || return 0
    find "$RUN_DIR" -maxdepth 3 -type f \( -name '*.log' -o -name '*.out' -o -name 'asan.*' -o -name 'ubsan.*' \) \
        -exec cp {} "$LOG_DIR/" \; 2>/dev/null
}

# stop_all: stop whatever was started, keep the logs, remove RUN_DIR.
stop_all() {
    if [ -n "$PG_DATA$PROXY_PID$DDB_PID" ]; then
        say "stopping services (logs in ${LOG_DIR#"$REPO_ROOT"/}/)"
    fi
    pg_stop
    stop_pid "$PROXY_PID"
    stop_pid "$DDB_PID"
    PG_DATA="" PROXY_PID="" DDB_PID=""
    save_logs
    if [ -n "$RUN_DIR" ]; then
        rm -rf "$RUN_DIR"
        RUN_DIR=""
    fi
}

# start_bench NAME: what every bench/ script needs before it measures:
# the dependencies, DynamoDB Local, the extension (built and installed from
# this tree unless BENCH_SKIP_BUILD=1), the proxy and a throwaway cluster,
# all stopped by the exit trap; service logs go to bench/log/NAME.
start_bench() {
    LOG_DIR="$REPO_ROOT/bench/log/$1"
    ensure_deps
    ensure_dynamodb_local
    if [ "${BENCH_SKIP_BUILD:-0}" = 1 ]; then
        say "using the installed extension ($(pg_config --pkglibdir)/shard_fdw.so)"
    else
        build_and_install
    fi
    make_run_dir
    start_dynamodb_local
    start_proxy
    start_postgres
}

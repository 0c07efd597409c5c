#!/usr/bin/env bash
# test/versions.sh — the regression suite on each PostgreSQL version Debian
# ships: 15 (Debian 12 "bookworm"), 17 (Debian 13 "trixie") and 18 (Debian
# testing "forky").  For each version, a minimal chroot of its suite (made
# with debootstrap, cached in .cache/) gets PostgreSQL N and the build
# dependencies from Debian's archive, builds the extension from this work
# tree with -Wall -Wextra -Werror, starts a cluster and runs `make
# installcheck` in it.  DynamoDB Local and the test proxy run once, on this
# machine (the chroots share its loopback network), as test/check.sh runs
# them; run test/check.sh once first, or let its deps stage install Java,
# Node and DynamoDB Local.
#
# Usage (as root): bash test/versions.sh [VERSION...]   (default: 15 17 18)
# Prints "versions: 15 PASS, 17 PASS, 18 PASS"; logs in log/versions-N-*.log.
# MIRROR=URL overrides the Debian mirror read from /etc/apt/sources*.
set -euo pipefail
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/chroot.sh
. "$REPO_ROOT/test/chroot.sh"

SRC_IN_CHROOT=/root/shard_fdw
PG_IN_CHROOT=/var/tmp/pg          # the cluster's directory in the chroot
CHROOT_PACKAGES=(
    build-essential libcurl4-openssl-dev libssl-dev zlib1g-dev
    curl python3 ca-certificates procps
)
RESULTS=()
CHROOT_PGPORT=""                  # the chroot cluster's port, once it runs

# suite_of VERSION: the Debian suite that ships PostgreSQL VERSION.
suite_of() {
    case "$1" in
        15) echo bookworm ;;
        17) echo trixie ;;
        18) echo forky ;;
        *) die "no Debian suite known for PostgreSQL $1 (15, 17 or 18)" ;;
    esac
}

# install_postgres VERSION: PostgreSQL VERSION, its server headers and the
# build dependencies, from the suite's archive.
install_postgres() {
    local version="$1"
    say "installing PostgreSQL $version and the build dependencies in the $SUITE chroot"
    in_chroot apt-get update -q >/dev/null || die "apt-get update failed in the chroot"
    in_chroot apt-get install -y -q --no-install-recommends \
        "postgresql-$version" "postgresql-server-dev-$version" "${CHROOT_PACKAGES[@]}" \
        >"$(vlog "$version" apt)" 2>&1 ||
        { tail -n 20 "$(vlog "$version" apt)" >&2; die "apt-get install failed in the chroot"; }
}

# copy_work_tree: this work tree's files (tracked, and untracked ones git
# does not ignore) into the chroot.
copy_work_tree() {
    mkdir -p "$ROOT$SRC_IN_CHROOT"
    git -C "$REPO_ROOT" ls-files -z --cached --others --exclude-standard |
        tar -C "$REPO_ROOT" --null -T - --ignore-failed-read -cf - 2>/dev/null |
        tar -C "$ROOT$SRC_IN_CHROOT" -xf -
}

# in_chroot_pg VERSION CMD...: run a command in the chroot with
# PostgreSQL VERSION's programs first on PATH and the test bed's settings.
in_chroot_pg() {
    local version="$1"
    shift
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH="/usr/lib/postgresql/$version/bin:$CHROOT_PATH" \
        PGHOST=127.0.0.1 PGPORT="$CHROOT_PGPORT" PGUSER=postgres PGDATABASE=postgres \
        SHARD_FDW_ENDPOINT="$SHARD_FDW_ENDPOINT" SHARD_FDW_PROXY="$SHARD_FDW_PROXY" \
        SHARD_FDW_DIRECT_ENDPOINT="$SHARD_FDW_DIRECT_ENDPOINT" \
        SHARD_FDW_ACCESS_KEY="$SHARD_FDW_ACCESS_KEY" SHARD_FDW_SECRET_KEY="$SHARD_FDW_SECRET_KEY" \
        SHARD_FDW_REGION="$SHARD_FDW_REGION" "$@"
}

# as_postgres_in_chroot VERSION CMD...: in_chroot_pg as the chroot's
# postgres user.
as_postgres_in_chroot() {
    local version="$1"
    shift
    in_chroot_pg "$version" setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
}

# start_chroot_postgres VERSION: a throwaway cluster of VERSION in the
# chroot, on 127.0.0.1 and a free port, configured as test/lib.sh's
# (PG_AWS_SET: no AWS credential source in its environment).
start_chroot_postgres() {
    local version="$1"
    CHROOT_PGPORT="$(free_port)"
    mkdir -p "$ROOT$PG_IN_CHROOT"
    in_chroot chown postgres: "$PG_IN_CHROOT"
    as_postgres_in_chroot "$version" initdb -D "$PG_IN_CHROOT/data" -U postgres \
        --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync \
        >"$(vlog "$version" initdb)" 2>&1 || die "initdb failed (log/versions-$version-initdb.log)"
    write_pg_conf "$ROOT$PG_IN_CHROOT/data/postgresql.conf" "$CHROOT_PGPORT" "$PG_IN_CHROOT"
    as_postgres_in_chroot "$version" env "${PG_AWS_SET[@]}" pg_ctl -D "$PG_IN_CHROOT/data" \
        -l "$PG_IN_CHROOT/postgres.log" -w -t 60 start >/dev/null ||
        { tail -n 30 "$ROOT$PG_IN_CHROOT/postgres.log" >&2; die "PostgreSQL $version did not start"; }
    say "PostgreSQL $version in the chroot: 127.0.0.1:$CHROOT_PGPORT"
}

# vlog VERSION NAME: the log file NAME of VERSION's run, kept in log/ as
# versions-VERSION-NAME.log when the run ends (test/lib.sh's save_logs).
vlog() {
    echo "$RUN_DIR/versions-$1-$2.log"
}

# keep_logs VERSION: the cluster's log and pg_regress's output, kept.
keep_logs() {
    local version="$1"
    cp "$ROOT$PG_IN_CHROOT/postgres.log" "$(vlog "$version" postgres)" 2>/dev/null || true
    cp "$ROOT$SRC_IN_CHROOT/regression.diffs" "$(vlog "$version" regression.diffs)" 2>/dev/null || true
}

# run_version VERSION: build and run the regression suite on VERSION;
# returns its status.
run_version() {
    local version="$1" status=0
    use_suite "$(suite_of "$version")"
    make_rootfs
    configure_rootfs
    mount_system
    install_postgres "$version"
    copy_work_tree
    say "building the extension against PostgreSQL $version"
    in_chroot_pg "$version" make -C "$SRC_IN_CHROOT" -s -j"$(nproc)" \
        >"$(vlog "$version" build)" 2>&1 &&
        in_chroot_pg "$version" make -C "$SRC_IN_CHROOT" -s install \
            >>"$(vlog "$version" build)" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        tail -n 30 "$(vlog "$version" build)" >&2
        remove_chroot
        return "$status"
    fi
    start_chroot_postgres "$version"
    say "running the regression suite on PostgreSQL $version"
    in_chroot_pg "$version" make -C "$SRC_IN_CHROOT" -s installcheck \
        2>&1 | tee "$(vlog "$version" installcheck)" || status=$?
    keep_logs "$version"
    as_postgres_in_chroot "$version" pg_ctl -D "$PG_IN_CHROOT/data" -m fast -w stop >/dev/null || true
    remove_chroot
    return "$status"
}

# versions_exit STATUS: remove a chroot left by an interruption (EXIT_HOOK
# of test/lib.sh, after the services stop).
versions_exit() {
    set +e
    remove_chroot
}

main() {
    local versions=("$@") version
    [ "${#versions[@]}" -gt 0 ] || versions=(15 17 18)
    is_root || die "run this as root (debootstrap, mount and chroot need it)"
    [ -f "$DDB_LOCAL_DIR/DynamoDBLocal.jar" ] ||
        die "DynamoDB Local is not in .cache/: run bash test/check.sh once first"
    make_run_dir
    EXIT_HOOK=versions_exit
    start_dynamodb_local
    start_proxy
    for version in "${versions[@]}"; do
        if run_version "$version"; then
            RESULTS+=("$version PASS")
        else
            RESULTS+=("$version FAIL")
        fi
    done
    local IFS=,
    echo "versions:${RESULTS[*]/#/ }"
    [[ "${RESULTS[*]}" != *FAIL* ]]
}

main "$@"

#!/usr/bin/env bash
# test/versions.sh — the Debian packages, built, installed and tested on
# each PostgreSQL version Debian ships: 15 (Debian 12 "bookworm"), 17
# (Debian 13 "trixie") and 18 (Debian testing "forky").  For each version,
# a minimal chroot of its suite (made with debootstrap, cached in .cache/)
# gets the release tarball of this work tree (test/release.py: the tree
# less .git and what .gitignore names, no git needed) and the build
# dependencies debian/control names (apt-get build-dep); dpkg-buildpackage
# builds postgresql-N-shard-fdw (-Wall -Wextra -Werror, and the unit tests);
# `apt install ./postgresql-N-shard-fdw_*.deb` installs it, as the README
# says; and the package's test, debian/tests/installcheck (the regression
# suite against the installed package, in a cluster of pg_virtualenv's),
# runs in a fresh copy of the sources with its dependencies installed, as
# autopkgtest runs it.  DynamoDB Local and the test proxy run once, on this
# machine (the chroots share its loopback network), as test/check.sh runs
# them; run test/check.sh once first, or let its deps stage install Java,
# Node and DynamoDB Local.
#
# Usage (as root): bash test/versions.sh [VERSION...]   (default: 15 17 18)
# Prints "versions: 15 PASS, 17 PASS, 18 PASS"; logs in log/versions-N-*.log
# (build: dpkg-buildpackage, install: apt, installcheck: the package's test).
# MIRROR=URL overrides the Debian mirror read from /etc/apt/sources*.
set -euo pipefail
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/chroot.sh
. "$REPO_ROOT/test/chroot.sh"

BUILD_IN_CHROOT=/root/build       # the sources the package is built from
TEST_IN_CHROOT=/root/test         # a fresh copy the installed package is tested from
RESULTS=()
TARBALL=""                        # the release tarball, once made
SOURCE_DIR=""                     # its top directory's name

# suite_of VERSION: the Debian suite that ships PostgreSQL VERSION.
suite_of() {
    case "$1" in
        15) echo bookworm ;;
        17) echo trixie ;;
        18) echo forky ;;
        *) die "no Debian suite known for PostgreSQL $1 (15, 17 or 18)" ;;
    esac
}

# vlog VERSION NAME: the log file NAME of VERSION's run, kept in log/ as
# versions-VERSION-NAME.log when the run ends (test/lib.sh's save_logs).
vlog() {
    echo "$RUN_DIR/versions-$1-$2.log"
}

# make_tarball: the release tarball of this work tree, in RUN_DIR.
make_tarball() {
    TARBALL="$("$PYTHON" "$REPO_ROOT/test/release.py" tarball "$RUN_DIR" | tail -n 1)" ||
        die "test/release.py could not make the release tarball"
    SOURCE_DIR="$(basename "$TARBALL" .tar.gz)"
    say "release tarball: $(basename "$TARBALL")"
}

# unpack DIR: the release tarball unpacked into DIR of the chroot.
unpack() {
    mkdir -p "$ROOT$1"
    tar -xzf "$TARBALL" -C "$ROOT$1"
}

# in_source DIR VERSION NAME CMD...: run a shell command in DIR/SOURCE_DIR
# of the chroot, its output in VERSION's log NAME; on failure, the log's
# tail is shown.
in_source() {
    local dir="$1/$SOURCE_DIR" version="$2" name="$3"
    shift 3
    in_chroot sh -c "cd $dir && $*" >>"$(vlog "$version" "$name")" 2>&1 ||
        { tail -n 40 "$(vlog "$version" "$name")" >&2; return 1; }
}

# test_depends: the packages debian/tests/control names besides the
# package under test (@), one a line.
test_depends() {
    sed -n '/^Depends:/,/^[A-Z]/p' "$ROOT$TEST_IN_CHROOT/$SOURCE_DIR/debian/tests/control" |
        sed -e 's/^Depends://' -e '/^[A-Z]/d' | tr ',' '\n' | tr -d ' ' | grep -v -e '^@$' -e '^$'
}

# build_package VERSION: postgresql-VERSION-shard-fdw built in the chroot
# from the tarball, with debian/control made for the suite's PostgreSQL.
build_package() {
    local version="$1"
    say "building postgresql-$version-shard-fdw in the $SUITE chroot"
    unpack "$BUILD_IN_CHROOT"
    in_chroot apt-get update -q >"$(vlog "$version" build)" 2>&1 ||
        die "apt-get update failed in the chroot"
    in_source "$BUILD_IN_CHROOT" "$version" build \
        apt-get build-dep -y -q --no-install-recommends ./ || return 1
    in_source "$BUILD_IN_CHROOT" "$version" build pg_buildext updatecontrol || return 1
    in_source "$BUILD_IN_CHROOT" "$version" build \
        dpkg-buildpackage -b -us -uc -j"$(nproc)" || return 1
    compgen -G "$ROOT$BUILD_IN_CHROOT/postgresql-$version-shard-fdw_*.deb" >/dev/null ||
        { echo "no postgresql-$version-shard-fdw package was built" >&2; return 1; }
}

# install_package VERSION: the README's apt install of the package built.
install_package() {
    local version="$1"
    say "apt install ./postgresql-$version-shard-fdw_*.deb"
    in_chroot sh -c "cd $BUILD_IN_CHROOT && apt install -y -q ./postgresql-$version-shard-fdw_*.deb" \
        >"$(vlog "$version" install)" 2>&1 ||
        { tail -n 30 "$(vlog "$version" install)" >&2; return 1; }
    in_chroot dpkg-query -W "postgresql-$version-shard-fdw" >>"$(vlog "$version" install)"
}

# test_package VERSION: debian/tests/installcheck from a fresh copy of the
# sources, its dependencies installed, against the test bed's DynamoDB.
test_package() {
    local version="$1" depends status=0
    unpack "$TEST_IN_CHROOT"
    mapfile -t depends < <(test_depends)
    in_chroot apt-get install -y -q --no-install-recommends "${depends[@]}" \
        >>"$(vlog "$version" install)" 2>&1 ||
        { tail -n 30 "$(vlog "$version" install)" >&2; return 1; }
    mkdir -p "$ROOT/tmp/autopkgtest"
    say "running the package's test (the regression suite) on PostgreSQL $version"
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH="$CHROOT_PATH" \
        AUTOPKGTEST_TMP=/tmp/autopkgtest PGPORT="$(free_port)" \
        SHARD_FDW_ENDPOINT="$SHARD_FDW_ENDPOINT" SHARD_FDW_PROXY="$SHARD_FDW_PROXY" \
        SHARD_FDW_DIRECT_ENDPOINT="$SHARD_FDW_DIRECT_ENDPOINT" \
        SHARD_FDW_ACCESS_KEY="$SHARD_FDW_ACCESS_KEY" SHARD_FDW_SECRET_KEY="$SHARD_FDW_SECRET_KEY" \
        SHARD_FDW_REGION="$SHARD_FDW_REGION" \
        sh -c "cd $TEST_IN_CHROOT/$SOURCE_DIR && debian/tests/installcheck" \
        2>&1 | tee "$(vlog "$version" installcheck)" || status=$?
    return "$status"
}

# run_version VERSION: build, install and test the package of VERSION;
# returns its status.
run_version() {
    local version="$1" status=0
    use_suite "$(suite_of "$version")"
    make_rootfs
    configure_rootfs
    mount_system
    build_package "$version" && install_package "$version" && test_package "$version" ||
        status=$?
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
    make_tarball
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

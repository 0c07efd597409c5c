#!/usr/bin/env bash
# test/fresh-debian.sh — the newcomer check: in a minimal Debian 12 made with
# debootstrap (its root filesystem cached in .cache/), install git and only
# git, clone this repository, run the README's two commands
# (bash test/demo.sh, then bash test/check.sh) and its quick start (the
# playground of bash test/demo.sh --keep, the SQL typed into psql) and
# report pass or fail.  With --tarball, the same from the release tarball
# of this work tree (test/release.py) unpacked, with no git in the chroot
# before or after.
# Everything mounted is unmounted and the chroot removed on exit.
#
# Usage (as root): bash test/fresh-debian.sh [--tarball] [--worktree] [--setup-only] [--keep]
#   --tarball     the release tarball instead of a clone, and no git at all
#   --worktree    also copy uncommitted changes and untracked files into the clone
#   --setup-only  stop after the clone or the unpacking (checks the chroot part alone)
#   --keep        leave the chroot in place (it is printed)
# MIRROR=URL overrides the Debian mirror read from /etc/apt/sources*.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO_ROOT="$(pwd)"

# shellcheck source=test/chroot.sh
. "$REPO_ROOT/test/chroot.sh"
use_suite bookworm

LOG_DIR="$REPO_ROOT/log"
SRC_IN_CHROOT=/mnt/shard_fdw-src
CLONE_IN_CHROOT=/root/shard_fdw

# The README's quick start as a newcomer follows it: the playground, the
# SQL blocks typed into the psql it prints, then the playground stopped.
QUICK_START='bash test/demo.sh --keep &&
  { python3 test/quickstart.py | psql -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 5432 -U postgres -f -;
    status=$?; bash test/demo.sh --stop; exit $status; }'

FROM_TARBALL=0
WITH_WORKTREE=0
SETUP_ONLY=0
KEEP=0

# say MESSAGE: print a progress line.
say() {
    echo "==> $*"
}

# die MESSAGE: print an error and exit non-zero (cleanup runs from the trap).
die() {
    echo "error: $*" >&2
    exit 1
}

# parse_args ARGS...: read the options.
parse_args() {
    local arg
    for arg in "$@"; do
        case "$arg" in
            --tarball) FROM_TARBALL=1 ;;
            --worktree) WITH_WORKTREE=1 ;;
            --setup-only) SETUP_ONLY=1 ;;
            --keep) KEEP=1 ;;
            *) die "unknown option $arg (see the comment at the top of $0)" ;;
        esac
    done
    [ "$FROM_TARBALL" -eq 0 ] || [ "$WITH_WORKTREE" -eq 0 ] ||
        die "--worktree copies into a clone; the tarball holds the work tree already"
}

# mount_all: the system's mounts (mount_system) and this repository
# read-only.
mount_all() {
    mount_system
    mount_at "$SRC_IN_CHROOT" --bind "$REPO_ROOT"
    mount -o remount,bind,ro "$ROOT$SRC_IN_CHROOT"
}

# install_git: git, and nothing else, from Debian's packages.
install_git() {
    say "installing git in the chroot"
    in_chroot apt-get update -q >/dev/null || die "apt-get update failed in the chroot"
    in_chroot apt-get install -y -q --no-install-recommends git >/dev/null ||
        die "installing git failed in the chroot"
}

# clone_repo: clone the bind-mounted repository, plus the work tree's
# uncommitted state with --worktree.
clone_repo() {
    say "cloning the repository to $CLONE_IN_CHROOT"
    in_chroot git config --global --add safe.directory '*'
    in_chroot git clone -q "$SRC_IN_CHROOT" "$CLONE_IN_CHROOT" 2>&1 | grep -v 'empty repository' || true
    [ -d "$ROOT$CLONE_IN_CHROOT/.git" ] || die "git clone failed"
    if [ "$WITH_WORKTREE" -eq 1 ]; then
        say "copying uncommitted changes and untracked files"
        git -C "$REPO_ROOT" ls-files -z --cached --others --exclude-standard |
            tar -C "$REPO_ROOT" --null -T - --ignore-failed-read -cf - 2>/dev/null |
            tar -C "$ROOT$CLONE_IN_CHROOT" -xf -
        git -C "$REPO_ROOT" ls-files -z --deleted |
            (cd "$ROOT$CLONE_IN_CHROOT" && xargs -0 -r rm -f --)
    fi
}

# unpack_tarball: the release tarball of this work tree, made here and
# unpacked in the chroot; CLONE_IN_CHROOT becomes its top directory.
unpack_tarball() {
    local tmp tarball
    tmp="$(mktemp -d)"
    tarball="$(python3 "$REPO_ROOT/test/release.py" tarball "$tmp" | tail -n 1)" ||
        { rm -rf "$tmp"; die "test/release.py could not make the release tarball"; }
    CLONE_IN_CHROOT="/root/$(basename "$tarball" .tar.gz)"
    say "unpacking $(basename "$tarball") to $CLONE_IN_CHROOT"
    tar -xzf "$tarball" -C "$ROOT/root"
    rm -rf "$tmp"
}

# no_git WHEN: fail unless the chroot is still without git.
no_git() {
    ! in_chroot sh -c 'command -v git' >/dev/null ||
        die "git is installed in the chroot $1"
}

# run_command NAME COMMAND: run a README command in the clone, its output
# shown and kept in log/fresh-debian-NAME.log and the services' logs in
# log/fresh-debian-NAME/; returns its status.
run_command() {
    local name="$1" command="$2" log="$LOG_DIR/fresh-debian-$1.log" status=0
    say "running '$command' in the chroot (log: ${log#"$REPO_ROOT"/})"
    mkdir -p "$LOG_DIR"
    in_chroot bash -c "cd $CLONE_IN_CHROOT && $command" 2>&1 | tee "$log" || status=$?
    rm -rf "$LOG_DIR/fresh-debian-$name"
    if [ -d "$ROOT$CLONE_IN_CHROOT/log" ]; then
        cp -r "$ROOT$CLONE_IN_CHROOT/log" "$LOG_DIR/fresh-debian-$name"
    fi
    return "$status"
}

# cleanup: stop, unmount, and remove the chroot unless --keep or
# something is still mounted under it.
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    set +e
    if [ "$KEEP" -eq 1 ] && [ -n "$ROOT" ]; then
        stop_chroot_processes
        unmount_all
        say "kept the chroot in $ROOT"
    else
        remove_chroot
    fi
    exit "$status"
}

# main ARGS...: build the chroot, clone, run both commands, report.
main() {
    parse_args "$@"
    [ "$(id -u)" -eq 0 ] || die "run this as root (debootstrap, mount and chroot need it)"
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    make_rootfs
    configure_rootfs
    if [ "$FROM_TARBALL" -eq 1 ]; then
        mount_system
        no_git "as debootstrap made it"
        unpack_tarball
    else
        mount_all
        install_git
        clone_repo
    fi
    if [ "$SETUP_ONLY" -eq 1 ]; then
        [ "$FROM_TARBALL" -eq 1 ] || in_chroot git -C "$CLONE_IN_CHROOT" log --oneline -1 2>/dev/null || true
        say "setup only: chroot ready, sources at $CLONE_IN_CHROOT"
        return 0
    fi
    local demo=FAIL quick=FAIL check=FAIL
    run_command demo "bash test/demo.sh" && demo=PASS
    run_command quickstart "$QUICK_START" && quick=PASS
    run_command check "bash test/check.sh" && check=PASS
    [ "$FROM_TARBALL" -eq 0 ] || no_git "after the tests"
    echo "fresh-debian: demo $demo, quick start $quick, check $check"
    [ "$demo" = PASS ] && [ "$quick" = PASS ] && [ "$check" = PASS ]
}

main "$@"

#!/usr/bin/env bash
# test/fresh-debian.sh — the newcomer check: in a minimal Debian 12 made with
# debootstrap (its root filesystem cached in .cache/), install git and only
# git, clone this repository, run the README's two commands
# (bash test/demo.sh, then bash test/check.sh) and report pass or fail.
# Everything mounted is unmounted and the chroot removed on exit.
#
# Usage (as root): bash test/fresh-debian.sh [--worktree] [--setup-only] [--keep]
#   --worktree    also copy uncommitted changes and untracked files into the clone
#   --setup-only  stop after the clone (checks the chroot part alone)
#   --keep        leave the chroot in place (it is printed)
# MIRROR=URL overrides the Debian mirror read from /etc/apt/sources*.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO_ROOT="$(pwd)"

SUITE=bookworm
ROOTFS_TARBALL="$REPO_ROOT/.cache/debian-$SUITE-minbase.tar.gz"
LOG_DIR="$REPO_ROOT/log"
SRC_IN_CHROOT=/mnt/shard_fdw-src
CLONE_IN_CHROOT=/root/shard_fdw
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

ROOT=""            # the chroot directory, once made
MOUNTS=()          # mount points under ROOT, in the order they were mounted
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
            --worktree) WITH_WORKTREE=1 ;;
            --setup-only) SETUP_ONLY=1 ;;
            --keep) KEEP=1 ;;
            *) die "unknown option $arg (see the comment at the top of $0)" ;;
        esac
    done
}

# apt_uri PATTERN: the first URI in this machine's apt sources whose path
# ends with PATTERN (e.g. /debian), or nothing.
apt_uri() {
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -E '^[[:space:]]*(deb|URIs:)' | grep -oE 'https?://[^][ ]+' |
        sed 's|/*$||' | grep -E "$1\$" | head -n 1 || true
}

# mirror: the Debian mirror to bootstrap from.
mirror() {
    local uri="${MIRROR:-$(apt_uri /debian)}"
    echo "${uri:-http://deb.debian.org/debian}"
}

# security_mirror: the Debian security mirror.
security_mirror() {
    local uri
    uri="$(apt_uri /debian-security)"
    echo "${uri:-http://deb.debian.org/debian-security}"
}

# make_rootfs: a fresh minbase root filesystem in ROOT, from the cached
# tarball when there is one.
make_rootfs() {
    ROOT="$(realpath "$(mktemp -d /var/tmp/shard_fdw-fresh.XXXXXX)")"
    chmod 755 "$ROOT"
    if [ -f "$ROOTFS_TARBALL" ]; then
        say "unpacking the cached $SUITE root filesystem into $ROOT"
        tar -xzpf "$ROOTFS_TARBALL" --numeric-owner -C "$ROOT"
        return 0
    fi
    command -v debootstrap >/dev/null || apt-get install -y debootstrap
    say "debootstrap --variant=minbase $SUITE from $(mirror) into $ROOT"
    debootstrap --variant=minbase "$SUITE" "$ROOT" "$(mirror)" >"$ROOT.debootstrap.log" 2>&1 ||
        { tail -n 20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed"; }
    rm -f "$ROOT.debootstrap.log"
    mkdir -p "$(dirname "$ROOTFS_TARBALL")"
    tar -czf "$ROOTFS_TARBALL.tmp" --numeric-owner -C "$ROOT" .
    mv "$ROOTFS_TARBALL.tmp" "$ROOTFS_TARBALL"
    say "cached the root filesystem in ${ROOTFS_TARBALL#"$REPO_ROOT"/}"
}

# configure_rootfs: apt sources, name resolution, this machine's local CA
# certificates (a network that inspects HTTPS needs them; the
# ca-certificates package adds them to the chroot's trust store when it is
# installed), and no service starts from package scripts (no init here).
configure_rootfs() {
    cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $(mirror) $SUITE main
deb $(mirror) $SUITE-updates main
deb $(security_mirror) $SUITE-security main
EOF
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$ROOT/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
    fi
    printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
    chmod 755 "$ROOT/usr/sbin/policy-rc.d"
}

# mount_at TARGET MOUNT-ARGS...: mount under ROOT and remember it.
mount_at() {
    local target="$ROOT$1"
    shift
    mkdir -p "$target"
    mount "$@" "$target"
    MOUNTS+=("$target")
}

# mount_all: /proc, /sys, /dev, /dev/pts, a private /dev/shm, and this
# repository read-only.
mount_all() {
    mount_at /proc -t proc proc
    mount_at /sys --bind /sys
    mount_at /dev --bind /dev
    mount_at /dev/pts --bind /dev/pts
    mount_at /dev/shm -t tmpfs -o mode=1777 tmpfs
    mount_at "$SRC_IN_CHROOT" --bind "$REPO_ROOT"
    mount -o remount,bind,ro "$ROOT$SRC_IN_CHROOT"
}

# in_chroot CMD...: run a command in the chroot with a clean environment.
in_chroot() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH="$CHROOT_PATH" LANG=C.UTF-8 \
        TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive "$@"
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

# chroot_pids: processes whose root directory is the chroot.
chroot_pids() {
    local proc
    for proc in /proc/[0-9]*; do
        if [ "$(readlink "$proc/root" 2>/dev/null)" = "$ROOT" ]; then
            echo "${proc#/proc/}"
        fi
    done
}

# stop_chroot_processes: end what still runs inside the chroot, by pid.
stop_chroot_processes() {
    local pids
    mapfile -t pids < <(chroot_pids)
    [ "${#pids[@]}" -gt 0 ] || return 0
    kill -TERM "${pids[@]}" 2>/dev/null
    sleep 2
    mapfile -t pids < <(chroot_pids)
    [ "${#pids[@]}" -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null
}

# unmount_all: unmount in reverse order; lazily if busy.
unmount_all() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}"
    done
    MOUNTS=()
}

# cleanup: stop, unmount, and remove the chroot unless --keep or
# something is still mounted under it.
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    set +e
    [ -n "$ROOT" ] || exit "$status"
    stop_chroot_processes
    unmount_all
    if grep -q " ${ROOT}[/ ]" /proc/self/mountinfo; then
        echo "warning: something is still mounted under $ROOT; left it in place" >&2
    elif [ "$KEEP" -eq 1 ]; then
        say "kept the chroot in $ROOT"
    else
        rm -rf --one-file-system "$ROOT"
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
    mount_all
    install_git
    clone_repo
    if [ "$SETUP_ONLY" -eq 1 ]; then
        in_chroot git -C "$CLONE_IN_CHROOT" log --oneline -1 2>/dev/null || true
        say "setup only: chroot ready, clone at $CLONE_IN_CHROOT"
        return 0
    fi
    local demo=FAIL check=FAIL
    run_command demo "bash test/demo.sh" && demo=PASS
    run_command check "bash test/check.sh" && check=PASS
    echo "fresh-debian: demo $demo, check $check"
    [ "$demo" = PASS ] && [ "$check" = PASS ]
}

main "$@"

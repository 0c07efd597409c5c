# test/chroot.sh — Debian chroots for the project's own tests, sourced by
# test/fresh-debian.sh and test/versions.sh: a minimal root filesystem made
# with debootstrap (cached as a tarball in .cache/), its apt sources on the
# host's Debian mirror, mounts remembered for cleanup, commands run inside
# with a clean environment, and everything stopped and unmounted at the end.
#
# The sourcing script sets REPO_ROOT and provides say and die; use_suite
# picks the Debian suite (bookworm, trixie, forky ...).  These functions
# keep the chroot in ROOT and its mounts in MOUNTS.
# shellcheck shell=bash

ROOT=""            # the chroot directory, once made
MOUNTS=()          # mount points under ROOT, in the order they were mounted
SUITE=""
ROOTFS_TARBALL=""
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TESTING_SUITE=forky   # Debian testing: no -updates or -security suites

# use_suite NAME: work on Debian suite NAME from now on.
use_suite() {
    SUITE="$1"
    ROOTFS_TARBALL="$REPO_ROOT/.cache/debian-$SUITE-minbase.tar.gz"
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
    ROOT="$(realpath "$(mktemp -d "/var/tmp/shard_fdw-$SUITE.XXXXXX")")"
    chmod 755 "$ROOT"
    if [ -f "$ROOTFS_TARBALL" ]; then
        say "unpacking the cached $SUITE root filesystem into $ROOT"
        tar -xzpf "$ROOTFS_TARBALL" --numeric-owner -C "$ROOT"
        return 0
    fi
    command -v debootstrap >/dev/null || apt-get install -y debootstrap
    say "debootstrap --variant=minbase $SUITE from $(mirror) into $ROOT"
    # a suite newer than this debootstrap bootstraps as sid does
    local script=()
    [ -e "/usr/share/debootstrap/scripts/$SUITE" ] || script=(/usr/share/debootstrap/scripts/sid)
    debootstrap --variant=minbase "$SUITE" "$ROOT" "$(mirror)" "${script[@]}" \
        >"$ROOT.debootstrap.log" 2>&1 ||
        { tail -n 20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed"; }
    rm -f "$ROOT.debootstrap.log"
    mkdir -p "$(dirname "$ROOTFS_TARBALL")"
    tar -czf "$ROOTFS_TARBALL.tmp" --numeric-owner -C "$ROOT" .
    mv "$ROOTFS_TARBALL.tmp" "$ROOTFS_TARBALL"
    say "cached the root filesystem in ${ROOTFS_TARBALL#"$REPO_ROOT"/}"
}

# configure_rootfs: apt sources (Release files taken past their Valid-Until
# date), name resolution, this machine's local CA
# certificates (a network that inspects HTTPS needs them; the
# ca-certificates package adds them to the chroot's trust store when it is
# installed), and no service starts from package scripts (no init here).
configure_rootfs() {
    echo "deb $(mirror) $SUITE main" >"$ROOT/etc/apt/sources.list"
    if [ "$SUITE" != "$TESTING_SUITE" ]; then
        cat >>"$ROOT/etc/apt/sources.list" <<EOF
deb $(mirror) $SUITE-updates main
deb $(security_mirror) $SUITE-security main
EOF
    fi
    # a mirror that serves a snapshot may hold Release files past their
    # Valid-Until date (the testing suite's expire within days)
    echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/99shard-fdw-snapshot"
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

# mount_system: /proc, /sys, /dev, /dev/pts and a private /dev/shm.
mount_system() {
    mount_at /proc -t proc proc
    mount_at /sys --bind /sys
    mount_at /dev --bind /dev
    mount_at /dev/pts --bind /dev/pts
    mount_at /dev/shm -t tmpfs -o mode=1777 tmpfs
}

# in_chroot CMD...: run a command in the chroot with a clean environment.
in_chroot() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH="$CHROOT_PATH" LANG=C.UTF-8 \
        TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive "$@"
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

# remove_chroot: stop what runs inside, unmount, and remove ROOT unless
# something is still mounted under it (then it is left, with a warning).
remove_chroot() {
    [ -n "$ROOT" ] || return 0
    stop_chroot_processes
    unmount_all
    if grep -q " ${ROOT}[/ ]" /proc/self/mountinfo; then
        echo "warning: something is still mounted under $ROOT; left it in place" >&2
    else
        rm -rf --one-file-system "$ROOT"
    fi
    ROOT=""
}

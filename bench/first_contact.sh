#!/usr/bin/env bash
# A newcomer's first `make run`, measured on a fresh Debian 12: debootstrap builds a minimal
# bookworm (the packages of Debian's container image, as a new cloud or container machine has)
# in a chroot, the checkout is cloned into it, and `make run` runs there from nothing — its
# packages, configure, build and the runs, each phase timed by make run itself. Only `make` is
# installed before (a fresh image lacks it; the README's prerequisite). The host's kernel, so the
# testbed demo runs as it would (root: namespaces, tc). Needs root and the Debian mirror; installs
# debootstrap on the host if missing. The chroot is removed at the end (KEEP=1 keeps it).
# Not part of `make bench` (bench/run.sh skips it): it takes the mirror and ~6 minutes.
# Usage: bench/first_contact.sh [CHROOT_DIR]   (default /srv/genie-first-contact)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${1:-/srv/genie-first-contact}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "first_contact: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null

cleanup() {
  # Mounts first (rbind: lazily, with what is under them), then the tree.
  for m in run dev sys proc; do umount -R -l "$ROOT/$m" 2>/dev/null || true; done
  umount -l "$ROOT" 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$ROOT"
}
trap cleanup EXIT
rm -rf "$ROOT"
echo "first_contact: debootstrap bookworm (minbase) into $ROOT"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
cp /etc/resolv.conf "$ROOT/etc/"
cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
# `ip netns exec` remounts / as a slave: / must be a mount point inside the chroot.
mount --bind "$ROOT" "$ROOT" && mount --make-private "$ROOT"
mount -t proc proc "$ROOT/proc"
mount --rbind /sys "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/run"
chroot "$ROOT" bash -c 'DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make >/dev/null'
# As a new machine: no package lists yet (make run's install-deps fetches them).
rm -rf "$ROOT"/var/lib/apt/lists/*
git clone -q "$HERE" "$ROOT/root/genie"
echo "first_contact: $(chroot "$ROOT" dpkg -l | grep -c '^ii') packages before; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
start=$(date +%s.%N)
chroot "$ROOT" bash -c 'cd /root/genie && make run' >"$ROOT.log" 2>&1 && rc=0 || rc=$?
end=$(date +%s.%N)
grep -E '^\[time\]|install-deps|measured/predicted|error' "$ROOT.log" || true
echo "first_contact: make run exit $rc, $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.0f", b - a}') s in all;" \
     "$(chroot "$ROOT" dpkg -l | grep -c '^ii') packages after; its whole output: $ROOT.log"
exit "$rc"

#!/usr/bin/env bash
# Runs every benchmark: the Google Benchmark / figure-printing binaries built from
# bench/*_bench.cc, then the bench/*.sh scripts (which compare with peer tools such as iperf3).
# Usage: bench/run.sh BUILD_DIR [DATA_DIR] [name-filter]   (DATA_DIR: the checkout's tests/data)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build/release}
DATA=${2:-$HERE/../tests/data}
FILTER=${3:-}
status=0
for b in "$BUILD"/bench/*_bench; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  [[ -n "$FILTER" && "$name" != *"$FILTER"* ]] && continue
  echo "=== $name"
  "$b" || status=1
done
for s in "$HERE"/*.sh; do
  name=$(basename "$s" .sh)
  [ "$name" = run ] && continue
  # A fresh Debian in a chroot from the mirror (6 minutes, the network): run by hand.
  [ "$name" = first_contact ] && continue
  [[ -n "$FILTER" && "$name" != *"$FILTER"* ]] && continue
  echo "=== $name"
  bash "$s" "$BUILD" "$DATA" || status=1
done
exit $status

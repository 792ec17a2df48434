#!/usr/bin/env bash
# Configures BUILD_DIR from PRESET when needed: no build yet, DATA changed, or the build must
# hold the tests and benchmarks (WANT=tests) and the last configure left them out, as their
# packages were missing then (`make run` installs only what the genie binary needs).
# Usage: scripts/configure.sh PRESET BUILD_DIR DATA_DIR [tests]
set -euo pipefail
preset=$1 build=$2 data=$3 want=${4:-}
[ -d "$data/traces" ] || {
  echo "make: DATA=$data has no traces/ folder; point it at a folder laid out like tests/data" >&2
  exit 2
}
cache="$build/CMakeCache.txt"
cached_data=$(sed -n 's/^GENIE_DATA_DIR:[A-Z]*=//p' "$cache" 2>/dev/null || true)
need=""
[ -f "$build/build.ninja" ] || need=1
[ "$cached_data" = "$data" ] || need=1
if [ "$want" = tests ] && ! grep -q '^GENIE_TESTS_FOUND:INTERNAL=ON' "$cache" 2>/dev/null; then
  need=1
fi
[ -z "$need" ] || cmake --preset "$preset" -DGENIE_DATA_DIR="$data" >/dev/null

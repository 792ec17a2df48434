#!/usr/bin/env bash
# nccl-tests-style sweep: ring all-reduce busbw over loopback TCP, 8 ranks, 1 KiB – 256 MiB
# (x4 steps), each size one `genie gen` workload replayed with 5 measured iterations.
# Usage: bench/allreduce_busbw.sh BUILD_DIR [DATA_DIR]   (RANKS=8 MAX=256MiB to change)
set -euo pipefail
G="$1/tools/genie/genie"
RANKS=${RANKS:-8}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
printf "%12s %14s %10s %10s\n" "size(B)" "time(us)" "algbw" "busbw"
size=1024
max=$(( ${MAX_BYTES:-268435456} ))
while [ "$size" -le "$max" ]; do
  "$G" gen collective --type all_reduce --size "$size" --ranks "$RANKS" -o "$T/ar" >/dev/null
  "$G" run "$T/ar" --iterations 5 --warmup 1 --output "$T/out-$size" >/dev/null 2>&1
  "$G" results show "$T/out-$size/results.json" | awk -v s="$size" '$1=="all_reduce"{printf "%12d %14s %10s %10s\n", s, $4, $5, $6}'
  size=$(( size * 4 ))
done

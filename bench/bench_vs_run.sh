#!/usr/bin/env bash
# Issue 14: `genie bench` and `genie run` time the same all-reduce alike. On a star:HOSTS
# testbed at RATE, a SIZE ring all-reduce is timed REPEAT times by each, interleaved
# (bench: -n ITERS -w 1; run: --iterations ITERS --warmup 1, its busbw the median iteration's
# slowest rank), and the table prints both busbw and their ratio, with iperf3's goodput of one
# link beside them. Needs root. Usage: bench/bench_vs_run.sh BUILD_DIR
#   HOSTS=8 RATE=400mbit SIZE=64MiB ITERS=3 REPEAT=3 NAME=gbr
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/bench_vs_run.sh BUILD_DIR}" && pwd)"
G="$BUILD/tools/genie/genie"
HOSTS=${HOSTS:-8}
RATE=${RATE:-400mbit}
SIZE=${SIZE:-64MiB}
ITERS=${ITERS:-3}
REPEAT=${REPEAT:-3}
NAME=${NAME:-gbr}
if [ "$(id -u)" -ne 0 ]; then echo "bench_vs_run: needs root (network namespaces); skipped"; exit 0; fi
T=$(mktemp -d)
trap '"$G" testbed down "$NAME" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
"$G" testbed up --name "$NAME" --topology "star:$HOSTS" --rate "$RATE" >/dev/null
"$G" gen collective --type all_reduce --size "$SIZE" --ranks "$HOSTS" -o "$T/w" >/dev/null
ip netns exec "$NAME-h1" iperf3 -s -1 -D -B 10.100.0.2 >/dev/null 2>&1; sleep 0.3
iperf=$(ip netns exec "$NAME-h0" iperf3 -c 10.100.0.2 -t 3 -J 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e9)')
printf 'star:%s at %s, %s ring all-reduce; iperf3 one link: %.4f GB/s\n' "$HOSTS" "$RATE" "$SIZE" "$iperf"
printf '%6s %12s %12s %8s\n' repeat "bench GB/s" "run GB/s" ratio
for r in $(seq 1 "$REPEAT"); do
  "$G" launch --testbed "$NAME" -n "$HOSTS" -- bench -b "$SIZE" -e "$SIZE" -n "$ITERS" -w 1 -c 0 \
    --json "$T/b$r.json" >/dev/null
  "$G" launch --testbed "$NAME" -n "$HOSTS" -- run "$T/w" --iterations "$ITERS" --warmup 1 \
    -o "$T/r$r" >/dev/null 2>&1
  python3 - "$T/b$r.json" "$T/r$r/results.json" "$r" <<'PY'
import json, statistics, sys
b = json.load(open(sys.argv[1]))["rows"][0]["busbw_gbps"]
per_iter = {}
for c in json.load(open(sys.argv[2]))["collectives"]:
    per_iter.setdefault(c["iteration"], []).append(c["busbw_gbps"])
run = statistics.median(min(v) for v in per_iter.values())
print(f"{sys.argv[3]:>6} {b:12.4f} {run:12.4f} {b / run:8.3f}")
PY
done

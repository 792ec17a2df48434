#!/usr/bin/env bash
# Figure 1 of the paper: a star testbed of HOSTS hosts at 400 Mbit/s repeats an 8 MiB ring
# all-reduce (~0.3 s per iteration) ITERATIONS times; a third of the way through, the last
# host's NIC drops to 40 Mbit/s (faults.yml). genie prints per iteration the measured step and
# all-reduce bus bandwidth beside the flow model's prediction and flags the slow iterations;
# figure.csv holds per iteration: measured busbw, predicted busbw, the fault marker, the flag.
# Needs root (network namespaces). Everything it builds is removed on exit, also on failure.
# Usage: examples/nic-degradation/run.sh BUILD_DIR [HOSTS=8]
#   ITERATIONS=30 SIZE=8MiB NAME=nicdeg (testbed name) OUT=nic-degradation-out
#   SLOW=h7 (the degraded host; default the last) DIRECTION=both (out: only its transmit side,
#   in: only its receive side) FAULT=0 (a healthy repeat: no fault played)
#   FLAG_THRESHOLD=0.25 (--flag-threshold: raise it on a machine whose healthy steps vary more)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="$(cd "${1:?usage: run.sh BUILD_DIR [HOSTS=8]}" && pwd)"
HOSTS=${2:-8}
ITERATIONS=${ITERATIONS:-30}
SIZE=${SIZE:-8MiB}
NAME=${NAME:-nicdeg}
OUT=${OUT:-nic-degradation-out}
G="$BUILD/tools/genie/genie"

if [ "$(id -u)" -ne 0 ]; then
  echo "nic-degradation: needs root (network namespaces, tc); run it with sudo" >&2
  exit 2
fi
[ -x "$G" ] || { echo "nic-degradation: no genie at $G; build it first" >&2; exit 2; }

# The fault's measured iteration, counted from 1 as the schedule counts (docs/testbed.md).
K=$((ITERATIONS / 3 + 1))
SLOW=${SLOW:-h$((HOSTS - 1))}
DIRECTION=${DIRECTION:-both}
FAULT=${FAULT:-1}
FLAG_THRESHOLD=${FLAG_THRESHOLD:-0.25}
mkdir -p "$OUT"
sed -e "s/iteration: 11/iteration: $K/" -e "s/link: h7/link: $SLOW/" \
  -e "s/direction: both/direction: $DIRECTION/" "$HERE/faults.yml" \
  >"$OUT/faults.yml"

"$G" testbed up --name "$NAME" --topology "star:$HOSTS" --rate 400mbit >/dev/null
trap '"$G" testbed down "$NAME" >/dev/null 2>&1 || true' EXIT

"$G" gen collective --type all_reduce --size "$SIZE" -n "$HOSTS" -o "$OUT/workload/ar" >/dev/null
FAULTS=(--faults "$OUT/faults.yml")
if [ "$FAULT" = 0 ]; then FAULTS=(); K=$((ITERATIONS + 1)); fi
"$G" launch --testbed "$NAME" -n "$HOSTS" -- run "$OUT/workload/ar" -n "$ITERATIONS" --warmup 1 \
  --predict --flag-threshold "$FLAG_THRESHOLD" --localize "${FAULTS[@]}" --csv "$OUT/comparison.csv" -o "$OUT/results" \
  --report "$OUT/report.html"

# The figure's data: iterations are 0-based in the results, so the fault (at the start of
# iteration K counted from 1) is in effect from 0-based iteration K-1 on.
awk -F, -v k=$((K - 1)) 'NR == 1 { print "iteration,measured_busbw_gbps,predicted_busbw_gbps,fault,flagged"; next }
  $5 == "all_reduce" { print $1 "," $6 "," $7 "," ($1 >= k ? 1 : 0) "," $8 }' \
  "$OUT/comparison.csv" >"$OUT/figure.csv"
if [ "$FAULT" = 0 ]; then
  echo "nic-degradation: no fault (a healthy repeat); figure data: $OUT/figure.csv"
else
  echo "nic-degradation: fault on $SLOW from iteration $((K - 1)) (0-based); figure data: $OUT/figure.csv"
fi
echo "nic-degradation: the page (Figure 1, flagged iterations, the named host): $OUT/report.html"

#!/usr/bin/env bash
# `make run`: genie's main job on the embedded default — a shipped 8-rank training step
# (GPT, data x tensor x pipeline parallel 2x2x2, from the Symbolic Tensor Graph generator)
# replayed as real TCP traffic over loopback — first once with real data checked (--verify),
# then measured, with the simulated prediction for the same workload beside the step time.
# Needs no root and changes nothing on the machine: results go to build/run-default/.
# Usage: scripts/run-default.sh GENIE [DATA_DIR]   (DATA_DIR defaults to the checkout's tests/data)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
GENIE=$1
DATA=${2:-$HERE/tests/data}
WORKLOAD="$DATA/traces/generated/stg/gpt_dp2_tp2_pp2"
if [ ! -d "$WORKLOAD" ]; then
  echo "make run: the shipped workload $WORKLOAD is missing; run from a full checkout" \
       "(it ships in tests/data) or give DATA= a folder laid out like tests/data" >&2
  exit 1
fi
OUT="$HERE/build/run-default"
rm -rf "$OUT"
"$GENIE" inspect "$WORKLOAD"
echo
# First prove the replay moves the right data: one iteration with real buffers, every
# reduction computed and every rank's result checked (slower: the checking is CPU work).
"$GENIE" run "$WORKLOAD" --verify --output "$OUT/verify" 2>&1 | grep -E "verify:|failed|error" | head -3
echo
# Then the measurement: 5 iterations after a warm-up, timings free of the checking.
"$GENIE" run "$WORKLOAD" --iterations 5 --warmup 1 \
    --network "$HERE/examples/loopback.yml" --output "$OUT" --trace-out "$OUT/trace.json"
echo
echo "results: $OUT/results.json   timeline: $OUT/trace.json (open in https://ui.perfetto.dev)"

#!/usr/bin/env bash
# Compute-sleep fidelity: a `genie gen` chain of 1,000 compute nodes of 1 ms on one rank must
# take 1.000–1.010 s of step time. Prints min/median/max over 5 iterations.
# Usage: bench/compute_chain.sh BUILD_DIR [DATA_DIR]
set -euo pipefail
G="$1/tools/genie/genie"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$G" gen compute-chain --count 1000 --duration 1ms --ranks 1 -o "$T/chain" >/dev/null
"$G" run "$T/chain" --iterations 5 --warmup 1 --output "$T/out" | grep -E "step time"

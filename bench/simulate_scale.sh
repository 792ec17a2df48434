#!/usr/bin/env bash
# Simulation scale: wall time and peak RSS of `genie simulate` for a 1 MiB all-reduce at 1,024
# ranks (both network models) and for the 8-rank STG workloads.
# Usage: bench/simulate_scale.sh BUILD_DIR [DATA_DIR]   (DATA_DIR: the checkout's tests/data)
set -euo pipefail
G="$1/tools/genie/genie"
DATA=${2:-$(cd "$(dirname "$0")/.." && pwd)/tests/data}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
measure() {  # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$T/time" "$@" -q >/dev/null
  read -r secs kb < "$T/time"
  printf "%-40s %8.2f s %8.1f MiB\n" "$label" "$secs" "$(echo "$kb/1024" | bc -l)"
}
"$G" gen collective --type all_reduce --size 1MiB --ranks 1024 -o "$T/ar1024" >/dev/null
printf 'topology: [ Switch ]\nnpus_count: [ 1024 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' > "$T/sw1024.yml"
printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' > "$T/sw8.yml"
for model in unaware aware; do
  measure "all_reduce 1MiB x1024 ($model)" "$G" simulate "$T/ar1024" --network "$T/sw1024.yml" --network-model "$model"
done
for w in gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2; do
  measure "stg/$w (aware)" "$G" simulate "$DATA/traces/generated/stg/$w" --network "$T/sw8.yml" --network-model aware
done

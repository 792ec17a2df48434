#!/usr/bin/env bash
# Training steps at cluster scale (issue 44): `genie simulate` of a synth description (no trace
# files) on a 3-dimensional network, Ring 8 (the GPUs of a server) x Switch 8 x Switch N, both
# the unaware and the flow model. Prints wall time, CPU time (user + system: a loaded machine
# inflates it less), peak RSS, the in-memory traces held beside it (shared memory, not in the
# RSS), how many ranks were simulated for how many (symmetry reduction: data-parallel replicas
# folded onto one copy, exact; docs/scale.md "Symmetry reduction") and the step time.
# Usage: bench/simulate_synth_scale.sh BUILD_DIR
# Environment: ROWS="1024 4096 16k 405b moe 3tier" (default; add "64k" for 65,536 ranks, the slow
# one, and "1024off" for the 1,024-rank row with every rank simulated), MODELS="unaware flow".
# Row "3tier": the 16k row on a rail-optimized 3-tier fat-tree instead (8 pods of 2,048 GPUs,
# 16 spines per pod, 64 super-spines, 2:1 at the spines; docs/configs.md "Three tiers"): each pod
# a pipeline stage; "3tierdp": the same with data parallelism across the pods (rank order
# tp,sp,ep,pp,dp), its all-reduce through the core.
set -euo pipefail
G="$(cd "${1:?usage: bench/simulate_synth_scale.sh BUILD_DIR}" && pwd)/tools/genie/genie"
ROWS=${ROWS:-1024 4096 16k 405b moe 3tier}
MODELS=${MODELS:-unaware flow}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

net() {  # net N: Ring 8 x Switch 8 x Switch N
  printf 'topology: [ Ring, Switch, Switch ]\nnpus_count: [ 8, 8, %d ]\nbandwidth: [ 400.0, 50.0, 50.0 ]\nlatency: [ 500.0, 1000.0, 2000.0 ]\n' \
    "$1" > "$T/net$1.yml"
  echo "$T/net$1.yml"
}

fat_tree() {  # NVLink 8 x rail leaf 32 x leaf group 8 x pod 8, 3 tiers
  printf 'topology: [ Switch, Switch, Switch, Switch ]\nnpus_count: [ 8, 32, 8, 8 ]\nbandwidth: [ 450, 46.566, 46.566, 23.283 ]\nlatency: [ 250, 1000, 1000, 1000 ]\nleaf_dimension: 1\nspines: 16\nspine_latency: 1000\noversubscription: 1\nsuper_spines: 64\nsuper_spine_latency: 1000\nspine_oversubscription: 2\n' \
    > "$T/fat_tree.yml"
  echo "$T/fat_tree.yml"
}

printf "%-44s %-8s %9s %9s %10s %10s %16s %14s\n" "workload" "model" "wall" "cpu" "peak RSS" \
  "traces" "simulated" "step (ms)"
row() {  # row LABEL N_DIM2 synth-and-simulate-flags...
  local label=$1 n=$2; shift 2
  local yml
  if [ "$n" = fat ]; then yml=$(fat_tree); n=256; else yml=$(net "$n"); fi
  for model in $MODELS; do
    /usr/bin/time -f "%e %M %U %S" -o "$T/time" "$G" -v simulate "$@" --network "$yml" \
      --network-model "$model" -q --no-progress > "$T/out" 2>&1 || { cat "$T/out"; exit 1; }
    read -r secs kb user sys < "$T/time"
    local traces ran end
    traces=$(sed -n 's/.*in-memory traces: \([0-9.]*\) MiB.*/\1/p' "$T/out")
    ran=$(sed -n 's/.* \([0-9]*\) ranks simulated.*/\1/p' "$T/out")
    end=$(sed -n 's/.* \([0-9]*\) ns of simulated time.*/\1/p' "$T/out")
    printf "%-44s %-8s %7.2f s %7.2f s %6.0f MiB %6.0f MiB %16s %14.3f\n" "$label" "$model" \
      "$secs" "$(echo "$user + $sys" | bc -l)" "$(echo "$kb / 1024" | bc -l)" "${traces:-0}" \
      "$ran of $(( 64 * n ))" "$(echo "${end:-0} / 1000000" | bc -l)"
  done
}

for r in $ROWS; do
  case $r in
    1024) row "llama3-70b tp8 pp8 dp16, 16 mb (1,024)" 16 --model llama3-70b --gpu h100 \
            --tp 8 --pp 8 --dp 16 --microbatches 16 ;;
    1024off) row "  the same, --symmetry off" 16 --model llama3-70b --gpu h100 \
            --tp 8 --pp 8 --dp 16 --microbatches 16 --symmetry off ;;
    4096) row "llama3-70b tp8 pp8 dp64, 16 mb (4,096)" 64 --model llama3-70b --gpu h100 \
            --tp 8 --pp 8 --dp 64 --microbatches 16 --global-batch 2048 ;;
    16k) row "llama3-70b tp8 pp8 dp256, 8 mb (16,384)" 256 --model llama3-70b --gpu h100 \
            --tp 8 --pp 8 --dp 256 --microbatches 8 --global-batch 2048 ;;
    405b) row "llama3-405b tp8 pp16 dp128, 8 mb (16,384)" 256 --model llama3-405b --gpu h100 \
            --tp 8 --pp 16 --dp 128 --microbatches 8 --global-batch 2048 ;;
    moe) row "mixtral-8x7b tp4 ep8 pp4 dp128, 8 mb (16,384)" 256 --model mixtral-8x7b \
            --gpu h100 --tp 4 --ep 8 --pp 4 --dp 128 --microbatches 8 --global-batch 2048 ;;
    3tier) row "llama3-70b tp8 pp8 dp256, 8 mb, 3-tier (16,384)" fat --model llama3-70b \
            --gpu h100 --tp 8 --pp 8 --dp 256 --microbatches 8 --global-batch 2048 ;;
    3tierdp) row "  the same, dp across the pods" fat --model llama3-70b --gpu h100 --tp 8 \
            --pp 8 --dp 256 --microbatches 8 --global-batch 2048 --rank-order tp,sp,ep,pp,dp ;;
    64k) row "llama3-405b tp8 pp16 dp512, 8 mb (65,536)" 1024 --model llama3-405b --gpu h100 \
            --tp 8 --pp 16 --dp 512 --microbatches 8 --global-batch 4096 ;;
    *) echo "unknown row $r" >&2; exit 2 ;;
  esac
done

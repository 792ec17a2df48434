#!/usr/bin/env bash
# Simulation scale: wall time, peak RSS, simulated messages per second and memory per rank of
# `genie simulate` for a 1 MiB ring all-reduce (ASTRA-sim's Ring_4chunks.json: 4 chunks, 1
# active) on a Switch and on a Ring of 256, 1,024 and 4,096 NPUs, both ASTRA-sim models; then
# gpt_dp2_tp2_pp2 replicated to 1,024 ranks (`genie gen replicate`, 128 copies), 8-rank ring
# all-reduces replicated to the same sizes (memory per rank, flat in N), and the 8-rank STG
# workloads.
# Usage: bench/simulate_scale.sh BUILD_DIR [DATA_DIR]   (DATA_DIR: the checkout's tests/data)
# Ranks whose chunk schedules are equal up to a rotation share one (docs/scale.md, "At
# cluster scale"): what remains per rank is a 4-byte state per step of the running chunk.
# Environment: RANKS="256 1024" to choose the sizes (default "256 1024 4096"), REPEAT=n runs
# per point (the minimum wall time and RSS are printed; default 1), TOPOLOGIES="Switch Ring".
# Messages are counted, not measured: a ring all-reduce of N ranks in C chunks sends
# N * C * 2(N-1) messages; messages/s is per second of CPU (user + sys), which a busy shared
# machine disturbs less than the wall time. Memory per rank = peak RSS / N.
set -euo pipefail
G="$1/tools/genie/genie"
DATA=${2:-$(cd "$(dirname "$0")/.." && pwd)/tests/data}
SYSTEM="$DATA/astra-sim-configs/Ring_4chunks.json"
RANKS=${RANKS:-256 1024 4096}
REPEAT=${REPEAT:-1}
TOPOLOGIES=${TOPOLOGIES:-Switch Ring}
CHUNKS=4
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# measure LABEL MESSAGES RANKS command...: prints one line (min over REPEAT runs).
measure() {
  local label=$1 messages=$2 ranks=$3; shift 3
  local best_s="" best_cpu="" best_kb=""
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%e %M %U %S" -o "$T/time" "$@" -q >/dev/null
    read -r secs kb user sys < "$T/time"
    local cpu
    cpu=$(echo "$user + $sys" | bc -l)
    if [ -z "$best_s" ] || [ "$(echo "$secs < $best_s" | bc -l)" = 1 ]; then best_s=$secs; fi
    if [ -z "$best_cpu" ] || [ "$(echo "$cpu < $best_cpu" | bc -l)" = 1 ]; then best_cpu=$cpu; fi
    if [ -z "$best_kb" ] || [ "$kb" -lt "$best_kb" ]; then best_kb=$kb; fi
  done
  local rate per_rank
  rate=$(echo "if ($best_cpu > 0) $messages / $best_cpu / 1000000 else 0" | bc -l)
  per_rank=$(echo "$best_kb / $ranks" | bc -l)
  printf "%-40s %8.2f s %8.2f s %8.1f MiB %7.2f M/s %8.1f KiB\n" "$label" "$best_s" "$best_cpu" \
    "$(echo "$best_kb/1024" | bc -l)" "$rate" "$per_rank"
}

printf "%-40s %10s %10s %12s %11s %12s\n" "run" "wall" "cpu" "peak RSS" "messages/s" "memory/rank"
for n in $RANKS; do
  "$G" gen collective --type all_reduce --size 1MiB --ranks "$n" -o "$T/ar$n" >/dev/null
  messages=$((n * CHUNKS * 2 * (n - 1)))
  for topo in $TOPOLOGIES; do
    printf 'topology: [ %s ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
      "$topo" "$n" > "$T/net.yml"
    for model in unaware aware; do
      measure "all_reduce 1MiB $topo x$n ($model)" "$messages" "$n" \
        "$G" simulate "$T/ar$n" --system "$SYSTEM" --network "$T/net.yml" --network-model "$model"
    done
  done
  rm -rf "$T/ar$n"*
done

printf 'topology: [ Switch ]\nnpus_count: [ 1024 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
  > "$T/sw1024.yml"
"$G" gen replicate "$DATA/traces/generated/stg/gpt_dp2_tp2_pp2" --copies 128 \
  -o "$T/gpt1024/workload" >/dev/null
for model in unaware aware; do
  # Messages: not known up front; counted by the simulator (`-v`: "simulated N messages"), in
  # one run outside the timed ones.
  # (-v is genie's own flag: before the subcommand.)
  messages=$("$G" -v simulate "$T/gpt1024" --network "$T/sw1024.yml" --network-model "$model" \
    -q 2>&1 | sed -n 's/.*simulated \([0-9]*\) messages.*/\1/p')
  measure "gpt_dp2_tp2_pp2 x128 = 1024 ($model)" "${messages:-0}" 1024 \
    "$G" simulate "$T/gpt1024" --network "$T/sw1024.yml" --network-model "$model"
done
rm -rf "$T/gpt1024"

# Memory per rank, flat in N: an 8-rank ring all-reduce (neighbour sends only) replicated to N
# ranks, so that each rank's traffic does not grow with N. `extra/rank` is the growth of the
# peak RSS per added rank from the smallest N (the fixed cost of the process cancels out).
"$G" gen collective --type all_reduce --size 1MiB --ranks 8 -o "$T/ring8/ar" >/dev/null
first_n="" first_kb=""
for n in $RANKS; do
  printf 'topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
    "$n" > "$T/net.yml"
  "$G" gen replicate "$T/ring8" --copies $((n / 8)) -o "$T/rings$n/workload" >/dev/null
  messages=$((n * CHUNKS * 2 * 7))
  line=$(measure "8-rank rings x$((n / 8)) = $n (unaware)" "$messages" "$n" \
    "$G" simulate "$T/rings$n" --system "$SYSTEM" --network "$T/net.yml" --network-model unaware)
  kb=$(/usr/bin/time -f "%M" "$G" simulate "$T/rings$n" --system "$SYSTEM" --network "$T/net.yml" \
    --network-model unaware -q 2>&1 >/dev/null | tail -1)
  extra="-"
  if [ -z "$first_n" ]; then
    first_n=$n first_kb=$kb
  elif [ "$n" -gt "$first_n" ]; then
    extra=$(printf "%.2f KiB" "$(echo "($kb - $first_kb) / ($n - $first_n)" | bc -l)")
  fi
  printf "%s   extra/rank %s\n" "$line" "$extra"
  rm -rf "$T/rings$n"
done

printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' > "$T/sw8.yml"
for w in gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2; do
  /usr/bin/time -f "%e %M" -o "$T/time" "$G" simulate "$DATA/traces/generated/stg/$w" \
    --network "$T/sw8.yml" --network-model aware -q >/dev/null
  read -r secs kb < "$T/time"
  printf "%-40s %8.2f s %8.1f MiB\n" "stg/$w (aware)" "$secs" "$(echo "$kb/1024" | bc -l)"
done

#!/usr/bin/env bash
# Peak RSS per rank of `genie run` for the largest shipped workloads (the real DLRM step,
# 8 ranks x ~1,160 nodes; and resnet_dp, 64 ranks). Reads VmHWM of every rank before it exits.
# Usage: bench/rank_rss.sh BUILD_DIR [DATA_DIR]   (DATA_DIR: the checkout's tests/data)
set -euo pipefail
G="$1/tools/genie/genie"
DATA=${2:-$(cd "$(dirname "$0")/.." && pwd)/tests/data}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for spec in "pytorch/dlrm_8npus|traces/generated/pytorch/dlrm_8npus|" \
            "resnet_dp (64 ranks)|traces/astra-sim/resnet_dp|--default-comm-size 1MiB"; do
  IFS='|' read -r label path extra <<<"$spec"
  /usr/bin/time -f "%M" -o "$T/rss" "$G" launch -n "$(ls "$DATA/$path"/*.et | wc -l)" -- \
      run "$DATA/$path" $extra --output "$T/out" >/dev/null 2>&1 || { echo "$label: run failed"; continue; }
  # time -f %M reports the largest single process among the launcher's children.
  printf "%-24s peak RSS of the largest rank: %.1f MiB\n" "$label" "$(echo "$(cat "$T/rss")/1024" | bc -l)"
done

#!/usr/bin/env bash
# Issue 21: how fast `genie synth` writes a large job and how much memory it takes. Llama-3 70B
# (tp 8, pp 8, 1F1B) at 1,024 ranks (dp 16, 16 micro-batches of 2 sequences) and 16,384 ranks
# (dp 256, global batch 2,048 = 16M tokens, 8 micro-batches), each written once, gzip-compressed
# (--gzip) so 16,384 ranks fit a small disk; prints wall time, peak RSS (GNU time's maximum
# resident set), CPU time (user + system: the machine's load does not inflate it), nodes and
# bytes written. The writer streams rank by rank, so RSS stays flat as
# ranks grow. Usage: bench/synth_scale.sh BUILD_DIR   (JOBS=2 writer threads; GZIP=0 for raw)
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/synth_scale.sh BUILD_DIR}" && pwd)"
G="$BUILD/tools/genie/genie"
JOBS=${JOBS:-2}
GZ=""; [ "${GZIP:-1}" = "1" ] && GZ="--gzip"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
printf "%-28s %8s %10s %10s %12s %10s %12s\n" "workload" "ranks" "time(s)" "cpu(s)" "peakRSS(MiB)" "nodes(M)" "disk(MiB)"
run() {
  local name="$1" ranks="$2"; shift 2
  /usr/bin/time -f "%e %M %U %S" -o "$T/time" "$G" synth -o "$T/$name" --model llama3-70b --gpu h100 \
      --jobs "$JOBS" $GZ "$@" > "$T/out"
  read -r secs kb user sys < "$T/time"
  nodes=$(sed -n 's/.*rank(s), \([0-9]*\) nodes.*/\1/p' "$T/out")
  disk=$(du -sm "$T/$name" | cut -f1)
  printf "%-28s %8d %10.2f %10.2f %12.1f %10.2f %12d\n" "$name" "$ranks" "$secs" \
      "$(echo "$user+$sys" | bc -l)" "$(echo "$kb/1024" | bc -l)" \
      "$(echo "$nodes/1000000" | bc -l)" "$disk"
  rm -rf "${T:?}/$name"
}
run llama3-70b_tp8_pp8_dp16 1024 --tp 8 --pp 8 --dp 16 --microbatches 16
run llama3-70b_tp8_pp8_dp256 16384 --tp 8 --pp 8 --dp 256 --microbatches 8 --global-batch 2048

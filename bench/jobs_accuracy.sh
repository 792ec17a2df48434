#!/usr/bin/env bash
# Issue 43's interference benchmark: is a job's step, measured among its neighbours, what its
# `--predict` (the job alone with its measured conditions, plus what the jobs simulation says
# the neighbours add; docs/jobs.md, "Predicted with the neighbours") expected?
# On each testbed of TOPOLOGIES (at RATE, created once), for each workload of
# WORKLOADS and each placement of PLACEMENTS, two 8-rank jobs a and b of that workload run
# together (`genie launch --jobs`, both with `--predict`), REPS paired tries (each calibrated
# afresh). The tries alternate
# over the cells (try 1 of every cell, then try 2, ...) so the machine's load, which drifts,
# falls on every cell alike; `uptime` is recorded with each run.
# Per try and job: the median over its iterations of measured / predicted step. Printed per cell
# and job: the median over the tries, their range, in or out of 0.95-1.05, the predicted step
# together and alone (the interference the model expects), and the tries' load.
#   allreduce_SIZE      `genie gen collective --type all_reduce --size SIZE -n 8` (AR_ITER
#                       iterations: a step of tens of ms moves ±10 % from one to the next)
#   NAME                a shipped STG step, DATA_DIR/traces/generated/stg/NAME (STG_ITER
#                       iterations; moe_dp2_ep4's step is ~4 s alone at 400 Mbit/s, so the two
#                       jobs overlap through every iteration whatever the launch's skew)
# ALONE=1 also runs each try's job a alone (`genie launch --jobs FILE --job a`, placed as among
# the others) and prints its measured / predicted: whether a miss is the job's own prediction or
# the neighbours'.
# Needs root (network namespaces). Everything it builds is removed on exit, also on failure.
# Usage: bench/jobs_accuracy.sh BUILD_DIR [DATA_DIR]
#   TOPOLOGIES="star:8 leafspine:2x2x4" RATE=1gbit REPS=3 PLACEMENTS="packed interleaved"
#   WORKLOADS="allreduce_1MiB gpt_dp2_tp2_pp2" AR_ITER=40 STG_ITER=3 NAME=jobsacc ALONE=""
#   CALIBRATE="--accept-findings" (a loaded 2-core machine's scan finds the CPU uneven, and a
#   leaf-spine's pairs across the fabric slower than within a leaf) OUT=DIR (keep the runs)
#   TESTBED_ARGS="" (more `genie testbed up` flags, e.g. "--tcp-congestion cubic")
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:?usage: bench/jobs_accuracy.sh BUILD_DIR [DATA_DIR]}" && pwd)"
DATA="$(cd "${2:-$HERE/tests/data}" && pwd)"
G="$BUILD/tools/genie/genie"
TOPOLOGIES=${TOPOLOGIES:-"star:8 leafspine:2x2x4"}
RATE=${RATE:-1gbit}
REPS=${REPS:-3}
PLACEMENTS=${PLACEMENTS:-"packed interleaved"}
WORKLOADS=${WORKLOADS:-"allreduce_1MiB gpt_dp2_tp2_pp2"}
AR_ITER=${AR_ITER:-40}
STG_ITER=${STG_ITER:-3}
NAME=${NAME:-jobsacc}
ALONE=${ALONE:-}
CALIBRATE=${CALIBRATE:---accept-findings}
if [ "$(id -u)" -ne 0 ]; then echo "jobs_accuracy: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "jobs_accuracy: no genie at $G; build it first" >&2; exit 1; }
T=$(mktemp -d)
OUT=${OUT:-$T/runs}
mkdir -p "$OUT"
: >"$OUT/uptime.txt"
trap '"$G" testbed down "$NAME" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT

# The workload's path and iterations.
workload() {
  case "$1" in
    allreduce_*)
      local size=${1#allreduce_}
      [ -e "$T/w/$1.0.et" ] || { mkdir -p "$T/w" && "$G" gen collective --type all_reduce \
        --size "$size" -n 8 -o "$T/w/$1" >/dev/null; }
      echo "$T/w/$1 $AR_ITER" ;;
    *)
      local w="$DATA/traces/generated/stg/$1"
      [ -e "$w.0.et" ] || [ -d "$w" ] || { echo "jobs_accuracy: no workload $w" >&2; exit 1; }
      echo "$DATA/traces/generated/stg/$1 $STG_ITER" ;;
  esac
}

# One try's figures for one job: "ratio predicted_together predicted_alone" (medians over its
# iterations) and what its iterations say of themselves, "with_rto with_cpu iterations" (TCP
# retransmission timeouts; a rank waiting for a core), or "- - - 0 0 0" without results.
figures() {
  python3 - "$1" <<'EOF'
import json, statistics, sys
try:
    its = json.load(open(sys.argv[1]))['prediction']['iterations']
    r = statistics.median(i['measured_step_ns'] / i['expected_step_ns'] for i in its)
    t = statistics.median(i['expected_step_ns'] for i in its)
    a = statistics.median(i.get('expected_alone_step_ns', i['expected_step_ns']) for i in its)
    rto = sum(1 for i in its if i.get('tcp_timeouts', 0) > 0)
    cpu = sum(1 for i in its if i.get('cpu_wait_fraction', 0) > 0)
    print(f"{r:.4f} {t} {a} {rto} {cpu} {len(its)}")
except Exception:
    print("- - - 0 0 0")
EOF
}

# Median, range and verdict of a list of ratios.
summary() {
  python3 - "$@" <<'EOF'
import statistics, sys
v = [float(x) for x in sys.argv[1:] if x != '-']
if not v:
    print("-", "-", "no results"); sys.exit()
m = statistics.median(v)
print(f"{m:.3f}", f"{min(v):.2f}-{max(v):.2f}", "in" if 0.95 <= m <= 1.05 else "OUT")
EOF
}

ms() { python3 -c "import sys; print(f'{float(sys.argv[1])/1e6:.2f}')" "$1"; }

declare -A RATIOS TOGETHER ALONE_P ALONE_R LOADS RTO CPU ITS
CELLS=()
for topo in $TOPOLOGIES; do
  "$G" testbed down "$NAME" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086 # TESTBED_ARGS is a list of flags
  "$G" testbed up --name "$NAME" --topology "$topo" --rate "$RATE" ${TESTBED_ARGS:-} >/dev/null
  for rep in $(seq 1 "$REPS"); do
    # A paired try: calibrated afresh, so one calibration's drift (the machine's CPU) moves one
    # try, not the cell's median.
    # shellcheck disable=SC2086  # CALIBRATE is a list of flags
    "$G" testbed calibrate "$NAME" $CALIBRATE | grep -E 'one pair:|all hosts at once' |
      sed "s/^/# $topo try $rep: /"
    for w in $WORKLOADS; do
      read -r path iters < <(workload "$w")
      for p in $PLACEMENTS; do
        cell="$topo|$w|$p"
        [ "$rep" -gt 1 ] || CELLS+=("$cell")
        dir="$OUT/${topo/:/-}/$w/$p/$rep"
        rm -rf "$dir"; mkdir -p "$dir"
        cat >"$dir/jobs.yml" <<EOF
testbed: $NAME
output: $dir
jobs:
  - name: a
    ranks: 8
    placement: $p
    iterations: $iters
    run: {workload: $path, warmup: 1, predict: true}
  - name: b
    ranks: 8
    placement: $p
    iterations: $iters
    run: {workload: $path, warmup: 1, predict: true}
EOF
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$G" launch --jobs "$dir/jobs.yml" >"$dir/out.txt" 2>&1 || true
        echo "$(date -u +%H:%M:%S) $cell try $rep: $(uptime)" >>"$OUT/uptime.txt"
        LOADS[$cell]="${LOADS[$cell]:-}${LOADS[$cell]:+,}$load"
        for j in a b; do
          read -r r t a rto cpu its < <(figures "$dir/$j/results.json")
          RTO[$cell|$j]=$((${RTO[$cell|$j]:-0} + rto))
          CPU[$cell|$j]=$((${CPU[$cell|$j]:-0} + cpu))
          ITS[$cell|$j]=$((${ITS[$cell|$j]:-0} + its))
          RATIOS[$cell|$j]="${RATIOS[$cell|$j]:-} $r"
          TOGETHER[$cell|$j]="${TOGETHER[$cell|$j]:-} $t"
          ALONE_P[$cell|$j]="${ALONE_P[$cell|$j]:-} $a"
        done
        if [ -n "$ALONE" ]; then
          "$G" launch --jobs "$dir/jobs.yml" --job a --output "$dir/alone" >"$dir/alone.txt" 2>&1 || true
          read -r r _ _ < <(figures "$dir/alone/a/results.json")
          ALONE_R[$cell]="${ALONE_R[$cell]:-} $r"
        fi
      done
    done
  done
  "$G" testbed down "$NAME" >/dev/null 2>&1 || true
done

echo
printf '%-18s %-16s %-12s %-3s %7s %11s %-4s %12s %12s %-16s %-16s%s\n' testbed workload placement job \
  "meas/pred" range "" "pred tog ms" "alone ms" "load (1 min)" "runs say" "${ALONE:+  alone meas/pred}"
for cell in "${CELLS[@]}"; do
  IFS='|' read -r topo w p <<<"$cell"
  for j in a b; do
    # shellcheck disable=SC2086  # lists of figures
    read -r m range verdict < <(summary ${RATIOS[$cell|$j]})
    # shellcheck disable=SC2086
    t=$(python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!='-']; print(statistics.median(v) if v else 0)" ${TOGETHER[$cell|$j]})
    # shellcheck disable=SC2086
    a=$(python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!='-']; print(statistics.median(v) if v else 0)" ${ALONE_P[$cell|$j]})
    extra=""
    if [ -n "$ALONE" ] && [ "$j" = a ]; then
      # shellcheck disable=SC2086
      read -r am ar _ < <(summary ${ALONE_R[$cell]})
      extra="  $am ($ar)"
    fi
    said=""
    [ "${RTO[$cell|$j]:-0}" -eq 0 ] || said="RTO${RTO[$cell|$j]}/${ITS[$cell|$j]}"
    [ "${CPU[$cell|$j]:-0}" -eq 0 ] || said="$said${said:+,}CPU${CPU[$cell|$j]}/${ITS[$cell|$j]}"
    printf '%-18s %-16s %-12s %-3s %7s %11s %-4s %12s %12s %-16s %-16s%s\n' "$topo" "$w" "$p" "$j" \
      "$m" "$range" "$verdict" "$(ms "$t")" "$(ms "$a")" "${LOADS[$cell]}" "${said:--}" "$extra"
  done
done
echo "# per try: the median over a job's iterations of measured / predicted step; the row: the"
echo "# median of the $REPS tries and their range; in: within 0.95-1.05. runs say: iterations of"
echo "# all tries with TCP retransmission timeouts (RTO) or a rank waiting for a core (CPU)."
echo "# uptime per run: $OUT/uptime.txt"

#!/usr/bin/env bash
# Issue 46's benchmark: does the prediction hold wherever a user points it? The accuracy
# benchmark (bench/predict_accuracy.sh: calibrate, run with --predict, REPS paired tries) is run
# on a grid of network settings — link rate, topology and how a spine shares its links,
# the hosts' TCP congestion control, the links' queue depth — for every workload: the shipped
# STG steps, `genie synth` steps and the all-reduce sizes. Printed: per cell and workload the
# median measured / predicted over the tries, the tries' range and every iteration's range, and
# whether the cell meets the goal (median within 0.95-1.05, every iteration within 0.90-1.10);
# then the count of cells that do, and the settings this machine cannot build (a congestion
# control its kernel lacks), said and skipped.
#
# MODE=axes (default): the BASE cell, then each axis's other values with the rest at BASE (a
# user changing one setting); MODE=full: every combination (hours: 3 rates x 4 topologies x
# 3 congestion controls x 4 queues is 144 cells).
# Needs root (network namespaces). Usage: bench/predict_grid.sh BUILD_DIR [DATA_DIR]
#   RATES="100mbit 400mbit 1gbit"   (tbf shapes 100 Mbit/s-1 Gbit/s steadily here, docs/testbed.md
#                                     "Shaping"; at 2.5 Gbit/s 8 hosts ask most of what 2 cores
#                                     copy, and tries differ by up to 9 %: docs/prediction.md)
#   TOPOLOGIES="star:8 star:16 leafspine:2x2x4:per-host leafspine:2x2x4:fifo"
#   CCS="bbr cubic dctcp"  QUEUES="default 256KB 1MB 4MB"  (default: the testbed's own,
#                                     20 ms of the rate and at least 2 MB)
#   BASE="1gbit star:8 bbr default"   (rate topology cc queue)
#   WORKLOADS="gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2"
#   SYNTH="stg-gpt --dp 4 --tp 2;stg-llama --dp 2 --tp 2 --pp 2 --microbatches 2"  (';' between
#     `genie synth -m` argument lists; 8 ranks each, or HOSTS of a star:HOSTS cell when
#     RANKS_FROM_TOPOLOGY=1)
#   SIZES="1MiB 16MiB"  REPS=3  ITER=3  WARMUP=1  OUT=DIR (keep every cell's files)
#   HOST_SCHED=""  (every cell's hosts' own egress: ack-first or fifo; "" = the testbed's default)
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:?usage: bench/predict_grid.sh BUILD_DIR [DATA_DIR]}" && pwd)"
DATA="$(cd "${2:-$HERE/tests/data}" && pwd)"
G="$BUILD/tools/genie/genie"
RATES=${RATES-"100mbit 400mbit 1gbit"}
TOPOLOGIES=${TOPOLOGIES-"star:8 star:16 leafspine:2x2x4:per-host leafspine:2x2x4:fifo"}
CCS=${CCS-"bbr cubic dctcp"}
QUEUES=${QUEUES-"default 256KB 1MB 4MB"}
BASE=${BASE:-"1gbit star:8 bbr default"}
MODE=${MODE:-axes}
WORKLOADS=${WORKLOADS-"gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2"}
SYNTH=${SYNTH-"stg-gpt --dp 4 --tp 2;stg-llama --dp 2 --tp 2 --pp 2 --microbatches 2"}
SIZES=${SIZES-"1MiB 16MiB"}
export REPS=${REPS:-3} ITER=${ITER:-3} WARMUP=${WARMUP:-1}

if [ "$(id -u)" -ne 0 ]; then echo "predict_grid: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "predict_grid: no genie at $G; build it first" >&2; exit 1; }
T=$(mktemp -d)
cleanup() {
  local rc=$?
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp -r "$T"/. "$OUT"/ 2>/dev/null || true; fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The synth workloads: 8 ranks as given; with RANKS_FROM_TOPOLOGY=1 a star:HOSTS cell writes
# them again at HOSTS ranks, their data-parallel degree scaled (--dp 4 --tp 2: --dp 8 on 16).
# synth_for HOSTS: the folders, one per SYNTH entry, written once per rank count.
IFS=';' read -r -a synth_args <<<"$SYNTH"
synth_for() {
  local hosts=$1 k args dir dp ranks written list=""
  for k in "${!synth_args[@]}"; do
    args=${synth_args[$k]}
    [ -n "${args// /}" ] || continue
    dir="$T/synth/$(echo "$args" | tr -s ' -' '_' | sed 's/^_//;s/_$//')"
    if [ "${RANKS_FROM_TOPOLOGY:-0}" = 1 ] && [ "$hosts" != 8 ]; then
      dp=$(grep -oE -- '--dp [0-9]+' <<<"$args" | grep -oE '[0-9]+' || echo 1)
      # The ranks of the 8-rank form: the product of the parallel degrees given.
      ranks=1
      for d in $(grep -oE -- '--(dp|tp|pp|sp|cp|ep) [0-9]+' <<<"$args" | grep -oE '[0-9]+$'); do
        ranks=$((ranks * d))
      done
      if [ $((hosts * dp % ranks)) -ne 0 ]; then
        echo "predict_grid: cannot scale '$args' ($ranks ranks) to $hosts ranks" >&2; exit 2
      fi
      args="$(sed -E 's/--dp [0-9]+//' <<<"$args") --dp $((hosts * dp / ranks))"
      dir="${dir}_n$hosts"
    fi
    if [ ! -d "$dir" ]; then
      # shellcheck disable=SC2086 # a list of synth flags
      "$G" synth -m $args -o "$dir" >/dev/null ||
        { echo "predict_grid: genie synth -m $args failed" >&2; exit 1; }
      written=$(find "$dir" -maxdepth 1 -name '*.et*' | wc -l)
      [ "${RANKS_FROM_TOPOLOGY:-0}" != 1 ] || [ "$written" = "$hosts" ] ||
        { echo "predict_grid: genie synth -m $args wrote $written ranks, not $hosts" >&2; exit 2; }
    fi
    list="$list $dir"
  done
  echo "$list"
}

available=$(sysctl -n net.ipv4.tcp_available_congestion_control 2>/dev/null || echo "")
declare -a skipped=()
cc_ok() {
  case " $available " in *" $1 "*) return 0 ;; esac
  skipped+=("congestion control $1: not in this kernel's tcp_available_congestion_control ($available)")
  return 1
}

# The cells: "rate topology cc queue" lines.
cells() {
  read -r br bt bc bq <<<"$BASE"
  if [ "$MODE" = full ]; then
    for r in $RATES; do for t in $TOPOLOGIES; do for c in $CCS; do for q in $QUEUES; do
      echo "$r $t $c $q"
    done; done; done; done
    return
  fi
  echo "$br $bt $bc $bq"
  for r in $RATES; do [ "$r" = "$br" ] || echo "$r $bt $bc $bq"; done
  for t in $TOPOLOGIES; do [ "$t" = "$bt" ] || echo "$br $t $bc $bq"; done
  for c in $CCS; do [ "$c" = "$bc" ] || echo "$br $bt $c $bq"; done
  for q in $QUEUES; do [ "$q" = "$bq" ] || echo "$br $bt $bc $q"; done
}

ROWS="$T/rows.tsv"
: >"$ROWS"
echo "# predict_grid $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, REPS=$REPS ITER=$ITER WARMUP=$WARMUP, MODE=$MODE${HOST_SCHED:+, HOST_SCHED=$HOST_SCHED}"
n=0
while read -r rate topo cc queue; do
  cc_ok "$cc" || continue
  n=$((n + 1))
  cell="$rate $topo $cc $queue"
  args="--tcp-congestion $cc"
  [ "$queue" = default ] || args="$args --queue $queue"
  [ -z "${HOST_SCHED:-}" ] || args="$args --host-sched $HOST_SCHED"
  hosts=8
  case $topo in star:*) hosts=${topo#star:} ;; esac
  synth_dirs=$(synth_for "$hosts")
  env_cell=(RATE="$rate" NICDEG_HOSTS="" NAME="pg$n" OUT="$T/cell$n"
            WORKLOADS="$WORKLOADS$synth_dirs" SIZES="$SIZES")
  case $topo in
    star:*)
      env_cell+=(STAR=1 HOSTS="${topo#star:}" LEAFSPINE="") ;;
    leafspine:*)
      shape=${topo#leafspine:}; sched=per-host
      case $shape in *:*) sched=${shape#*:}; shape=${shape%%:*} ;; esac
      args="$args --spine-sched $sched"
      spine_queue=""; [ "$queue" = default ] || spine_queue=$queue
      env_cell+=(STAR="" LEAFSPINE="$shape" SPINE_RATE="$rate" SPINE_QUEUE="$spine_queue") ;;
    *) echo "predict_grid: unknown topology $topo (star:H or leafspine:LxSxH[:per-host|fifo])" >&2; exit 2 ;;
  esac
  echo
  echo "## cell $n: $cell"
  before=$(wc -l <"$ROWS")
  if ! env "${env_cell[@]}" TESTBED_ARGS="$args" ROWS_FILE="$T/cell$n.rows" \
      bash "$HERE/bench/predict_accuracy.sh" "$BUILD" "$DATA" 2>&1 | sed 's/^/  /'; then
    echo "  (cell $n failed; its rows so far are kept)"
  fi
  [ -f "$T/cell$n.rows" ] && sed "s|^|$cell\t|" "$T/cell$n.rows" >>"$ROWS"
  [ "$(wc -l <"$ROWS")" -gt "$before" ] || echo "  (cell $n measured nothing)"
done < <(cells)

echo
echo "# the grid: median measured / predicted of REPS tries (goal 0.95-1.05), the tries' range,"
echo "# every iteration's range (goal 0.90-1.10)"
python3 - "$ROWS" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'rate':>8} {'topology':<24} {'cc':<6} {'queue':>7}  {'workload':<44} {'ratio':>6} {'tries':>11} {'iterations':>11}  ok   runs say")
good = 0
for cell, label, m, f, ratio, lo, hi, ilo, ihi, steal, *why in rows:
    rate, topo, cc, queue = cell.split(" ")
    ok = 0.95 <= float(ratio) <= 1.05 and float(ilo) >= 0.90 and float(ihi) <= 1.10
    good += ok
    print(f"{rate:>8} {topo:<24} {cc:<6} {queue:>7}  {label:<44} {float(ratio):6.2f} {lo + '-' + hi:>11} {ilo + '-' + ihi:>11}  {('yes' if ok else 'NO'):<4} {why[0] if why else '-'}")
print(f"# {good} of {len(rows)} rows meet the goal")
print("# runs say: iterations (of all tries') with TCP retransmission timeouts (RTO: the queues")
print("# dropped, stalls the model has no losses to predict), with bbr's PROBE_RTT on a busy")
print("# connection (PROBE: modelled where it was recorded) and with a rank waiting for a core")
print("# (CPU: this machine set the time)")
EOF
[ ${#skipped[@]} -eq 0 ] || printf "# not measured: %s\n" "${skipped[@]}" | sort -u

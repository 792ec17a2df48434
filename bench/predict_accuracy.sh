#!/usr/bin/env bash
# Issue 13's benchmark: how well does the model predict a real run on a healthy network?
# On a calibrated testbed (`genie testbed up` + `genie testbed calibrate`), every workload runs
# for real (`genie launch --testbed -- run --predict`, one rank per host) and is set beside:
#   - the flow model's prediction (what `--predict` prints: the calibrated description, each
#     iteration predicted with its ranks' measured start skew; the median of those),
#   - ASTRA-sim's congestion-aware and -unaware models on the same description
#     (`genie simulate --network-model aware|unaware --comm-streams concurrent`, as run issues;
#     their ranks all start at 0).
# The table gives the median measured step over ITER iterations and measured / predicted for each
# model. Each row is REPS paired tries: a fresh calibration, then the run predicted from it. On
# a shared 2-core VM a testbed's all-hosts goodput drifts (0.88-0.95 within minutes) as the CPU
# it gets does, and a calibration made minutes before a run carries that drift into the ratio.
# The row shows the try with the median flow ratio (even REPS: the higher of the middle two),
# and the range of the REPS ratios.
# Workloads: the shipped STG steps, a ring all-reduce sweep SIZES, then the same on a
# leaf-spine testbed whose spine links run at SPINE_RATE (contention the model must see), then
# the NIC-degradation example (Figure 1) at NICDEG_HOSTS hosts: its flagged iterations and the
# host it names.
# Needs root (network namespaces). Everything it builds is removed on exit, also on failure.
# Usage: bench/predict_accuracy.sh BUILD_DIR [DATA_DIR]
#   RATE=1gbit HOSTS=8 ITER=3 NAME=pacc OUT=DIR (keep the runs' files) REPS=3
#   WARMUP=1 (iterations before the measured ones: cubic through the testbed's deep queue takes
#   12-25 s of a run's start to even its connections' windows out, docs/accuracy.md)
#   SMALL_ITER=50 (iterations of the all-reduces of at most 1 MiB: a few ms each, whose steps
#   move ±10-20 % from one iteration to the next on shared cores, so a median of 3 is noise and
#   one of 20 still moved ±5 %: the 64 KiB all-reduce's 20 read 0.91-1.31 of their predictions)
#   WORKLOADS="gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2" ("" skips; an
#   entry with a '/' is a workload folder's path, e.g. one `genie synth` wrote)
#   ROWS_FILE=FILE: also append each row there, tab-separated (label, measured and flow step ns,
#   ratio, the tries' range, every iteration's range, steal %, what the runs say: iterations
#   with retransmission timeouts and with a rank waiting for a core): what predict_grid.sh reads
#   SIZES="64KiB 256KiB 1MiB 4MiB 16MiB 64MiB" ("" skips)
#   STAR=1 ("" skips the star testbed) LEAFSPINE=2x1x4 SPINE_RATE=500mbit ("" skips)
#   SPINE_QUEUE="" (`--spine-queue` of the leaf-spine links; "": the testbed's default, 2 MB at
#   500 Mbit/s. How its depth moves BBR's shares of a spine link: docs/testbed.md)
#   NICDEG_HOSTS=16 ("" skips)
#   CALIBRATE="--accept-findings" (flags for `genie testbed calibrate`: on a loaded 2-core
#   machine its all-to-all scan may find the CPU, not the network, uneven; `--basis one-pair`
#   predicts with one pair's figures instead of every host's at once, docs/prediction.md)
#   HASH=l4 (the leaf-spine's ECMP hash; l3: the model knows each pair's spine)
#   TESTBED_ARGS="" (more `genie testbed up` flags for both testbeds, e.g. "--tcp-congestion cubic")
#   STEAL_MAX=5 TRIES=3: a virtual machine's steal time (CPU its hypervisor gave to others, from
#   /proc/stat) slows the ranks' software but not the model; seen at 26-29 % on a 2-core VM
#   under load, where a 64 KiB all-reduce's iterations went from 2 ms to 4-15 ms. A row (and a
#   calibration) measured with more than STEAL_MAX % steal is measured again, up to TRIES times;
#   the row keeps its least-stolen try, and the `steal` column says how much it had.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "${1:?usage: bench/predict_accuracy.sh BUILD_DIR [DATA_DIR]}" && pwd)"
DATA="$(cd "${2:-$HERE/tests/data}" && pwd)"
G="$BUILD/tools/genie/genie"
RATE=${RATE:-1gbit}
HOSTS=${HOSTS:-8}
ITER=${ITER:-3}
WARMUP=${WARMUP:-1}
SMALL_ITER=${SMALL_ITER:-50}
NAME=${NAME:-pacc}
WORKLOADS=${WORKLOADS-"gpt_dp2_tp2_pp2 moe_dp2_ep4 llama_fsdp_dp4_tp2 llama_dp2_tp2_sp2"}
SIZES=${SIZES-"64KiB 256KiB 1MiB 4MiB 16MiB 64MiB"}
STAR=${STAR-1}
LEAFSPINE=${LEAFSPINE-2x1x4}
SPINE_RATE=${SPINE_RATE:-500mbit}
SPINE_QUEUE=${SPINE_QUEUE:-}
NICDEG_HOSTS=${NICDEG_HOSTS-16}
STEAL_MAX=${STEAL_MAX:-5}
TRIES=${TRIES:-3}
REPS=${REPS:-3}

if [ "$(id -u)" -ne 0 ]; then echo "predict_accuracy: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "predict_accuracy: no genie at $G; build it first" >&2; exit 1; }

T=$(mktemp -d)
UP=""
cleanup() {
  local rc=$?
  [ -n "$UP" ] && "$G" testbed down "$UP" >/dev/null 2>&1 || true
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp -r "$T"/. "$OUT"/ 2>/dev/null || true; fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# cpu_ticks: the machine's steal and total CPU ticks so far (/proc/stat: user nice system idle
# iowait irq softirq steal; guest time is inside user already).
cpu_ticks() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
# steal_pct "BEFORE" "AFTER": the share of CPU time stolen in between, in %.
steal_pct() {
  awk -v a="$1" -v b="$2" 'BEGIN{split(a, x, " "); split(b, y, " "); t = y[2] - x[2];
    printf "%.1f", (t > 0 ? 100 * (y[1] - x[1]) / t : 0)}'
}
under_steal_max() { awk -v s="$1" -v m="$STEAL_MAX" 'BEGIN{exit !(s <= m)}'; }

# calibrate NAME: `genie testbed calibrate` until one is made with at most STEAL_MAX % steal
# (TRIES times; a healthy testbed's scan can still find one pair retransmitting on a busy
# machine: such a refusal, which leaves the saved calibration alone, is measured again too).
# Writes $T/NAME.calibration (its summary) and $T/NAME.network.yml; sets CAL_STEAL.
# RANKS: the row's ranks, one per host; fewer than the testbed's hosts are calibrated on
# those hosts (`--hosts`: the all-hosts figures follow how many hosts share the cores).
calibrate() {
  local name=$1 ranks=${2:-0} k before ok="" on=()
  if [ "$ranks" -ge 2 ] && [ "$ranks" -lt "$HOSTS" ] &&
      "$G" testbed calibrate --help | grep -q -- --hosts; then
    on=(--hosts "$ranks")
  fi
  for ((k = 1; k <= TRIES; k++)); do
    before=$(cpu_ticks)
    # shellcheck disable=SC2086 # CALIBRATE is a list of flags
    if "$G" testbed calibrate "$name" "${on[@]}" ${CALIBRATE:-} >"$T/$name.calibration" 2>&1; then
      ok=1
    else
      echo "# calibration of $name refused or failed: $(grep -v '^testbed' "$T/$name.calibration" | head -3 | tr '\n' ' ')"
      continue
    fi
    CAL_STEAL=$(steal_pct "$before" "$(cpu_ticks)")
    under_steal_max "$CAL_STEAL" && break
  done
  [ -n "$ok" ] ||
    { echo "predict_accuracy: calibration of $name failed:" >&2; cat "$T/$name.calibration" >&2; exit 1; }
  "$G" testbed network-yml "$name" -o "$T/$name.network.yml" >/dev/null
}

# testbed_up NAME ARGS...: build it. Every row calibrates it afresh (one()); the first row's
# calibration is summarised under the testbed's header.
testbed_up() {
  local name=$1; shift
  # shellcheck disable=SC2086 # TESTBED_ARGS is a list of flags
  "$G" testbed up --name "$name" "$@" ${TESTBED_ARGS:-} >/dev/null
  UP=$name
  UP_ARGS="$* ${TESTBED_ARGS:-}"
  FIRST_CAL=1
}
# first_calibration_summary: after the testbed's first calibration, its header and summary.
first_calibration_summary() {
  [ -n "${FIRST_CAL:-}" ] || return 0
  FIRST_CAL=""
  echo "# testbed $UP ($UP_ARGS), first calibration ($CAL_STEAL % steal):"
  grep -E 'one pair|all hosts|uses|ECMP' "$T/$UP.calibration" | sed 's/^/#   /' || true
}
testbed_down() { "$G" testbed down "$UP" >/dev/null 2>&1 || true; UP=""; }

# step_median DIR: the median step (ns) of a simulate or run results.json.
step_median() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['step_time_ns']['median'])" "$1/results.json"; }

printf '%-36s %10s %10s %6s %11s %11s %6s %7s %6s  %s\n' workload measured flow ratio "(range)" \
  iterations aware unaware steal% "runs say"
# one LABEL WORKLOAD_DIR RANKS [ITERATIONS]: REPS tries, each a fresh calibration then the real run
# with --predict (a run with more than STEAL_MAX % steal is measured again, up to TRIES times,
# keeping the least stolen). The try with the median flow ratio is shown, beside ASTRA-sim's
# two models on the network it was predicted on (their columns: measured / predicted).
one() {
  local label=$1 w=$2 n=$3 iters=${4:-$ITER} d="$T/runs/$1"
  mkdir -p "$d"
  local rep k before steal best best_steal
  for ((rep = 1; rep <= REPS; rep++)); do
    calibrate "$UP" "$n"
    first_calibration_summary
    cp "$T/$UP.network.yml" "$d/rep$rep.network.yml"
    cp "$T/$UP.calibration" "$d/rep$rep.calibration"
    best=""; best_steal=""
    for ((k = 1; k <= TRIES; k++)); do
      before=$(cpu_ticks)
      if ! "$G" launch --testbed "$UP" -n "$n" -- run "$w" -n "$iters" --warmup "$WARMUP" --predict \
          -o "$d/rep$rep.try$k" >"$d/rep$rep.try$k.log" 2>&1; then
        echo "predict_accuracy: $label failed on $UP:" >&2; tail -20 "$d/rep$rep.try$k.log" >&2
        return 1
      fi
      steal=$(steal_pct "$before" "$(cpu_ticks)")
      if [ -z "$best" ] || awk -v s="$steal" -v b="$best_steal" 'BEGIN{exit !(s < b)}'; then
        best=$k; best_steal=$steal
      fi
      under_steal_max "$steal" && break
    done
    mv "$d/rep$rep.try$best" "$d/rep$rep"; mv "$d/rep$rep.try$best.log" "$d/rep$rep.log"
    echo "$best_steal" >"$d/rep$rep.steal"
  done
  # Each try's median measured and predicted step over its iterations; the median try.
  local pick measured flow range model aware unaware
  pick=$(python3 - "$d" "$REPS" <<'EOF'
import json, statistics, sys
d, reps = sys.argv[1], int(sys.argv[2])
tries, its = [], []
rto = probe = cpu = 0
for r in range(1, reps + 1):
    p = json.load(open(f"{d}/rep{r}/results.json"))["prediction"]
    m = statistics.median(i["measured_step_ns"] for i in p["iterations"])
    f = statistics.median(i["expected_step_ns"] for i in p["iterations"])
    tries.append((m / f, r, m, f))
    its += [i["measured_step_ns"] / i["expected_step_ns"] for i in p["iterations"] if i["expected_step_ns"] > 0]
    # What the runs themselves say of their iterations: retransmission timeouts (the links'
    # queues dropped), bbr's PROBE_RTT on busy connections (modelled where recorded) and ranks
    # waiting for a core (this machine's CPU set the time).
    rto += sum(1 for i in p["iterations"] if i.get("tcp_timeouts", 0) > 0)
    probe += sum(1 for i in p["iterations"] if i.get("probe_rtt_episodes", 0) > 0)
    cpu += sum(1 for i in p["iterations"] if i.get("cpu_wait_fraction", 0) > 0)
tries.sort()
_, r, m, f = tries[len(tries) // 2]
why = ",".join(f"{k}{v}/{len(its)}" for k, v in (("RTO", rto), ("PROBE", probe), ("CPU", cpu))
               if v) or "-"
print(r, int(m), int(f), f"({tries[0][0]:.2f}-{tries[-1][0]:.2f})" if reps > 1 else "-",
      f"{min(its):.2f}-{max(its):.2f}", why)
EOF
)
  read -r rep measured flow range iters_range why <<<"$pick"
  for model in aware unaware; do
    "$G" simulate "$w" --network "$d/rep$rep.network.yml" --network-model "$model" \
      --comm-streams concurrent -q -o "$d/$model" >"$d/$model.log" 2>&1 ||
      { echo "predict_accuracy: simulate $label ($model) failed:" >&2; tail "$d/$model.log" >&2; return 1; }
  done
  aware=$(step_median "$d/aware"); unaware=$(step_median "$d/unaware")
  python3 - "$label" "$measured" "$flow" "$aware" "$unaware" "$(cat "$d/rep$rep.steal")" "$range" \
    "$iters_range" "${ROWS_FILE:-}" "$why" <<'EOF'
import sys
label, m, f, a, u, steal = sys.argv[1], *map(float, sys.argv[2:7])
why = sys.argv[10]
s = lambda ns: f"{ns / 1e9:.3f} s" if ns >= 1e8 else f"{ns / 1e6:.2f} ms"
print(f"{label:<36} {s(m):>10} {s(f):>10} {m / f:6.2f} {sys.argv[7]:>11} {sys.argv[8]:>11} {m / a:6.2f} {m / u:7.2f} {steal:6.1f}  {why}")
if sys.argv[9]:  # one tab-separated row per workload, for bench/predict_grid.sh
    lo, hi = sys.argv[7].strip("()").split("-") if sys.argv[7] != "-" else (f"{m / f:.2f}",) * 2
    ilo, ihi = sys.argv[8].split("-")
    with open(sys.argv[9], "a") as out:
        out.write("\t".join([label, str(int(m)), str(int(f)), f"{m / f:.4f}", lo, hi, ilo, ihi, f"{steal:.1f}", why]) + "\n")
EOF
}

# A WORKLOADS entry: a shipped STG step's name (tests/data/traces/generated/stg/NAME, 8 ranks)
# or a workload folder's path (e.g. `genie synth -o DIR`; its ranks: its .et files).
dir_of() { case $1 in */*) echo "$1" ;; *) echo "$DATA/traces/generated/stg/$1" ;; esac; }
label_of() { basename "$1"; }
ranks_of() { find "$(dir_of "$1")" -maxdepth 1 -name '*.et*' | wc -l; }

sweep() {
  local topo=$1 s
  for s in $SIZES; do
    "$G" gen collective --type all_reduce --size "$s" -n "$HOSTS" -o "$T/w/ar$s" >/dev/null
    local bytes iters=$ITER
    bytes=$(numfmt --from=iec-i "${s%B}" 2>/dev/null || numfmt --from=iec "${s%B}")
    [ "$bytes" -le 1048576 ] && [ "$SMALL_ITER" -gt "$ITER" ] && iters=$SMALL_ITER
    one "all_reduce $s ($topo)" "$T/w/ar$s" "$HOSTS" "$iters"
  done
}

if [ -n "$STAR" ] && [ -n "$WORKLOADS$SIZES" ]; then
  testbed_up "$NAME" --topology "star:$HOSTS" --rate "$RATE"
  for w in $WORKLOADS; do one "$(label_of "$w")" "$(dir_of "$w")" "$(ranks_of "$w")"; done
  sweep "star:$HOSTS"
  testbed_down
fi

if [ -n "$LEAFSPINE" ]; then
  L=${LEAFSPINE%%x*}; rest=${LEAFSPINE#*x}; H=${rest#*x}
  HOSTS=$((L * H))
  spine=()
  if "$G" testbed up --help | grep -q -- --spine-rate; then spine=(--spine-rate "$SPINE_RATE"); fi
  if [ -n "$SPINE_QUEUE" ] && "$G" testbed up --help | grep -q -- --spine-queue; then
    spine+=(--spine-queue "$SPINE_QUEUE")
  fi
  if [ ${#spine[@]} -eq 0 ]; then
    echo "# leafspine: this genie has no --spine-rate; the spine links run at $RATE"
  fi
  # The half-rate spine is by design: calibration's scan would name it (the doctor judges it as
  # a slow fabric), so its findings are accepted here; goodput comes from pairs within a leaf.
  star_calibrate=${CALIBRATE:-}
  CALIBRATE="${CALIBRATE:-} --accept-findings"
  testbed_up "${NAME}l" --topology "leafspine:$LEAFSPINE" --rate "$RATE" "${spine[@]}" \
    --hash "${HASH:-l4}"
  for w in $WORKLOADS; do one "$(label_of "$w") (leafspine)" "$(dir_of "$w")" "$(ranks_of "$w")"; done
  sweep "leafspine:$LEAFSPINE"
  testbed_down
  CALIBRATE=$star_calibrate
fi

if [ -n "$NICDEG_HOSTS" ]; then
  echo
  echo "# Figure 1 (examples/nic-degradation) at $NICDEG_HOSTS hosts"
  OUT="$T/nicdeg" NAME="${NAME}n" bash "$HERE/examples/nic-degradation/run.sh" "$BUILD" \
    "$NICDEG_HOSTS" >"$T/nicdeg.log" 2>&1 ||
    { echo "predict_accuracy: the NIC-degradation example failed:" >&2; tail -30 "$T/nicdeg.log" >&2; exit 1; }
  python3 - "$T/nicdeg/figure.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'iter':>4} {'measured':>9} {'predicted':>9} fault flagged   (busbw GB/s)")
for r in rows:
    print(f"{r['iteration']:>4} {float(r['measured_busbw_gbps']):9.4f} {float(r['predicted_busbw_gbps']):9.4f} {r['fault']:>5} {r['flagged']:>7}")
fault = [r for r in rows if r['fault'] == '1']
ok = all(r['flagged'] == '1' for r in fault[1:]) and \
     all(r['flagged'] == '0' for r in rows if r['fault'] == '0')
print(f"# flagged exactly the iterations after the fault (the first one in flight may go either way): {'yes' if ok else 'NO'}")
EOF
  python3 - "$T/nicdeg/results/results.json" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1])).get("localization", {}).get("findings", [])
print("# named: " + (" ".join(x["kind"] + ":" + x.get("host", "-") for x in f) or "nothing"))
EOF
fi

#!/usr/bin/env bash
# `make run`: genie's main job on the embedded default — the shipped 8-rank GPT training step
# (data x tensor x pipeline parallel 2x2x2, from the Symbolic Tensor Graph generator).
#
# As root (network namespaces): the step is replayed as real TCP traffic on a star:8 testbed
# (8 namespaces, one bridge, every link shaped to 1 Gbit/s), calibrated, then measured beside
# the flow model's prediction; then the NIC-degradation example (Figure 1 of the paper): an
# all-reduce repeated 15 times, one host's NIC slowed a third of the way through, the slow
# iterations flagged and the host named. Each step prints its time; the testbeds are removed
# on exit.
# Otherwise (or with GENIE_RUN=loopback): the same step over loopback, checked then measured,
# with the simulated prediction beside it. Changes nothing on the machine.
# Results go to build/run-default/ (GENIE_RUN_OUT=DIR: there instead).
# Usage: scripts/run-default.sh GENIE [DATA_DIR]   (DATA_DIR defaults to the checkout's tests/data)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
GENIE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
DATA=${2:-$HERE/tests/data}
WORKLOAD="$DATA/traces/generated/stg/gpt_dp2_tp2_pp2"
if [ ! -d "$WORKLOAD" ]; then
  echo "make run: the shipped workload $WORKLOAD is missing; run from a full checkout" \
       "(it ships in tests/data) or give DATA= a folder laid out like tests/data" >&2
  exit 1
fi
OUT=${GENIE_RUN_OUT:-$HERE/build/run-default}
rm -rf "$OUT"
mkdir -p "$OUT"
# The testbeds' names (GENIE_RUN_TESTBED=NAME, up to 12 characters: NAME and NAME_nd, e.g.
# beside a make run already going).
TESTBED=${GENIE_RUN_TESTBED:-genie_run}
NICDEG_TESTBED=genie_nicdeg
[ -z "${GENIE_RUN_TESTBED:-}" ] || NICDEG_TESTBED=${GENIE_RUN_TESTBED}_nd
# Each step prints its time (and, under make, the time since `make run` started).
step() { bash "$HERE/scripts/phase.sh" "$@"; }

# Why the testbed demo cannot run here, or nothing when it can.
why_not_testbed() {
  if [ "${GENIE_RUN:-}" = loopback ]; then echo "GENIE_RUN=loopback"; return; fi
  if [ "$(id -u)" -ne 0 ]; then echo "not root (a testbed needs network namespaces and tc)"; return; fi
  command -v tc >/dev/null || { echo "no tc (iproute2)"; return; }
  local probe="genie-probe-$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "this machine does not let root create network namespaces (a container without CAP_SYS_ADMIN?)"
    return
  fi
  ip netns del "$probe"
}

loopback() {
  step inspect "$GENIE" inspect "$WORKLOAD"
  echo
  # First prove the replay moves the right data: one iteration with real buffers, every
  # reduction computed and every rank's result checked (slower: the checking is CPU work).
  step verify bash -c 'set -o pipefail; "$1" run "$2" --verify --output "$3" 2>&1 | grep -E "verify:|failed|error" | head -3' \
      _ "$GENIE" "$WORKLOAD" "$OUT/verify"
  echo
  # Then the measurement: 5 iterations after a warm-up, timings free of the checking.
  step measure "$GENIE" run "$WORKLOAD" --iterations 5 --warmup 1 \
      --network "$HERE/examples/loopback.yml" --output "$OUT" --trace-out "$OUT/trace.json"
  echo
  echo "results: $OUT/results.json   timeline: $OUT/trace.json (open in https://ui.perfetto.dev)"
}

testbed() {
  "$GENIE" testbed down "$TESTBED" >/dev/null 2>&1 || true  # left over from an interrupted run
  if ! step "testbed up" "$GENIE" testbed up --name "$TESTBED" --topology star:8 --rate 1gbit; then
    echo "make run: the testbed did not come up (above); falling back to loopback" >&2
    loopback
    return
  fi
  trap '"$GENIE" testbed down "$TESTBED" >/dev/null 2>&1 || true' EXIT
  echo
  # Short probes give the model this machine's goodput and per-message overhead.
  step calibrate "$GENIE" testbed calibrate "$TESTBED"
  echo
  local launch=("$GENIE" launch --testbed "$TESTBED" -n 8 --)
  # One iteration with real buffers, every rank's result checked, before anything is timed.
  step verify bash -c 'set -o pipefail; "${@:3}" run "$1" --verify -o "$2" 2>&1 | grep -E "verify:|failed|error" | head -3' \
      _ "$WORKLOAD" "$OUT/verify" "${launch[@]}"
  echo
  # The measurement: 5 iterations after a warm-up, each beside the flow model's prediction.
  step measure "${launch[@]}" run "$WORKLOAD" -n 5 --warmup 1 --predict \
      -o "$OUT/gpt" --trace-out "$OUT/gpt/trace.json" --report "$OUT/gpt/report.html"
  "$GENIE" testbed down "$TESTBED" >/dev/null
  trap - EXIT
  echo
  echo "=== Figure 1: a NIC slows down mid-run (examples/nic-degradation) ==="
  # 15 iterations, not the figure's 30: every one after the fault takes ~3 s (a tenth of the
  # rate) and shows the same thing, so half of them halve the step (~60 s of runs to ~30 s);
  # the fault still hits a third of the way through and the host is still named.
  OUT="$OUT/nic-degradation" NAME=$NICDEG_TESTBED ITERATIONS=15 step nic-degradation \
      bash "$HERE/examples/nic-degradation/run.sh" "$(dirname "$(dirname "$(dirname "$GENIE")")")" 8
  echo
  echo "results: $OUT/gpt/results.json (report: $OUT/gpt/report.html)," \
       "$OUT/nic-degradation/results/results.json (report: $OUT/nic-degradation/report.html)"
}

reason=$(why_not_testbed)
if [ -z "$reason" ]; then
  testbed
else
  echo "make run: over loopback, not on a testbed: $reason" >&2
  echo
  loopback
fi

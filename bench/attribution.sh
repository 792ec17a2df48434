#!/usr/bin/env bash
# Issue 43's attribution benchmark: does `genie run --predict --localize` name the right cause
# (and culprit) of each slow iteration? On each testbed of TOPOLOGIES (at RATE, calibrated once),
# every scenario runs REPS times: WORKLOAD (8 ranks, one per host) for ITER measured iterations,
# the fault taking effect at measured iteration FAULT_AT (counted from 1) and lasting to the end.
#   healthy                  nothing injected; nothing may be named in any iteration
#   straggler rR xF          {rank: R, compute: F} for R in STRAGGLERS, F in FACTORS
#   stall                    {rank: 2, stall: STALL} once, at FAULT_AT
#   slow link out / in       one host's NIC at RATE/4 in that direction
#   straggler + slow link    rank 1 at 1.5x and h5's NIC at RATE/4 both ways
#   second job packed        a second 8-rank job of WORKLOAD (genie launch --jobs), hosts packed
#   second job interleaved   the same, interleaved (every host link shared)
# Ground truth comes from the scenario, never from genie's output: a fault slows the iterations
# from FAULT_AT on (a stall only FAULT_AT); a second job shares a link only interleaved (packed,
# the two jobs' hosts are disjoint and their traffic stays within them on a star and within a
# leaf on the leaf-spine: nothing to name). An iteration is right when every expected cause is
# named with its culprit (the straggler's rank; the network's host, or on a leaf-spine a link
# of the host; the other job) and nothing else is named. Printed: per scenario the flagged
# iterations right / flagged, the expected iterations flagged / expected, then the confusion
# table (rows: what was injected; columns: what was named, over every flagged iteration; for
# healthy runs over every iteration).
# The attribution reads the measurement only (docs/attribution.md); this script alone knows the
# schedule. Needs root. Everything it builds is removed on exit, also on failure.
# Usage: bench/attribution.sh BUILD_DIR [DATA_DIR]
#   TOPOLOGIES="star:8 leafspine:2x2x4" RATE=1gbit REPS=3 ITER=6 FAULT_AT=3 NAME=gattr
#   WORKLOAD=text_converter/DLRM_HybridParallel_8npus_1pass (under DATA_DIR/traces/generated; 8
#   ranks with 51 ms of compute each between its all-reduces and all-to-alls: a straggler needs
#   compute to straggle with, and the shipped STG steps have under 1 ms) STRAGGLERS="1 4 6"
#   FACTORS="2x 3x" (1.5x adds ~20 % to this workload's step: under the 25 % flag threshold)
#   STALL=1s SCENARIOS="" (a regex: only the scenarios it matches)
#   OUT=DIR (keep every run's results) CALIBRATE="--accept-findings"
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/attribution.sh BUILD_DIR [DATA_DIR]}" && pwd)"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${2:-$HERE/tests/data}"
G="$BUILD/tools/genie/genie"
TOPOLOGIES=${TOPOLOGIES:-"star:8 leafspine:2x2x4"}
RATE=${RATE:-1gbit}
REPS=${REPS:-3}
ITER=${ITER:-6}
FAULT_AT=${FAULT_AT:-3}
NAME=${NAME:-gattr}
WORKLOAD=${WORKLOAD:-text_converter/DLRM_HybridParallel_8npus_1pass}
STRAGGLERS=${STRAGGLERS:-"1 4 6"}
FACTORS=${FACTORS:-"2x 3x"}
STALL=${STALL:-1s}
SCENARIOS=${SCENARIOS:-}
CALIBRATE=${CALIBRATE:---accept-findings}
if [ "$(id -u)" -ne 0 ]; then echo "attribution: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "attribution: no genie at $G; build it first" >&2; exit 1; }
W="$DATA/traces/generated/$WORKLOAD"
[ -e "$W.0.et" ] || [ -d "$W" ] || { echo "attribution: no workload $W" >&2; exit 1; }
T=$(mktemp -d)
OUT=${OUT:-$T/runs}
mkdir -p "$OUT"
trap '"$G" testbed down "$NAME" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT

quarter=$(python3 -c "
import re,sys
m=re.fullmatch(r'(\d+(?:\.\d+)?)([kmg]?)bit', sys.argv[1].lower())
print(str(int(float(m.group(1))*{'':1,'k':1e3,'m':1e6,'g':1e9}[m.group(2)]/4))+'bit')" "$RATE")

# name | faults (entries joined by ';', "" none) | jobs placement ("" one job) | expected, as
# "cause:culprit" joined by ' ' ("" nothing) | first slow iteration (0-based) | last ("" end)
scenarios() {
  local f0=$((FAULT_AT - 1))
  echo "healthy||||"
  for r in $STRAGGLERS; do
    for f in $FACTORS; do
      echo "straggler r$r $f|{iteration: $FAULT_AT, rank: $r, compute: $f}||straggler:rank $r|$f0|"
    done
  done
  echo "stall|{iteration: $FAULT_AT, rank: 2, stall: $STALL}||straggler:rank 2|$f0|$f0"
  echo "slow link out|{iteration: $FAULT_AT, link: h3, rate: $quarter, direction: out}||network:h3|$f0|"
  echo "slow link in|{iteration: $FAULT_AT, link: h5, rate: $quarter, direction: in}||network:h5|$f0|"
  echo "straggler + slow link|{iteration: $FAULT_AT, rank: 1, compute: 1.5x};{iteration: $FAULT_AT, link: h5, rate: $quarter, direction: both}||straggler:rank 1 network:h5|$f0|"
  echo "second job packed||packed|||"
  echo "second job interleaved||interleaved|contention:b|0|"
}

# Judges one run: prints "flagged right expected hit" then one "named" label per judged
# iteration (the confusion table's columns).
judge() {
  python3 - "$1" "$2" "$3" "$4" "$ITER" <<'EOF'
import json, sys
path, expected, first, last, iters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
import re
# "cause:culprit", the culprit may hold a space ("rank 1").
want = set(re.findall(r'(straggler:rank \d+|network:[\w.-]+|contention:[\w.-]+)', expected))
lo = int(first) if first else None
hi = int(last) if last else iters - 1
try:
    doc = json.load(open(path))
except Exception:
    print("0 0 0 0"); print("no-results"); sys.exit(0)
pred = {it['iteration']: it for it in doc.get('prediction', {}).get('iterations', [])}
attr = {it['iteration']: it for it in doc.get('attribution', {}).get('iterations', [])}
def named(a):
    out = set()
    for c in a.get('causes', []):
        cause = c.get('cause')
        if cause == 'straggler':
            ranks = [r.get('rank') for r in c.get('ranks', [])] or [c.get('culprit', '').replace('rank ', '')]
            out |= {f'straggler:rank {r}' for r in ranks}
        elif cause == 'network':
            # The culprit is the first place (the strongest finding); further places count only
            # when they involve it too (a slow pair to or from the named host), else they are
            # named as places of their own.
            places = c.get('places', [])
            first = places[0].get('host', '') if places else c.get('culprit', '').split(':')[0]
            out.add(f'network:{first}')
            for p in places[1:]:
                if not re.search(r'\b' + re.escape(first) + r'\b', p.get('text', '')):
                    out.add(f"network:{p.get('host', '')}")
        elif cause == 'contention':
            jobs = {n.get('job', '') for n in c.get('neighbours', [])} or {c.get('culprit', '').replace('job ', '')}
            out |= {f'contention:{j}' for j in jobs}
        else:
            out.add(cause)
    return out
def culprits(s):  # what is judged: 'unexplained' names no culprit (its share is the rest)
    return {x for x in s if x != 'unexplained'}
def label(s):
    return '+'.join(sorted({x.split(':')[0] for x in s})) or 'none'
flagged = right = expected_n = hit = 0
labels = []
for i in sorted(pred):
    # Flagged: slower than expected, or (a job among others) slower than its healthy alone
    # expectation, which is what the attribution explains.
    slow = bool(pred[i].get('slow')) or bool(attr.get(i, {}).get('causes'))
    got = named(attr.get(i, {})) if slow else set()
    in_window = bool(want) and lo is not None and lo <= i <= hi
    if in_window:
        expected_n += 1
        hit += slow
    if not want:  # healthy or packed: every iteration is judged, nothing may be named
        labels.append(label(got))
        flagged += slow
        right += slow and not culprits(got)
        continue
    if slow:
        flagged += 1
        labels.append(label(got))
        # Right: every expected cause and culprit named, nothing else; outside the window nothing.
        right += (culprits(got) == want) if in_window else (not culprits(got))
print(flagged, right, expected_n, hit)
for l in labels: print(l)
EOF
}

declare -A CONFUSION
ROWS=()
COLS=()
add() {  # row col
  local k="$1|$2"
  CONFUSION[$k]=$(( ${CONFUSION[$k]:-0} + 1 ))
  [[ " ${ROWS[*]-} " == *" $1 "* ]] || ROWS+=("$1")
  [[ " ${COLS[*]-} " == *" $2 "* ]] || COLS+=("$2")
}

printf '%-16s %-24s %5s %16s %18s\n' testbed scenario reps "right/flagged" "flagged/expected"
for topo in $TOPOLOGIES; do
  kind=${topo%%:*}
  shape=${topo#*:}
  "$G" testbed down "$NAME" >/dev/null 2>&1 || true
  if [ "$kind" = star ]; then
    "$G" testbed up --name "$NAME" --topology "star:$shape" --rate "$RATE" >/dev/null
  else
    "$G" testbed up --name "$NAME" --topology "leafspine:$shape" --rate "$RATE" >/dev/null
  fi
  # shellcheck disable=SC2086  # CALIBRATE is a list of flags
  "$G" testbed calibrate "$NAME" $CALIBRATE >/dev/null
  # star:H has H hosts; leafspine:LxSxH, L leaves of H hosts.
  if [ "$kind" = star ]; then hosts=$shape; else IFS=x read -r l _ h <<<"$shape"; hosts=$((l * h)); fi
  while IFS='|' read -r label faults placement expected first last; do
    [ -z "$SCENARIOS" ] || [[ "$label" =~ $SCENARIOS ]] || continue
    tf=0; tr=0; te=0; th=0
    row="$label"
    [[ "$label" == straggler\ r* ]] && row="straggler"
    for rep in $(seq 1 "$REPS"); do
      dir="$OUT/$kind/${label// /_}/$rep"
      rm -rf "$dir"; mkdir -p "$dir"
      fflag=""
      if [ -n "$faults" ]; then
        { echo "faults:"; IFS=';' read -ra entries <<<"$faults"; for e in "${entries[@]}"; do echo "  - $e"; done; } >"$dir/faults.yml"
        fflag="--faults $dir/faults.yml"
      fi
      if [ -z "$placement" ]; then
        # shellcheck disable=SC2086
        "$G" launch --testbed "$NAME" -n "$hosts" -- run "$W" -n "$ITER" --warmup 1 --predict \
          --localize $fflag -o "$dir" >"$dir/out.txt" 2>&1 || true
        results="$dir/results.json"
      else
        cat >"$dir/jobs.yml" <<EOF
testbed: $NAME
output: $dir
jobs:
  - name: a
    ranks: $hosts
    placement: $placement
    iterations: $ITER
    run: {workload: $W, warmup: 1, predict: true, localize: true}
  - name: b
    ranks: $hosts
    placement: $placement
    iterations: $ITER
    run: {workload: $W, warmup: 1}
EOF
        "$G" launch --jobs "$dir/jobs.yml" >"$dir/out.txt" 2>&1 || true
        results="$dir/a/results.json"
      fi
      mapfile -t verdict < <(judge "$results" "$expected" "$first" "$last")
      read -r f r e h <<<"${verdict[0]}"
      tf=$((tf + f)); tr=$((tr + r)); te=$((te + e)); th=$((th + h))
      for l in "${verdict[@]:1}"; do add "$row" "$l"; done
    done
    printf '%-16s %-24s %5s %16s %18s\n' "$topo" "$label" "$REPS" "$tr/$tf" "$th/$te"
  done < <(scenarios)
done

echo
echo "confusion (rows: injected; columns: named, per flagged iteration; healthy and packed: every iteration)"
printf '%-24s' ""
for c in "${COLS[@]}"; do printf ' %14s' "$c"; done
echo
for r in "${ROWS[@]}"; do
  printf '%-24s' "$r"
  for c in "${COLS[@]}"; do printf ' %14s' "${CONFUSION[$r|$c]:-0}"; done
  echo
done

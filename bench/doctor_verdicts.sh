#!/usr/bin/env bash
# Issue 14's doctor benchmark: on star:HOSTS testbeds at RATE, repeat the healthy scan HEALTHY
# times and each degraded case DEGRADED times — one host's transmit side at a third of the rate,
# another host's receive side at a third, 2 % loss on one link — and print, per case, how many
# verdicts were exactly right (the named host and kind and nothing else; "healthy" for the
# healthy scan) and how long each scan took. For HOSTS in 8 and 16 by default, then on
# leafspine:2x2x4 healthy and with one spine link at a quarter of the rate.
# Needs root. Usage: bench/doctor_verdicts.sh BUILD_DIR
#   HOSTS_LIST="8 16" RATE=400mbit HEALTHY=5 DEGRADED=3 NAME=gdv
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/doctor_verdicts.sh BUILD_DIR}" && pwd)"
G="$BUILD/tools/genie/genie"
HOSTS_LIST=${HOSTS_LIST:-"8 16"}
RATE=${RATE:-400mbit}
HEALTHY=${HEALTHY:-5}
DEGRADED=${DEGRADED:-3}
NAME=${NAME:-gdv}
if [ "$(id -u)" -ne 0 ]; then echo "doctor_verdicts: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "doctor_verdicts: no genie at $G; build it first" >&2; exit 1; }
T=$(mktemp -d)
trap '"$G" testbed down "$NAME" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT

rate_bps=$(python3 -c "
import re,sys
m=re.fullmatch(r'(\d+(?:\.\d+)?)([kmg]?)bit', sys.argv[1].lower())
print(int(float(m.group(1))*{'':1,'k':1e3,'m':1e6,'g':1e9}[m.group(2)]))" "$RATE")
third="$((rate_bps / 3))bit"

# case name | fault flags ("" = healthy) | the findings that are right, as "kind:host" sorted
cases() {
  echo "healthy||"
  echo "h2 transmit at 1/3|h2 --rate $third --direction out|slow_transmit:h2"
  echo "h5 receive at 1/3|h5 --rate $third --direction in|slow_receive:h5"
  echo "h3 link 2 % loss|h3 --loss 2%|lossy_link:h3"
}

printf '%-6s %-20s %8s %s\n' hosts case right "seconds per scan"
for hosts in $HOSTS_LIST; do
  "$G" testbed up --name "$NAME" --topology "star:$hosts" --rate "$RATE" >/dev/null
  while IFS='|' read -r label flags want; do
    n=$([ -z "$flags" ] && echo "$HEALTHY" || echo "$DEGRADED")
    right=0
    times=""
    for i in $(seq 1 "$n"); do
      "$G" testbed fault "$NAME" clear >/dev/null
      # shellcheck disable=SC2086  # flags is a list
      [ -z "$flags" ] || "$G" testbed fault "$NAME" $flags >/dev/null
      t0=$(date +%s.%N)
      "$G" launch --testbed "$NAME" -n "$hosts" -- doctor --json "$T/d.json" >"$T/out.txt" 2>&1 || true
      t1=$(date +%s.%N)
      times+=" $(python3 -c "print(f'{$t1 - $t0:.1f}')")"
      got=$(python3 -c "
import json,sys
j=json.load(open(sys.argv[1]))
print(' '.join(sorted({f['kind']+':'+f.get('host','-') for f in j['findings']})))" "$T/d.json" 2>/dev/null || echo "no-json")
      # Loss also costs throughput: for the loss case, every finding must name h3 and one be lossy_link.
      if [ "$got" = "$want" ] || { [ "$want" = lossy_link:h3 ] && [[ " $got " == *" lossy_link:h3 "* ]] && \
           [ -z "$(echo "$got" | tr ' ' '\n' | grep -v ':h3$' || true)" ]; }; then
        right=$((right + 1))
      else
        echo "  ($hosts hosts, $label, scan $i: got '${got:-healthy}')" >&2
      fi
    done
    printf '%-6s %-20s %5s/%-2s %s\n' "$hosts" "$label" "$right" "$n" "$times"
  done < <(cases)
  "$G" testbed fault "$NAME" clear >/dev/null
  "$G" testbed down "$NAME" >/dev/null
done

# leafspine:2x2x4 (8 hosts): healthy (ECMP collisions must not be reported) and one spine link
# at a quarter of the rate (the doctor must name that link).
quarter="$((rate_bps / 4))bit"
"$G" testbed up --name "$NAME" --topology leafspine:2x2x4 --rate "$RATE" >/dev/null
for c in "healthy||" "l0-s1 at 1/4|l0-s1 --rate $quarter|slow_uplink:l0-s1"; do
  IFS='|' read -r label flags want <<<"$c"
  n=$([ -z "$flags" ] && echo "$HEALTHY" || echo "$DEGRADED")
  right=0
  times=""
  for i in $(seq 1 "$n"); do
    "$G" testbed fault "$NAME" clear >/dev/null
    # shellcheck disable=SC2086
    [ -z "$flags" ] || "$G" testbed fault "$NAME" $flags >/dev/null
    t0=$(date +%s.%N)
    "$G" launch --testbed "$NAME" -n 8 -- doctor --json "$T/d.json" >"$T/out.txt" 2>&1 || true
    t1=$(date +%s.%N)
    times+=" $(python3 -c "print(f'{$t1 - $t0:.1f}')")"
    got=$(python3 -c "
import json,sys
j=json.load(open(sys.argv[1]))
print(' '.join(sorted({f['kind']+':'+f.get('link',f.get('host','-')) for f in j['findings']})))" "$T/d.json" 2>/dev/null || echo "no-json")
    if [ "$got" = "$want" ]; then right=$((right + 1)); else echo "  (leafspine, $label, scan $i: got '${got:-healthy}')" >&2; fi
  done
  printf '%-6s %-20s %5s/%-2s %s\n' "2x2x4" "$label" "$right" "$n" "$times"
done
"$G" testbed down "$NAME" >/dev/null

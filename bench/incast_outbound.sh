#!/usr/bin/env bash
# What a host's incast does to its own outgoing traffic, per congestion control and queue depth
# (issue 46; docs/notes/2026-12-07-bbr-windows-through-queues.md). On a star:4 testbed at RATE,
# h0 sends to h1 (one iperf3 flow, the hosts' congestion control); after WARM s, h2 and h3 each
# send FLOWS flows into h0 for INCAST s. The ACKs of h0's flow come back through the switch
# port toward h0, where the incast queues: a connection whose window is bounded (bbr's: about
# twice bandwidth x min RTT plus its ACK-aggregation allowance) then sends a window per that
# longer round trip and h0's link idles; one whose window grows until a loss (cubic) keeps it.
# A flow model of max-min shares gives h0's flow the whole link throughout (ratio 1.00).
# Per cell: h0->h1 alone, its median 0.5 s interval during the incast (from 1 s in), the ratio,
# and the port's backlog and h0's flow's round trip and window (ss) midway.
# Needs root, iperf3 and python3. Everything it builds is removed on exit, also on failure.
# Usage: bench/incast_outbound.sh BUILD_DIR
#   RATE=400mbit CCS="bbr cubic" QUEUES="256KB 1MB default" FLOWS=1 WARM=2 INCAST=6 NAME=incast
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/incast_outbound.sh BUILD_DIR}" && pwd)"
G="$BUILD/tools/genie/genie"
RATE=${RATE:-400mbit}
CCS=${CCS:-"bbr cubic"}
QUEUES=${QUEUES:-"256KB 1MB default"}
FLOWS=${FLOWS:-1}
WARM=${WARM:-2}
INCAST=${INCAST:-6}
NAME=${NAME:-incast}
if [ "$(id -u)" -ne 0 ]; then echo "incast_outbound: needs root (network namespaces); skipped"; exit 0; fi
for t in iperf3 python3; do
  command -v "$t" >/dev/null || { echo "incast_outbound: needs $t (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x "$G" ] || { echo "incast_outbound: no genie at $G; build it first" >&2; exit 1; }
T=$(mktemp -d)
cleanup() {
  pkill -f "iperf3 -s -D -p 52[0-9][0-9] --logfile $T" 2>/dev/null || true
  "$G" testbed down "$NAME" >/dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
addr() { echo "10.100.0.$(($1 + 1))"; }
rate() {  # Mbit/s of an iperf3 JSON: all (sum) or the median 0.5 s interval from $2 s to $3 s
  python3 - "$@" <<'EOF'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
if len(sys.argv) == 2:
    print(f"{d['end']['sum_received']['bits_per_second'] / 1e6:.0f}")
else:
    lo, hi = float(sys.argv[2]), float(sys.argv[3])
    v = [i['sum']['bits_per_second'] / 1e6 for i in d['intervals'] if lo <= i['sum']['start'] < hi]
    print(f"{statistics.median(v):.0f}" if v else "-")
EOF
}

printf '%-6s %-8s %10s %12s %6s %12s %9s %7s\n' cc queue "alone Mb/s" "incast Mb/s" ratio \
  "port backlog" "rtt ms" "cwnd"
for cc in $CCS; do
  for q in $QUEUES; do
    qarg=(); [ "$q" = default ] || qarg=(--queue "$q")
    "$G" testbed down "$NAME" >/dev/null 2>&1 || true
    "$G" testbed up --name "$NAME" --topology star:4 --rate "$RATE" --tcp-congestion "$cc" \
      "${qarg[@]}" >/dev/null
    for h in 0 1; do
      for p in 5201 5202 5203; do
        ip netns exec "$NAME-h$h" iperf3 -s -D -p "$p" --logfile "$T/srv-$h-$p" >/dev/null
      done
    done
    sleep 0.5
    ip netns exec "$NAME-h0" iperf3 -c "$(addr 1)" -p 5201 -t 3 -J >"$T/alone.json"
    total=$(python3 -c "print($WARM + $INCAST + 2)")
    timeout $((total + 30)) ip netns exec "$NAME-h0" iperf3 -c "$(addr 1)" -p 5202 -t "$total" \
      -i 0.5 -J >"$T/out.json" &
    out=$!
    sleep "$WARM"
    timeout $((INCAST + 30)) ip netns exec "$NAME-h2" iperf3 -c "$(addr 0)" -p 5201 -P "$FLOWS" \
      -t "$INCAST" >"$T/in2.txt" 2>&1 &
    in2=$!
    timeout $((INCAST + 30)) ip netns exec "$NAME-h3" iperf3 -c "$(addr 0)" -p 5203 -P "$FLOWS" \
      -t "$INCAST" >"$T/in3.txt" 2>&1 &
    in3=$!
    sleep "$(python3 -c "print($INCAST / 2)")"
    backlog=$(ip netns exec "$NAME-sw" tc -s qdisc show dev h0n0 | grep -o 'backlog [0-9]*b' |
      head -1 | cut -d' ' -f2 || true)
    # h0's data connection to h1 (iperf3's control connection shares the port): the one that
    # has sent the most.
    read -r rtt cwnd < <(ip netns exec "$NAME-h0" ss -tinH dst "$(addr 1)" dport = 5202 |
      python3 -c "
import re, sys
best = None
for line in sys.stdin.read().split('\n'):
    m = re.search(r'bytes_acked:(\d+)', line)
    if m and (best is None or int(m.group(1)) > best[0]):
        rtt = re.search(r' rtt:([0-9.]+)', line); cwnd = re.search(r'cwnd:(\d+)', line)
        best = (int(m.group(1)), rtt.group(1) if rtt else '-', cwnd.group(1) if cwnd else '-')
print(best[1] if best else '-', best[2] if best else '-')" || echo "- -")
    for job in "$in2" "$in3"; do
      wait "$job" || { echo "incast_outbound: an incast sender failed:" >&2; cat "$T"/in?.txt >&2; exit 1; }
    done
    wait "$out" || { echo "incast_outbound: h0's flow to h1 failed" >&2; exit 1; }
    alone=$(rate "$T/alone.json")
    during=$(rate "$T/out.json" "$(python3 -c "print($WARM + 1)")" "$(python3 -c "print($WARM + $INCAST)")")
    ratio=$(python3 -c "print(f'{$during / $alone:.2f}')" 2>/dev/null || echo -)
    printf '%-6s %-8s %10s %12s %6s %12s %9s %7s\n' "$cc" "$q" "$alone" "$during" "$ratio" \
      "${backlog:--}" "${rtt:--}" "${cwnd:--}"
    pkill -f "iperf3 -s -D -p 52[0-9][0-9] --logfile $T" 2>/dev/null || true
  done
done
echo "# h0 sends to h1 alone, then with h2 and h3 sending $FLOWS flow(s) each into h0; ratio:"
echo "# incast / alone (a max-min flow model: 1.00). port backlog: the switch's queue toward h0"
echo "# midway; rtt and cwnd (segments): h0's flow to h1 then (ss)."

#!/usr/bin/env bash
# genie netdelay (the testbed's NFQUEUE delay helper) on a veth link between namespaces gdA and
# gdB, tbf-shaped to RATE (default 1gbit) in both directions; the helper delays what arrives in
# gdB (the A->B direction). Prints:
#   - the delay error: round trips of a 64-byte TCP ping-pong (A->B->A, one direction delayed)
#     minus the idle round trip's median minus the delay, p50/p99/max, at DELAY;
#   - iperf3 A->B goodput at RATE with and without the delay (it keeps up if they match), the
#     helper's packet rate, CPU and how late it released packets under that load;
#   - the same unshaped (the fastest the machine goes), with GSO and with GSO off
#     (gso_max_segs 1: every packet MTU-sized, the helper's worst case).
# Needs root, iptables and iperf3. Usage: bench/netdelay.sh BUILD_DIR   (RATE=1gbit DELAY=5ms
# SAMPLES=2000 SECONDS_PER_RUN=5)
set -euo pipefail
G="$(cd "$1" && pwd)/tools/genie/genie"
RATE=${RATE:-1gbit}
DELAY=${DELAY:-5ms}
SAMPLES=${SAMPLES:-2000}
SECS=${SECONDS_PER_RUN:-5}
if [ "$(id -u)" -ne 0 ]; then echo "netdelay: needs root (network namespaces); skipped"; exit 0; fi
for t in iperf3 iptables python3; do
  command -v $t >/dev/null || { echo "netdelay: $t missing; skipped"; exit 0; }
done

T=$(mktemp -d)
HELPER=""
cleanup() {
  [ -n "$HELPER" ] && kill -TERM "$HELPER" 2>/dev/null && wait "$HELPER" 2>/dev/null || true
  ip netns pids gdB 2>/dev/null | xargs -r kill 2>/dev/null || true
  ip netns del gdA 2>/dev/null || true
  ip netns del gdB 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
cleanup; T=$(mktemp -d)
ip netns add gdA; ip netns add gdB
ip link add vdA type veth peer name vdB
ip link set vdA netns gdA; ip link set vdB netns gdB
ip -n gdA addr add 10.215.0.1/24 dev vdA; ip -n gdB addr add 10.215.0.2/24 dev vdB
for n in A B; do ip -n gd$n link set vd$n up; ip -n gd$n link set lo up; done
shape() {  # tbf as REFERENCE.md §4 says keeps TCP at ~95 % of the rate
  for n in A B; do
    ip netns exec gd$n tc qdisc replace dev vd$n root tbf rate "$1" burst 256kb limit 4mb
  done
}
unshape() { for n in A B; do ip netns exec gd$n tc qdisc del dev vd$n root 2>/dev/null || true; done; }

cat > "$T/pp.py" <<'EOF'
import socket, sys, time
if sys.argv[1] == 'server':
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('10.215.0.2', 7001)); s.listen(4)
    while True:
        c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            d = c.recv(64)
            if not d: break
            c.sendall(d)
        c.close()
n, out = int(sys.argv[2]), sys.argv[3]
c = socket.create_connection(('10.215.0.2', 7001)); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rtt = []
for i in range(n):
    t = time.perf_counter_ns(); c.sendall(b'x' * 64); got = 0
    while got < 64: got += len(c.recv(64 - got))
    rtt.append(time.perf_counter_ns() - t); time.sleep(0.001)
open(out, 'w').write('\n'.join(str(r) for r in rtt))
EOF
ip netns exec gdB python3 "$T/pp.py" server >/dev/null 2>&1 &
ip netns exec gdB iperf3 -s -D -B 10.215.0.2 >/dev/null 2>&1
sleep 0.5
ip netns exec gdB iptables -t mangle -A PREROUTING -i vdB -j NFQUEUE --queue-num 5 --queue-bypass

start_helper() {
  ip netns exec gdB "$G" netdelay --queue 5 --delay "$1" 2>"$T/helper.log" &
  HELPER=$!
  for _ in $(seq 100); do grep -q bound "$T/helper.log" && return 0; sleep 0.05; done
  echo "netdelay: the helper did not start:"; cat "$T/helper.log"; exit 1
}
stop_helper() { kill -TERM "$HELPER"; wait "$HELPER" || true; HELPER=""; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
goodput() {  # Gbit/s received, A -> B
  ip netns exec gdA iperf3 -c 10.215.0.2 -t "$SECS" -J | python3 -c \
    'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))'
}
summary() { grep -o 'queue 5: .*' "$T/helper.log" | sed 's/^queue 5: //'; }

echo "# delay error, ${SAMPLES} round trips 1 ms apart, delay $DELAY (idle link, tbf $RATE)"
shape "$RATE"
ip netns exec gdA python3 "$T/pp.py" client "$SAMPLES" "$T/base"
start_helper "$DELAY"
ip netns exec gdA python3 "$T/pp.py" client "$SAMPLES" "$T/delayed"
stop_helper
python3 - "$T/base" "$T/delayed" "$DELAY" <<'EOF'
import sys
def ns(t):
    for u, f in (('ms', 1e6), ('us', 1e3), ('ns', 1), ('s', 1e9)):
        if t.endswith(u): return float(t[:-len(u)]) * f
    return float(t) * 1e9
base = sorted(int(x) for x in open(sys.argv[1]))
d = sorted(int(x) - ns(sys.argv[3]) - base[len(base) // 2] for x in open(sys.argv[2]))
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
print("idle round trip: p50 %.1f us, p99 %.1f us" % (q(base, .5) / 1e3, q(base, .99) / 1e3))
print("delay error (round trip - idle p50 - delay): min %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us"
      % (d[0] / 1e3, q(d, .5) / 1e3, q(d, .99) / 1e3, d[-1] / 1e3))
EOF
echo "helper: $(summary)"

run_load() {  # label
  local plain delayed t0 t1 hz
  plain=$(goodput)
  start_helper "$DELAY"
  t0=$(cpu_ticks "$HELPER")
  delayed=$(goodput)
  t1=$(cpu_ticks "$HELPER")
  stop_helper
  hz=$(getconf CLK_TCK)
  echo "$1: iperf3 $plain Gbit/s without, $delayed Gbit/s with $DELAY; helper CPU" \
       "$(( (t1 - t0) * 100 / hz / SECS ))%"
  echo "  helper: $(summary)"
}
echo "# throughput through the delayed link (${SECS} s iperf3 runs, A -> B)"
run_load "tbf $RATE"
unshape
run_load "unshaped"
ip -n gdA link set vdA gso_max_segs 1
run_load "unshaped, GSO off"

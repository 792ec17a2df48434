#!/usr/bin/env bash
# Issue 12's testbed benchmark: on star:8 (8 hosts h0..h7 at 10.100.0.1..8 on eth0, one bridge
# switch, every link shaped both ways with tbf at RATE), for all-reduce sizes MIN..MAX (x4):
#   - iperf3 goodput of one link (h0 -> h1): what the shaped network gives one TCP flow, and
#     of 8 flows h_i -> h_i+1 at once (the ring's pattern; shows when the CPU is the limit),
#   - genie's ring all-reduce busbw (genie gen collective + genie launch/run, rank i on host i),
#   - Gloo's busbw for each algorithm in ALGOS (bench/gloo_allreduce, same hosts, same sizes),
#   - genie / iperf3 and genie / best Gloo.
# All figures in GB/s (10^9 B/s); busbw = algbw x 2(n-1)/n, as nccl-tests and genie print it.
# The network comes from `genie testbed up` when this genie has it, otherwise it is built by
# hand here (testbed_up/testbed_down); everything made is removed on exit, also on failure.
# Needs root. Usage: bench/testbed_allreduce.sh BUILD_DIR
#   RATE=1gbit MIN=64KiB MAX=256MiB ALGOS="ring new_ring halving_doubling" CHANNELS=1
#   REPEAT=1 (median of that many) NAME=gab (namespace prefix) PORT=29700
#   GENIE_EXTRA="--slice 512KiB" (genie run flags; "" for ASTRA-sim's one message per step)
#   OUT=DIR (keep the run's files there)
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/testbed_allreduce.sh BUILD_DIR}" && pwd)"
G="$BUILD/tools/genie/genie"
GLOO="$BUILD/bench/gloo_allreduce"
RATE=${RATE:-1gbit}
MIN=${MIN:-64KiB}
MAX=${MAX:-256MiB}
ALGOS=${ALGOS-"ring new_ring halving_doubling"}  # "" skips Gloo
CHANNELS=${CHANNELS:-1}
NAME=${NAME:-gab}
PORT=${PORT:-29700}
HOSTS=8
# genie puts NCCL's wire shape on the network, as the libraries it stands beside do: the Simple
# protocol's 512 KiB sends (docs/algorithms.md), so ring steps pipeline. GENIE_EXTRA="" gives
# ASTRA-sim's shape (one message per step; ~0.92x iperf3 at 4 MiB here, the step gaps).
GENIE_EXTRA=${GENIE_EXTRA---slice 512KiB}  # more `genie run` flags
REPEAT=${REPEAT:-1}           # measurements per size and program; the table shows the median

if [ "$(id -u)" -ne 0 ]; then echo "testbed_allreduce: needs root (network namespaces); skipped"; exit 0; fi
command -v iperf3 >/dev/null || { echo "testbed_allreduce: iperf3 missing (scripts/install-deps.sh); skipped"; exit 0; }
[ -x "$G" ] || { echo "testbed_allreduce: no genie at $G; build it first" >&2; exit 1; }
if [ ! -x "$GLOO" ]; then
  echo "testbed_allreduce: no $GLOO (libgloo-dev missing at configure time?); Gloo columns skipped" >&2
  ALGOS=""
fi

addr() { echo "10.100.0.$(($1 + 1))"; }
hostns() { echo "$NAME-h$1"; }

# --- the network: `genie testbed` when it exists, else by hand --------------------------------
# (a genie without it fails `genie testbed list`.)
if "$G" testbed list >/dev/null 2>&1; then USE_GENIE_TESTBED=1; else USE_GENIE_TESTBED=0; fi

hand_up() {
  ip netns add "$NAME-sw"
  ip -n "$NAME-sw" link add br0 type bridge
  ip -n "$NAME-sw" link set br0 up
  for i in $(seq 0 $((HOSTS - 1))); do
    local h; h=$(hostns "$i")
    ip netns add "$h"
    ip link add eth0 netns "$h" type veth peer name "p$i" netns "$NAME-sw"
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" link set lo up
    ip -n "$h" link set eth0 up
    ip -n "$NAME-sw" link set "p$i" master br0 up
    # Both directions: the host NIC's egress and the switch port's egress toward the host.
    # burst 256kb and limit 2mb keep one TCP flow at ~95 % of the rate (REFERENCE §4).
    ip netns exec "$h" tc qdisc add dev eth0 root tbf rate "$RATE" burst 256kb limit 2mb
    ip netns exec "$NAME-sw" tc qdisc add dev "p$i" root tbf rate "$RATE" burst 256kb limit 2mb
  done
}

hand_down() {
  for i in $(seq 0 $((HOSTS - 1))); do ip netns del "$(hostns "$i")" 2>/dev/null || true; done
  ip netns del "$NAME-sw" 2>/dev/null || true
}

testbed_up() {
  if [ "$USE_GENIE_TESTBED" = 1 ]; then
    "$G" testbed up --topology "star:$HOSTS" --rate "$RATE" --name "$NAME"
  else
    hand_up
  fi
}

testbed_down() {
  if [ "$USE_GENIE_TESTBED" = 1 ]; then
    "$G" testbed down --name "$NAME" >/dev/null 2>&1 || "$G" testbed down "$NAME" >/dev/null 2>&1 || true
  fi
  hand_down  # also removes what a half-done hand_up left
}

# --- cleanup: our processes (by pid), the network, the files --------------------------------
T=$(mktemp -d)
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  # Anything still inside our hosts was started by this script (iperf3, ranks): end it by pid.
  for i in $(seq 0 $((HOSTS - 1))); do
    for p in $(ip netns pids "$(hostns "$i")" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  done
  testbed_down
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp -r "$T"/. "$OUT"/ 2>/dev/null || true; fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ip netns list | grep -q "^$NAME-"; then
  echo "testbed_allreduce: namespaces $NAME-* exist already (another run?); use NAME=other" >&2
  trap - EXIT; rm -rf "$T"; exit 1
fi
testbed_up

# Run "$@" in every host i with {i} and {addr} replaced; wait for all; fail naming the host.
on_all_hosts() {
  local log=$1; shift
  local pids=() i
  for i in $(seq 0 $((HOSTS - 1))); do
    local args=() a
    for a in "$@"; do a=${a//\{i\}/$i}; args+=("${a//\{addr\}/$(addr "$i")}"); done
    ip netns exec "$(hostns "$i")" "${args[@]}" >"$log.h$i" 2>&1 &
    pids+=($!); PIDS+=($!)
  done
  local bad=""
  for i in $(seq 0 $((HOSTS - 1))); do wait "${pids[$i]}" || bad="$bad h$i"; done
  PIDS=()
  if [ -n "$bad" ]; then
    echo "testbed_allreduce: failed on$bad: $*" >&2
    for i in $bad; do echo "--- $i:" >&2; tail -20 "$log.$i" >&2; done
    return 1
  fi
}

bytes() { python3 -c "
import re,sys; n,u=re.fullmatch(r'([0-9]+)(|K|M|G)(?:i?B)?','$1').groups()
print(int(n)*{'':1,'K':1024,'M':1024**2,'G':1024**3}[u])"; }
min=$(bytes "$MIN"); max=$(bytes "$MAX")
sizes=(); for ((s = min; s <= max; s *= 4)); do sizes+=("$s"); done

# --- iperf3: one link alone (h0 -> h1), and all 8 ring links at once (h_i -> h_i+1) ------------
# The ring figure is what the same hosts give 8 simultaneous flows in the pattern a ring
# all-reduce makes: on a small machine it shows when the CPU, not the link, is the limit.
iperf_one() {  # prints GB/s of one flow h0 -> h1
  ip netns exec "$(hostns 1)" iperf3 -s -1 -B "$(addr 1)" >/dev/null 2>&1 &
  local srv=$!
  PIDS+=("$srv"); sleep 0.5
  ip netns exec "$(hostns 0)" iperf3 -c "$(addr 1)" -t 5 -O 1 -J >"$T/iperf3-$1.json"
  wait "$srv" || true
  PIDS=()
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/8e9)' "$T/iperf3-$1.json"
}
iperf_ring() {  # prints the mean GB/s of 8 flows h_i -> h_(i+1) running together
  local i srv=() cli=()
  for i in $(seq 0 $((HOSTS - 1))); do
    ip netns exec "$(hostns "$i")" iperf3 -s -1 -B "$(addr "$i")" >/dev/null 2>&1 &
    srv+=($!); PIDS+=($!)
  done
  sleep 0.5
  for i in $(seq 0 $((HOSTS - 1))); do
    ip netns exec "$(hostns "$i")" iperf3 -c "$(addr $(((i + 1) % HOSTS)))" -t 5 -O 1 -J \
      >"$T/iperf3-ring-$1-$i.json" &
    cli+=($!); PIDS+=($!)
  done
  for i in "${cli[@]}" "${srv[@]}"; do wait "$i" || true; done
  PIDS=()
  python3 -c '
import json, sys
v = [json.load(open(f))["end"]["sum_received"]["bits_per_second"] / 8e9 for f in sys.argv[1:]]
print(sum(v) / len(v))' "$T"/iperf3-ring-"$1"-*.json
}
echo "$(iperf_one before) $(iperf_ring before)" >"$T/iperf3.txt"
echo "iperf3 at $RATE, one link and 8-flow ring (GB/s): $(cat "$T/iperf3.txt")" >&2

# --- per size: genie, then each Gloo algorithm (interleaved: a busy machine hurts all alike) ----
iters_for() {  # enough iterations for a steady figure, ~<= 20 s per size at 1 Gbit
  if [ "$1" -le $((1 << 20)) ]; then echo 20; elif [ "$1" -le $((16 << 20)) ]; then echo 10; else echo 3; fi
}
: >"$T/genie.txt"
: >"$T/gloo.txt"
port=$PORT
for s in "${sizes[@]}"; do
  "$G" gen collective --type all_reduce --size "$s" --ranks "$HOSTS" -o "$T/w$s" >/dev/null
  for r in $(seq 1 "$REPEAT"); do
    port=$((port + 1))
    # shellcheck disable=SC2086  # GENIE_EXTRA is a list of flags
    on_all_hosts "$T/genie-$s-$r.log" "$G" launch -n 1 --nnodes "$HOSTS" --node-rank '{i}' \
      --rendezvous "tcp:$(addr 0):$port" -- run "$T/w$s" --bind '{addr}' -o "$T/g$s-$r/h{i}" \
      -n "$(iters_for "$s")" --warmup 1 --channels "$CHANNELS" --peer-timeout 120s $GENIE_EXTRA
    "$G" results merge "$T/g$s-$r/merged.json" "$T/g$s-$r"/h* >/dev/null
    # genie's own figure: bus bytes over the ranks' summed all-reduce durations, warm-up excluded.
    python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(sys.argv[2], next(r for r in m["collective_types"] if r["type"] == "all_reduce")["busbw_gbps"])
'  "$T/g$s-$r/merged.json" "$s" >>"$T/genie.txt"
    echo "genie $s B: $(tail -1 "$T/genie.txt" | cut -d' ' -f2) GB/s" >&2
    for alg in $ALGOS; do
      mkdir -p "$T/store-$alg-$s-$r"
      on_all_hosts "$T/gloo-$alg-$s-$r.log" "$GLOO" --rank '{i}' --size "$HOSTS" \
        --store "$T/store-$alg-$s-$r" --iface '{addr}' --algorithm "$alg" --bytes "$s" \
        --iters "$(iters_for "$s")" --warmup 1 --max-seconds 10
      grep '^gloo_allreduce ' "$T/gloo-$alg-$s-$r.log.h0" | tee -a "$T/gloo.txt" | sed 's/^/  /' >&2
    done
  done
done
echo "$(iperf_one after) $(iperf_ring after)" >>"$T/iperf3.txt"

# --- the table ----------------------------------------------------------------------------------
# shellcheck disable=SC2086  # one argument per algorithm
python3 - "$T" "$RATE" "$CHANNELS" "$GENIE_EXTRA" $ALGOS <<'EOF'
import statistics, sys
t, rate, channels, extra, algos = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
runs = [[float(x) for x in l.split()] for l in open(t + "/iperf3.txt")]
one = sum(r[0] for r in runs) / len(runs)  # mean of before and after
ring = sum(r[1] for r in runs) / len(runs)
genie, gloo = {}, {a: {} for a in algos}  # size -> every measurement; medians below
for l in open(t + "/genie.txt"):
    genie.setdefault(int(l.split()[0]), []).append(float(l.split()[1]))
for l in open(t + "/gloo.txt"):
    kv = dict(x.split("=") for x in l.split()[1:])
    gloo[kv["algorithm"]].setdefault(int(kv["bytes"]), []).append(float(kv["busbw_gbps"]))
genie = {s: statistics.median(v) for s, v in genie.items()}
gloo = {a: {s: statistics.median(v) for s, v in d.items()} for a, d in gloo.items()}
reps = max(len(open(t + "/genie.txt").readlines()) // max(len(genie), 1), 1)
def size(b):
    for u, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0: return f"{b // f} {u}"
    return f"{b} B"
print(f"star:8 at {rate}, genie --channels {channels} {extra}; GB/s, busbw = algbw x 2(n-1)/n; "
      f"median of {reps}")
print("iperf3 one link h0->h1 before/after: " + " / ".join(f"{r[0]:.4f}" for r in runs) +
      "; ring8 (8 flows h_i->h_i+1 at once, mean per flow): " +
      " / ".join(f"{r[1]:.4f}" for r in runs))
head = f"{'size':>9} {'iperf3':>7} {'ring8':>7} {'genie':>7}"
w = {a: max(8, len("gloo " + a)) for a in algos}
head += "".join(f" {'gloo ' + a:>{w[a]}}" for a in algos)
head += f" {'genie/iperf3':>12} {'genie/best-gloo':>15}"
print(head)
for s in sorted(genie):
    g = genie[s]
    row = f"{size(s):>9} {one:7.4f} {ring:7.4f} {g:7.4f}"
    best = 0.0
    for a in algos:
        v = gloo[a].get(s)
        row += f" {v:{w[a]}.4f}" if v is not None else f" {'-':>{w[a]}}"
        best = max(best, v or 0.0)
    row += f" {g / one:12.2f} {g / best if best else float('nan'):15.2f}"
    print(row)
EOF

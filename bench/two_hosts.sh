#!/usr/bin/env bash
# Two emulated hosts on one machine: network namespaces gbA/gbB joined by a veth pair shaped to
# RATE (tbf, default 1gbit), 4 ranks per host with the intra-host dimension modelled (900 GB/s
# switch). Prints, for a ring all-reduce of SIZE over the 8 ranks:
#   - iperf3 between the namespaces (the baseline the link really gives),
#   - genie's inter-host throughput per direction and its ratio to iperf3,
#   - veth bytes / inter-host payload (wire overhead: headers, ACKs, rendezvous, heartbeats),
#   - the measured step time beside genie's prediction for the same two-level network,
#   - clock offsets to rank 0 (same machine: should be ~0) and their ping-pong round trips.
# Needs root. Usage: bench/two_hosts.sh BUILD_DIR [DATA_DIR]   (RATE=1gbit SIZE=64MiB ITER=3)
set -euo pipefail
G="$(cd "$1" && pwd)/tools/genie/genie"
RATE=${RATE:-1gbit}
SIZE=${SIZE:-64MiB}
ITER=${ITER:-3}
if [ "$(id -u)" -ne 0 ]; then echo "two_hosts: needs root (network namespaces); skipped"; exit 0; fi
command -v iperf3 >/dev/null || { echo "two_hosts: iperf3 missing; skipped"; exit 0; }

T=$(mktemp -d)
cleanup() { ip netns del gbA 2>/dev/null || true; ip netns del gbB 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
cleanup; T=$(mktemp -d)
ip netns add gbA; ip netns add gbB
ip link add vbA type veth peer name vbB
ip link set vbA netns gbA; ip link set vbB netns gbB
ip -n gbA addr add 10.214.0.1/24 dev vbA; ip -n gbB addr add 10.214.0.2/24 dev vbB
for n in A B; do
  ip -n gb$n link set vb$n up; ip -n gb$n link set lo up
  ip netns exec gb$n tc qdisc add dev vb$n root tbf rate "$RATE" burst 256kb latency 50ms
done

# Baseline: what the shaped link gives one TCP flow.
ip netns exec gbB iperf3 -s -1 -D -B 10.214.0.2 >/dev/null 2>&1; sleep 0.3
iperf=$(ip netns exec gbA iperf3 -c 10.214.0.2 -t 3 -J | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8)')

cat > "$T/host.yml" <<EOF
topology: [ Switch ]
npus_count: [ 4 ]
bandwidth: [ 900.0 ]
latency: [ 500.0 ]
EOF
# The same system as ASTRA-sim sees it: the host switch, then dimension 1 joining rank r to
# r+4 with a link per rank — here 4 ranks share the host's one shaped link, so each gets RATE/4.
gbps=$(python3 -c "
import re; n,u=re.fullmatch(r'([0-9.]+)([kmg]?)bit','$RATE'.lower()).groups()
print(float(n)*{'':1,'k':1e3,'m':1e6,'g':1e9}[u]/8/2**30/4)")
cat > "$T/net.yml" <<EOF
topology: [ Switch, Ring ]
npus_count: [ 4, 2 ]
bandwidth: [ 900.0, $gbps ]
latency: [ 500.0, 50000.0 ]
EOF
"$G" gen collective --type all_reduce --size "$SIZE" --ranks 8 -o "$T/w" >/dev/null
tx0=$(( $(ip netns exec gbA cat /sys/class/net/vbA/statistics/tx_bytes) + $(ip netns exec gbB cat /sys/class/net/vbB/statistics/tx_bytes) ))
args="$T/w --iterations $ITER --warmup 1 --intra-host $T/host.yml --network $T/net.yml --peer-timeout 60s --clock-sync always"
ip netns exec gbA "$G" launch -n 4 --nnodes 2 --node-rank 0 --rendezvous tcp:10.214.0.1:29611 -- \
  run $args --bind 10.214.0.1 -o "$T/hostA" >"$T/A.log" 2>&1 &
a=$!
ip netns exec gbB "$G" launch -n 4 --nnodes 2 --node-rank 1 --rendezvous tcp:10.214.0.1:29611 -- \
  run $args --bind vbB -o "$T/hostB" >"$T/B.log" 2>&1 || { cat "$T/B.log"; exit 1; }
wait $a || { cat "$T/A.log"; exit 1; }
tx1=$(( $(ip netns exec gbA cat /sys/class/net/vbA/statistics/tx_bytes) + $(ip netns exec gbB cat /sys/class/net/vbB/statistics/tx_bytes) ))
"$G" results merge "$T/merged.json" "$T/hostA" "$T/hostB" >/dev/null

python3 - "$T" "$iperf" "$((tx1 - tx0))" <<'EOF'
import glob, json, sys
t, iperf, veth = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
inter = modelled = 0
for f in glob.glob(t + "/host*/rank-*.jsonl"):
    r = int(f.rsplit("-", 1)[1].split(".")[0])
    for line in open(f):
        j = json.loads(line)
        if j.get("record") == "traffic":
            for p in j["peers"]:
                if p["peer"] // 4 != r // 4: inter += p["network_bytes_sent"]
                modelled += p["modelled_bytes_sent"]
m = json.load(open(t + "/merged.json"))
steps = sorted(i["step_time_ns"] for i in m["iterations"] if i["iteration"] >= 0)
median = steps[len(steps) // 2]
n_iter = len(glob.glob(t + "/hostA/rank-0.jsonl")) and sum(
    1 for line in open(t + "/hostA/rank-0.jsonl") if '"record":"rank"' in line)
per_dir_per_step = inter / 2 / n_iter      # two directions cross hosts, warm-up included
thr = per_dir_per_step / (median / 1e9)
# Rank 0 prints the prediction for the same workload and network beside its measurement.
pred = [l.strip() for l in open(t + "/A.log") if l.startswith("step time")]
# Each rank's own estimate (merge then gives every rank of a machine its best one).
clocks = [json.loads(l) for f in glob.glob(t + "/host*/rank-*.jsonl") for l in open(f)
          if '"record":"clock"' in l]
offs = [abs(c["offset_ns"]) for c in clocks]
print(f"iperf3 between the hosts        {iperf/1e6:10.1f} MB/s")
print(f"genie inter-host per direction  {thr/1e6:10.1f} MB/s   ratio to iperf3 {thr/iperf:.2f}")
print(f"payload inter-host {inter/2**20:.0f} MiB, modelled intra-host {modelled/2**20:.0f} MiB; "
      f"veth bytes / inter-host payload {veth/inter:.3f}")
print(pred[0] if pred else "no prediction line from rank 0")
rtts = [c["rtt_ns"] for c in clocks]
print(f"clock offsets to rank 0: max |offset| {max(offs)/1e3:.1f} us over {len(offs)} ranks "
      f"(same machine: true offset 0); ping-pong rtt max {max(rtts)/1e3:.1f} us")
EOF

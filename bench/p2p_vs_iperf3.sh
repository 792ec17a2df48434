#!/usr/bin/env bash
# Two-rank point-to-point throughput over loopback: genie's TCP transport (bench/p2p_bench)
# as a ratio to iperf3 (Debian package) run in the same script on the same machine, one TCP
# flow each, same message/buffer size. Usage: bench/p2p_vs_iperf3.sh BUILD_DIR [DATA_DIR]
# Env: SIZE (default 1MiB = 1048576), SECONDS_IPERF (default 5), TOTAL (default 4GiB).
set -euo pipefail
BUILD=${1:-build/release}
SIZE=${SIZE:-1048576}
SECS=${SECONDS_IPERF:-5}
TOTAL=${TOTAL:-4GiB}
P2P="$BUILD/bench/p2p_bench"
command -v iperf3 >/dev/null || { echo "iperf3 not installed (apt-get install iperf3)"; exit 1; }
[ -x "$P2P" ] || { echo "build $P2P first"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
iperf3 -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
sleep 0.5
iperf_json=$(iperf3 -c 127.0.0.1 -B 127.0.0.1 -p "$port" -t "$SECS" -l "$SIZE" -J)
wait "$server" 2>/dev/null || true
iperf_gbit=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' <<<"$iperf_json")

genie_out=$("$P2P" --total "$TOTAL" "$SIZE")
echo "$genie_out" | grep -v '^p2p_gbit_per_s'
genie_gbit=$(echo "$genie_out" | awk '/^p2p_gbit_per_s/ {print $3}')

echo "iperf3 loopback, 1 flow, ${SIZE}-byte writes, ${SECS}s: ${iperf_gbit} Gbit/s"
python3 -c "print('genie p2p / iperf3 = %.2f' % ($genie_gbit / $iperf_gbit))"

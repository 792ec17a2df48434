#!/usr/bin/env bash
# The libfabric transport beside genie's TCP transport and libfabric's own fi_pingpong, on
# loopback, in one script (docs/transports.md has the figures):
#  1. stream: 2 ranks, a window of 4 messages in flight (bench/p2p_bench), 4 KiB - 64 MiB:
#     tcp, fabric (tcp;ofi_rxm, tagged), fabric --fabric-rma. Gbit/s.
#  2. ping-pong: one message in flight, answered (p2p_bench --pingpong) beside fi_pingpong
#     (libfabric-bin; rdm endpoint, tagged, same provider). MB/s counting both directions, as
#     fi_pingpong prints it.
#  3. 8-rank ring all-reduce busbw (genie run, 5 iterations) over the three transports.
# libfabric-bin ships fi_pingpong only (no fi_rma_bw: fabtests are not packaged in Debian), so
# the RMA mode is compared with genie TCP and the tagged mode.
# Usage: bench/fabric_vs_tcp.sh BUILD_DIR   Env: SIZES (bytes, space separated), TOTAL (stream
# bytes per size, default 1GiB), ITERS (ping-pongs per size, default 200), AR_SIZE (64MiB).
set -euo pipefail
BUILD=${1:-build/release}
P2P="$BUILD/bench/p2p_bench"
G="$BUILD/tools/genie/genie"
PROV="tcp;ofi_rxm"
SIZES=${SIZES:-"4096 65536 1048576 16777216 67108864"}
TOTAL=${TOTAL:-1GiB}
ITERS=${ITERS:-200}
AR_SIZE=${AR_SIZE:-64MiB}
[ -x "$P2P" ] && [ -x "$G" ] || { echo "build $P2P and $G first"; exit 1; }
command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing (apt-get install libfabric-bin)"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# "p2p_gbit_per_s SIZE VALUE" -> VALUE for SIZE
val() { awk -v s="$2" '$1=="p2p_gbit_per_s" && $2==s {print $3}' "$1"; }

echo "== stream, 2 ranks, window 4 (Gbit/s)"
"$P2P" --total "$TOTAL" $SIZES >"$T/tcp" 2>&1
"$P2P" --total "$TOTAL" --transport fabric --fabric-provider "$PROV" $SIZES >"$T/fab" 2>&1
"$P2P" --total "$TOTAL" --transport fabric --fabric-provider "$PROV" --fabric-rma $SIZES >"$T/rma" 2>&1
printf "%10s %10s %10s %10s %9s %9s\n" size tcp fabric fab-rma fab/tcp rma/tcp
for s in $SIZES; do
  a=$(val "$T/tcp" "$s"); b=$(val "$T/fab" "$s"); c=$(val "$T/rma" "$s")
  python3 -c "a,b,c=float('${a:-0}'),float('${b:-0}'),float('${c:-0}'); print('%10d %10.2f %10.2f %10.2f %9.2f %9.2f' % ($s,a,b,c,b/a if a else 0,c/a if a else 0))"
done

echo "== ping-pong, 2 ranks (MB/s, both directions)"
printf "%10s %10s %10s %10s %12s %10s\n" size tcp fabric fab-rma fi_pingpong fab/fi_pp
for s in $SIZES; do
  iters=$ITERS; [ "$s" -ge 16777216 ] && iters=$(( ITERS / 10 > 4 ? ITERS / 10 : 4 ))
  total=$(( s * iters ))
  pp() { "$P2P" --pingpong --total "$total" "$@" "$s" 2>/dev/null | awk '$1=="p2p_gbit_per_s" {printf "%.1f", $3*1000/8}'; }
  a=$(pp); b=$(pp --transport fabric --fabric-provider "$PROV"); c=$(pp --transport fabric --fabric-provider "$PROV" --fabric-rma)
  port=$(free_port)
  fi_pingpong -p "$PROV" -e rdm -m tagged -I "$iters" -S "$s" -B "$port" >"$T/pps" 2>&1 &
  srv=$!
  sleep 0.3
  d=$(fi_pingpong -p "$PROV" -e rdm -m tagged -I "$iters" -S "$s" -P "$port" 127.0.0.1 2>&1 | awk 'NR>1 && NF>=6 {print $6}' | tail -1)
  wait "$srv" 2>/dev/null || true
  python3 -c "a,b,c,d=float('${a:-0}'),float('${b:-0}'),float('${c:-0}'),float('${d:-0}'); print('%10d %10.1f %10.1f %10.1f %12.1f %10.2f' % ($s,a,b,c,d,b/d if d else 0))"
done

echo "== 8-rank ring all-reduce of $AR_SIZE on loopback (5 iterations)"
"$G" gen collective --type all_reduce --size "$AR_SIZE" --ranks 8 -o "$T/ar" >/dev/null
printf "%-16s %10s %10s %10s\n" transport "time(us)" algbw busbw
for mode in "tcp" "fabric" "fabric --fabric-rma"; do
  out="$T/out-${mode// /_}"
  # shellcheck disable=SC2086
  "$G" run "$T/ar" --iterations 5 --warmup 1 --transport $mode --output "$out" >/dev/null 2>&1 || { echo "$mode: failed"; continue; }
  "$G" results show "$out/results.json" | awk -v m="$mode" '$1=="all_reduce"{printf "%-16s %10s %10s %10s\n", m, $4, $5, $6}'
done

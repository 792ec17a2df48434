#!/usr/bin/env bash
# The libfabric transport beside genie's TCP transport and libfabric's own fi_pingpong, on
# loopback, in one script (docs/fabric.md has the figures):
#  1. stream: 2 ranks, a window of 4 messages in flight (bench/p2p_bench), 4 KiB - 64 MiB:
#     tcp, fabric (tcp;ofi_rxm, tagged), fabric --fabric-rma. Gbit/s, and fabric/tcp ratios.
#  2. 8-rank ring all-reduce busbw (genie run, 5 iterations) over the three transports, and over
#     TCP reading its payloads as the fabric must (tcp-reads: bench/recv_reads_payloads.c
#     preloaded, when cc is there); CPU-s of each run.
#  3. (PINGPONG=1) ping-pong: one message in flight, answered (p2p_bench --pingpong) beside
#     fi_pingpong (libfabric-bin; rdm endpoint, tagged, same provider). MB/s counting both
#     directions, as fi_pingpong prints it.
# Each figure is the median of REPS runs; within a repetition the transports run one after
# the other (interleaved), so that load from others on a shared machine hits them alike.
# The load average is printed before and after.
# libfabric-bin ships fi_pingpong only (no fi_rma_bw: fabtests are not packaged in Debian), so
# the RMA mode is compared with genie TCP and the tagged mode.
# Usage: bench/fabric_vs_tcp.sh BUILD_DIR   Env: SIZES (bytes, space separated), TOTAL (stream
# bytes per size, default 512MiB, and at least 32 messages: 2 GiB at 64 MiB, where 8 messages
# through a window of 4 were mostly its filling and draining), REPS (default 3), AR_SIZE
# (64MiB), PINGPONG (0),
# ITERS (ping-pongs per size, default 100).
set -euo pipefail
BUILD=${1:-build/release}
P2P="$BUILD/bench/p2p_bench"
G="$BUILD/tools/genie/genie"
PROV="tcp;ofi_rxm"
SIZES=${SIZES:-"4096 65536 1048576 16777216 67108864"}
TOTAL=${TOTAL:-512MiB}
REPS=${REPS:-3}
ITERS=${ITERS:-100}
AR_SIZE=${AR_SIZE:-64MiB}
PINGPONG=${PINGPONG:-0}
[ -x "$P2P" ] && [ -x "$G" ] || { echo "build $P2P and $G first"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
MODES=("tcp" "fabric" "fabric --fabric-rma")
tag() { echo "${1// /_}"; }
# "p2p_gbit_per_s SIZE VALUE" lines of every rep of one mode -> median VALUE for SIZE
median_of() { awk -v s="$2" '$1=="p2p_gbit_per_s" && $2==s {print $3}' "$1" | sort -g |
  awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
median_col() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo "load before: $(uptime)"
echo "== stream, 2 ranks, window 4 (Gbit/s, median of $REPS, $TOTAL or 32 messages per size)"
total_bytes=$(numfmt --from=iec-i "${TOTAL%B}" 2>/dev/null || numfmt --from=iec "${TOTAL%B}")
for r in $(seq "$REPS"); do
  for mode in "${MODES[@]}"; do
    for s in $SIZES; do
      t=$((s * 32 > total_bytes ? s * 32 : total_bytes))
      # shellcheck disable=SC2086
      "$P2P" --total "$t" --transport $mode --fabric-provider "$PROV" "$s" \
        >>"$T/stream-$(tag "$mode")" 2>/dev/null || echo "stream $mode $s rep $r: failed" >&2
    done
  done
done
printf "%10s %10s %10s %10s %9s %9s\n" size tcp fabric fab-rma fab/tcp rma/tcp
for s in $SIZES; do
  a=$(median_of "$T/stream-tcp" "$s"); b=$(median_of "$T/stream-fabric" "$s")
  c=$(median_of "$T/stream-fabric_--fabric-rma" "$s")
  python3 -c "a,b,c=float('$a'),float('$b'),float('$c'); print('%10d %10.2f %10.2f %10.2f %9.2f %9.2f' % ($s,a,b,c,b/a if a else 0,c/a if a else 0))"
done

echo "== 8-rank ring all-reduce of $AR_SIZE on loopback (5 iterations, median of $REPS)"
# "tcp-reads": genie's TCP with bench/recv_reads_payloads.c preloaded, so that it copies the
# filler payloads out of the kernel as the fabric's provider must (genie's TCP drops them with
# MSG_TRUNC). CPU-s: user + sys of the whole run (8 ranks, start-up included).
"$G" gen collective --type all_reduce --size "$AR_SIZE" --ranks 8 -o "$T/ar" >/dev/null
AR_MODES=("${MODES[@]}")
if cc -O2 -shared -fPIC -o "$T/reads.so" "$(dirname "$0")/recv_reads_payloads.c" -ldl 2>/dev/null; then
  AR_MODES=("tcp" "tcp-reads" "fabric" "fabric --fabric-rma")
fi
TIMEFORMAT='%U %S'
for r in $(seq "$REPS"); do
  for mode in "${AR_MODES[@]}"; do
    out="$T/out-$(tag "$mode")-$r"
    pre=""; transport=$mode
    [ "$mode" = tcp-reads ] && { pre="$T/reads.so"; transport=tcp; }
    # shellcheck disable=SC2086
    if { time LD_PRELOAD=$pre "$G" run "$T/ar" --iterations 5 --warmup 1 --transport $transport \
           --output "$out" >/dev/null 2>&1; } 2>"$T/cpu"; then
      "$G" results show "$out/results.json" | awk '$1=="all_reduce"{print $6}' >>"$T/ar-$(tag "$mode")"
      awk '{print $1+$2}' "$T/cpu" >>"$T/arcpu-$(tag "$mode")"
    else
      echo "all-reduce $mode rep $r: failed" >&2
    fi
  done
done
printf "%-20s %12s %10s %8s %s\n" transport "busbw(GB/s)" "x tcp" "CPU-s" "(all reps)"
base=$(median_col <"$T/ar-tcp")
for mode in "${AR_MODES[@]}"; do
  f="$T/ar-$(tag "$mode")"; [ -f "$f" ] || { echo "$mode: no run"; continue; }
  m=$(median_col <"$f")
  printf "%-20s %12s %10s %8s %s\n" "$mode" "$m" "$(python3 -c "print('%.2f' % ($m/$base if $base else 0))")" \
    "$(median_col <"$T/arcpu-$(tag "$mode")")" "$(tr '\n' ' ' <"$f")"
done
if [ -f "$T/ar-tcp-reads" ]; then
  r=$(median_col <"$T/ar-tcp-reads")
  echo "fabric x tcp-reads: $(python3 -c "print('%.2f' % ($(median_col <"$T/ar-fabric")/$r if $r else 0))"), rma x tcp-reads: $(python3 -c "print('%.2f' % ($(median_col <"$T/ar-fabric_--fabric-rma")/$r if $r else 0))")"
fi

if [ "$PINGPONG" = 1 ]; then
  command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing (apt-get install libfabric-bin)"; exit 1; }
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  echo "== ping-pong, 2 ranks (MB/s, both directions; one run each)"
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
fi
echo "load after: $(uptime)"

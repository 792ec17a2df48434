#!/usr/bin/env bash
# How fast the other ranks of a job give up on a lost rank, against --peer-timeout: 4 ranks
# (torchrun-style environment, no launcher to clean up) loop on an 8 MiB all-reduce; once all
# run, rank 1 is killed (SIGKILL: its sockets close) or stopped (SIGSTOP: silence only). Prints
# the time until the last other rank has exited, and that time / --peer-timeout.
# Usage: bench/failure_detection.sh BUILD_DIR [DATA_DIR]   (TIMEOUTS="1s 3s 10s")
set -euo pipefail
G="$(cd "$1" && pwd)/tools/genie/genie"
TIMEOUTS=${TIMEOUTS:-"1s 3s 10s"}
T=$(mktemp -d)
trap 'pkill -KILL -f "$T/w" 2>/dev/null || true; rm -rf "$T"' EXIT
"$G" gen collective --type all_reduce --size 8MiB --ranks 4 -o "$T/w" >/dev/null

secs() { python3 -c "import re,sys; n,u=re.fullmatch(r'([0-9.]+)(ms|s)', sys.argv[1]).groups(); print(float(n)/(1000 if u=='ms' else 1))" "$1"; }

printf "%-8s %-7s %12s %10s\n" "timeout" "signal" "detected(s)" "/timeout"
port=29700
for t in $TIMEOUTS; do
  for sig in KILL STOP; do
    port=$((port + 1)); out="$T/out-$t-$sig"; pids=()
    for r in 0 1 2 3; do
      RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$G" run "$T/w" --iterations 1000000 --peer-timeout "$t" -o "$out" >"$T/log-$r" 2>&1 &
      pids+=($!)
    done
    until [ "$(grep -l '"record":"op"' "$out"/rank-*.jsonl 2>/dev/null | wc -l)" -eq 4 ]; do sleep 0.05; done
    start=$(date +%s.%N)
    kill -$sig "${pids[1]}"
    { for i in 0 2 3; do wait "${pids[$i]}" || true; done; } 2>/dev/null  # no "Killed" notes
    end=$(date +%s.%N)
    { kill -KILL "${pids[1]}"; wait "${pids[1]}"; } 2>/dev/null || true
    python3 -c "d=$end-$start; print(f'{\"$t\":<8} {\"$sig\":<7} {d:12.2f} {d/$(secs "$t"):10.2f}')"
  done
done

#!/usr/bin/env bash
# `genie run` at scale on one machine (issue 17): a 1 MiB ring all-reduce at 64, 256 and 512
# ranks (RANKS to change), started by genie launch, one measured iteration. Per rank count it
# prints, from results.json's per-rank traffic records: start-up (launch to the first
# operation, and the slowest rank's rendezvous and connect), peak RSS per rank, sockets per
# rank, and the all-reduce's wall time (the step time).
# Usage: bench/run_scale.sh BUILD_DIR   (RANKS="64 256 512" SIZE=1MiB TIMEOUT=300s)
set -euo pipefail
G="$(cd "${1:?usage: bench/run_scale.sh BUILD_DIR}" && pwd)/tools/genie/genie"
RANKS=${RANKS:-"64 256 512"}
SIZE=${SIZE:-1MiB}
TIMEOUT=${TIMEOUT:-300s}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
printf '%6s %12s %12s %12s %14s %10s %10s %14s\n' ranks "startup max" "rendezvous" "connect" \
  "RSS/rank MiB" "sockets" "peers" "all-reduce"
printf '%6s %12s %12s %12s %14s %10s %10s %14s\n' "" "(s)" "max (s)" "max (s)" "med / max" \
  "min-max" "min-max" "wall (ms)"
for n in $RANKS; do
  "$G" gen collective --type all_reduce --size "$SIZE" --ranks "$n" -o "$T/w$n" >/dev/null
  if ! "$G" launch -n "$n" -- run "$T/w$n" --peer-timeout "$TIMEOUT" --output "$T/out$n" \
      >"$T/log$n" 2>&1; then
    echo "$n ranks: run failed (last lines of its log:)"; tail -5 "$T/log$n"; continue
  fi
  python3 - "$T/out$n/results.json" "$n" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
t = doc["provenance"]["traffic"]
st = [x["startup"] for x in t]
rss = [x["peak_rss_bytes"] / 2**20 for x in t]
socks = [x["connections"] for x in t]
peers = [len(x["connected_peers"]) for x in t]
step = doc["summary"]["step_time_ns"]["median"] if "summary" in doc and "step_time_ns" in doc["summary"] else None
if step is None:
    step = max(r["finish"] - r["start"] for r in doc["ranks"] if r.get("iteration", 0) >= 0)
m = lambda k: max(s.get(k, 0) for s in st) / 1e9
print(f'{sys.argv[2]:>6} {m("launch_to_first_op_ns"):12.2f} {m("rendezvous_ns"):12.2f} '
      f'{m("connect_ns"):12.2f} {statistics.median(rss):6.1f} / {max(rss):5.1f} '
      f'{min(socks):>4}-{max(socks):<5} {min(peers):>4}-{max(peers):<5} {step / 1e6:14.1f}')
PY
done

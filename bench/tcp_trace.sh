#!/usr/bin/env bash
# What TCP did during one run on a star testbed, beside the run's prediction: the diagnostic
# behind docs/notes/2026-12-07-cubic-uneven-windows.md (issue 46). While
# `genie launch --testbed TESTBED -n N -- run WORKLOAD --predict` runs, it samples `ss -tin`
# in each of HOSTS' namespaces every INTERVAL s (each connection's window, round trip, bytes
# acknowledged and retransmissions) and the switch's port counters (each host link's bytes
# both ways). Then, per measured iteration, it prints measured / predicted and each host link's
# rate in and out, and for the ops furthest behind their prediction (results.json
# `ops_behind`), what each sampled connection of their ranks' hosts moved while they ran, with
# its median window and round trip: which connection held the op back, and whether its links
# were full.
# Needs root, a star testbed that is up (`genie testbed up --name TESTBED --topology star:N`,
# calibrated for a prediction) and python3. Leaves the testbed up; the run's folder and the
# samples stay in OUT.
# Usage: bench/tcp_trace.sh BUILD_DIR TESTBED OUT -- WORKLOAD [genie run flags]
#   N=8 (ranks)  ITER=4 WARMUP=1  INTERVAL=0.02  HOSTS="0 1" (default: every host; each sampled
#   host costs the machine CPU the run shares, so sample the hosts of the op you are after)
set -euo pipefail
BUILD="$(cd "${1:?usage: bench/tcp_trace.sh BUILD_DIR TESTBED OUT -- WORKLOAD [flags]}" && pwd)"
TB=${2:?testbed name}
OUT=${3:?output folder}
shift 3
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "tcp_trace: no workload after --" >&2; exit 2; }
G="$BUILD/tools/genie/genie"
N=${N:-8}
ITER=${ITER:-4}
WARMUP=${WARMUP:-1}
INTERVAL=${INTERVAL:-0.02}
if [ "$(id -u)" -ne 0 ]; then echo "tcp_trace: needs root (network namespaces); skipped"; exit 0; fi
[ -x "$G" ] || { echo "tcp_trace: no genie at $G; build it first" >&2; exit 1; }
ip netns list | grep -q "^$TB-sw\b" || {
  echo "tcp_trace: no switch namespace $TB-sw: bring up a star testbed first (genie testbed up --name $TB --topology star:$N)" >&2
  exit 1
}
HOSTS=${HOSTS:-$(ip netns list | sed -n "s/^$TB-h\([0-9]*\)\b.*/\1/p" | sort -n | tr '\n' ' ')}
mkdir -p "$OUT"
PIDS=()
stop() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
# Stamps are /proc/uptime seconds: the ranks' CLOCK_MONOTONIC, which their streams record.
for h in $HOSTS; do
  ip netns exec "$TB-h$h" bash -c "while true; do echo \"@ \$(cut -d' ' -f1 /proc/uptime)\"; ss -tinH state established; sleep $INTERVAL; done" >"$OUT/ss-h$h.txt" &
  PIDS+=($!)
done
ip netns exec "$TB-sw" bash -c "while true; do l=\"\$(cut -d' ' -f1 /proc/uptime)\"; for p in /sys/class/net/h*n0; do n=\${p##*/}; l=\"\$l \$n \$(cat \$p/statistics/tx_bytes) \$(cat \$p/statistics/rx_bytes)\"; done; echo \"\$l\"; sleep $INTERVAL; done" >"$OUT/ports.txt" &
PIDS+=($!)
rc=0
"$G" launch --testbed "$TB" -n "$N" -- run "$@" -n "$ITER" --warmup "$WARMUP" --predict -o "$OUT/run" \
  >"$OUT/run.log" 2>&1 || rc=$?
stop
trap - EXIT
if [ "$rc" -ne 0 ]; then echo "tcp_trace: the run failed (rc $rc):" >&2; tail -20 "$OUT/run.log" >&2; exit "$rc"; fi

python3 - "$OUT" "$TB" <<'EOF'
import collections, glob, json, re, statistics, sys
out, tb = sys.argv[1], sys.argv[2]
res = json.load(open(f"{out}/run/results.json"))
pred = res.get("prediction") or {}
# Each host link's bytes: the switch port toward host i sends what i receives (tx), and
# receives what i sends (rx).
ports = []
for line in open(f"{out}/ports.txt"):
    f = line.split()
    if len(f) < 4 or (len(f) - 1) % 3: continue
    ports.append((float(f[0]), {f[i]: (int(f[i + 1]), int(f[i + 2])) for i in range(1, len(f), 3)}))
def link_rates(s, e):
    a = [p for p in ports if s <= p[0] <= e]
    if len(a) < 2: return {}
    dt = a[-1][0] - a[0][0]
    return {n: ((a[-1][1][n][0] - a[0][1][n][0]) / dt / 1e6, (a[-1][1][n][1] - a[0][1][n][1]) / dt / 1e6)
            for n in a[0][1] if n in a[-1][1]}
# Samples per connection (local -> peer address).
conns = collections.defaultdict(list)
for path in glob.glob(f"{out}/ss-h*.txt"):
    lines = open(path).read().split("\n")
    t = None
    for i, l in enumerate(lines):
        if l.startswith("@"): t = float(l.split()[1]); continue
        f = l.split()
        if t is None or len(f) < 4 or not f[0].isdigit() or i + 1 >= len(lines): continue
        info = lines[i + 1]
        g = lambda k: (re.search(k + r"[: ]([\d.]+)", info) or [None, None])[1]
        if g("bytes_acked") is None: continue
        key = (f[-2].rsplit(":", 1)[0], f[-1].rsplit(":", 1)[0], f[-2].rsplit(":", 1)[1], f[-1].rsplit(":", 1)[1])
        retrans = re.search(r"retrans:\d+/(\d+)", info)
        conns[key].append((t, int(g("bytes_acked")), int(g("cwnd") or 0), float(g(" rtt") or 0),
                           int(retrans.group(1)) if retrans else 0))
host_of = lambda ip: "h%d" % (int(ip.split(".")[-1]) - 1) if ip.startswith("10.100.0.") else ip
def during(s, e):
    rows = []
    for (src, dst, sp, dp), v in conns.items():
        w = [x for x in v if s <= x[0] <= e]
        if len(w) < 2 or w[-1][0] <= w[0][0]: continue
        mb = (w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0]) / 1e6
        rows.append((host_of(src), host_of(dst), mb, statistics.median(x[2] for x in w),
                     statistics.median(x[3] for x in w), w[-1][4] - w[0][4]))
    return rows
# Each rank's iterations and ops, on its clock (ranks on one machine share it).
iters, ops = {}, {}
for path in glob.glob(f"{out}/run/rank-*.jsonl"):
    for l in open(path):
        try: j = json.loads(l)
        except ValueError: continue
        if j.get("record") == "rank" and j.get("rank") == 0: iters[j["iteration"]] = (j["start"] / 1e9, j["finish"] / 1e9)
        if j.get("record") == "op" and "end" in j: ops[(j["rank"], j["iteration"], j["node"])] = (j["start"] / 1e9, j["end"] / 1e9)
print(f"# tcp_trace {tb}: {len(conns)} connection(s) sampled, {len(ports)} port samples; rates in MB/s")
for it in pred.get("iterations", []):
    k = it["iteration"]
    if k not in iters: continue
    s, e = iters[k]
    lr = link_rates(s, e)
    links = " ".join(f"{n[:-2]} {i:.0f}/{o:.0f}" for n, (i, o) in sorted(lr.items(), key=lambda x: int(x[0][1:-2])))
    print(f"iteration {k}: measured / predicted {it['measured_step_ns'] / it['expected_step_ns']:.2f}; host links in/out: {links}")
    for op in it.get("ops_behind", [])[:3]:
        span = [ops.get((r, k, op["node"])) for r in op["ranks"]]
        span = [x for x in span if x]
        if not span: continue
        os_, oe = min(x[0] for x in span), max(x[1] for x in span)
        hosts = {f"h{r}" for r in op["ranks"]}  # one rank per host on a star testbed
        print(f"  {op['type']} node {op['node']} ranks {'-'.join(map(str, op['ranks']))} {op.get('name', '')}: "
              f"{oe - os_:.3f} s, {op['ratio']:.2f}x its prediction")
        for src, dst, mb, cw, rtt, rx in sorted(during(os_, oe)):
            if (src in hosts or dst in hosts) and mb >= 0.5:  # idle connections left out
                print(f"    {src}->{dst} {mb:7.1f}  cwnd {cw:.0f}  rtt {rtt:.1f} ms  retrans {rx}")
EOF

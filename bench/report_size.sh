#!/usr/bin/env bash
# The HTML report at scale: size and open time of `genie report` pages for a 512-rank run and a
# 512-host doctor scan (issue 18: under 5 MB, open in under 3 s in headless Chromium).
#   run: a 512-rank ring all-reduce (64 MiB) simulated for 50 iterations (`genie simulate -o`
#        writes the same results.json as a real run), with a prediction and a 512-host
#        localisation (each host's two ring neighbours probed, one host slow) added as a real
#        --predict --localize run records them;
#   doctor: a full 512 x 512 pairwise matrix, one host slow on transmit.
# Open time: the page's own clock at the end of its self-check (navigation start to every chart
# drawn, #genie-selfcheck "ms"; "draw_ms" of it after the page loaded and Chart.js parsed), and
# the wall time of `chromium --headless --dump-dom` on the page
# beside the same on an empty page (Chromium's own start).
# Usage: bench/report_size.sh BUILD_DIR        needs: chromium, python3
set -euo pipefail
G="$1/tools/genie/genie"
for tool in chromium python3 bc; do
  command -v $tool >/dev/null || { echo "report_size: skipped: no $tool (scripts/install-deps.sh)"; exit 0; }
done
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
N=512
"$G" gen collective --type all_reduce --size 64MiB --ranks $N -o "$T/ar" >/dev/null
printf 'topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' $N > "$T/sw.yml"
"$G" simulate "$T/ar" --network "$T/sw.yml" -n 50 -o "$T/run" -q >/dev/null
python3 - "$T" $N <<'PY'
import json, random, sys
t, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
hosts = ["h%d" % i for i in range(n)]
def matrix(full):
    m = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in (range(n) if full else [(i + 1) % n, (i - 1) % n]):
            if i != j:
                m[i][j] = 0.047 * random.uniform(0.9, 1.05) * (0.1 if i == 7 else 1)
    return m
def scan(full):
    return {"healthy": False, "hosts": hosts, "seconds": 1.0, "bytes_per_direction": 4194304,
            "expected_gbps": 0.047, "expected_source": "bench", "reference_gbps": 0.047,
            "reference_rtt_us": 50,
            "pairwise": {"gbps": matrix(full), "rtt_us": [], "retransmitted": []},
            "per_host": [{"host": h, "tx_gbps": 0.047, "rx_gbps": 0.047, "rtt_us": 50} for h in hosts],
            "findings": [{"kind": "slow_transmit", "host": "h7", "value": 0.0047, "expected": 0.047,
                          "text": "h7: transmit side slow"}]}
r = json.load(open(t + "/run/results.json"))
steps = [it for it in r["iterations"] if it["iteration"] >= 0]
r["prediction"] = {"source": "bench", "threshold": 0.25, "flagged_iterations": [],
    "iterations": [{"iteration": it["iteration"], "measured_step_ns": it["step_time_ns"],
                    "expected_step_ns": int(it["step_time_ns"] / 1.02), "ratio": 1.02, "slow": False,
                    "ops": [{"type": "all_reduce", "measured_busbw_gbps": 40.0,
                             "expected_busbw_gbps": 41.0, "slowdown": 1.02, "slow": False}]}
                   for it in steps]}
r["localization"] = scan(False)
json.dump(r, open(t + "/run/results.json", "w"))
json.dump(scan(True), open(t + "/doctor.json", "w"))
PY
"$G" report "$T/run/results.json" -o "$T/run.html" >/dev/null
"$G" report "$T/doctor.json" -o "$T/doctor.html" >/dev/null
echo '<html><body>empty</body></html>' > "$T/empty.html"
open_page() {  # page -> wall seconds and the self-check's line
  local start end
  start=$(date +%s.%N)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/profile" \
    --window-size=1400,2600 --dump-dom "file://$1" 2>/dev/null | grep -o '<pre id="genie-selfcheck"[^<]*' > "$T/check" || true
  end=$(date +%s.%N)
  rm -rf "$T/profile"
  echo "$end - $start" | bc -l
}
empty=$(open_page "$T/empty.html")
printf "%-30s %10s %10s %10s %10s %s\n" "page" "size (MB)" "wall (s)" "page (ms)" "draw (ms)" "self-check"
printf "%-30s %10s %10.2f %10s %10s %s\n" "empty page (chromium's start)" "-" "$empty" "-" "-" "-"
for p in run doctor; do
  wall=$(open_page "$T/$p.html")
  size=$(stat -c %s "$T/$p.html")
  ms=$(sed -n 's/.*"ms":\([0-9]*\).*/\1/p' "$T/check")
  draw=$(sed -n 's/.*"draw_ms":\([0-9]*\).*/\1/p' "$T/check")
  status=$(sed -n 's/.*data-status="\([a-z]*\)".*/\1/p' "$T/check")
  printf "%-30s %10.2f %10.2f %10s %10s %s\n" "$N-rank $p" "$(echo "$size/1000000" | bc -l)" "$wall" \
    "${ms:-?}" "${draw:-?}" "${status:-none}"
done

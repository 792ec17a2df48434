#!/bin/sh
# Runs one libFuzzer target the way fuzz/README.md's table was made, and prints one table row.
#   fuzz/run.sh TARGET [SECONDS=600] [BUILD_DIR=build/fuzz]   (from the checkout's root)
# New inputs go to a scratch copy of fuzz/corpus/TARGET (under $FUZZ_WORK, default
# /tmp/genie-fuzz), never into the checkout; crashes, leaks and timeouts are written there as
# crash-*, leak-*, timeout-* and the run stops. Add a crash's minimized input to the corpus and
# to the parser's unit tests once it is fixed.
set -eu
target=$1
seconds=${2:-600}
build=${3:-build/fuzz}
work=${FUZZ_WORK:-/tmp/genie-fuzz}/$target
case $target in
  results_fuzz | comm_groups_fuzz | report_inputs_fuzz) dict=fuzz/dicts/json.dict ;;
  synth_model_fuzz) dict=fuzz/dicts/synth_model.dict ;;
  astra_config_fuzz) dict=fuzz/dicts/astra_config.dict ;;
  msccl_xml_fuzz) dict=fuzz/dicts/msccl_xml.dict ;;
  *) dict= ;;
esac
mkdir -p "$work/corpus"
if [ -d "fuzz/corpus/$target" ]; then cp -n fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true; fi
status=0
"$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/" ${dict:+-dict=$dict} "$work/corpus" \
  > "$work/log" 2>&1 || status=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log")
corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$work/log" | tail -n 1 | cut -d' ' -f2)
if [ "$status" -eq 0 ]; then
  result=clean
else
  result="FAILED ($(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | tr '\n' ' '))"
fi
echo "| $target | ${secs:-?} | ${runs:-?} | ${corpus:-?} | $result |"
exit "$status"

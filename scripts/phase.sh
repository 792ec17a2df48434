#!/usr/bin/env bash
# Runs one phase of `make run` / `make test` and prints how long it took, and the time since
# the make started (GENIE_MAKE_START, seconds since the epoch, set by the Makefile), so the
# first result's time can be read off the output.
# Usage: scripts/phase.sh NAME COMMAND...
name=$1
shift
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
since=""
if [ -n "${GENIE_MAKE_START:-}" ]; then
  since=$(awk -v s="$GENIE_MAKE_START" -v e="$end" \
    'BEGIN { t = e - s; printf ", %d:%02d since the start", int(t / 60), int(t) % 60 }')
fi
awk -v n="$name" -v s="$start" -v e="$end" -v since="$since" \
  'BEGIN { printf "[time] %s: %.1f s%s\n", n, e - s, since }'
exit $rc

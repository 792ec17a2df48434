#!/usr/bin/env bash
# `make run`: genie's main job on the embedded default workload. Needs no root and changes
# nothing on the machine.
set -euo pipefail
GENIE=$1
DATA=$2
WORKLOAD="$DATA/traces/generated/stg/gpt_dp2_tp2_pp2"
if [ ! -d "$WORKLOAD" ]; then
  echo "make run: the shipped workload $WORKLOAD is missing; is ../shared beside the checkout?" >&2
  exit 1
fi
"$GENIE" inspect "$WORKLOAD"

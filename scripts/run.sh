#!/usr/bin/env bash
# The main job. For now: simulate the demo warehouse under every baseline policy and compare
# their relative lateness (later, this renders the reports).
set -euo pipefail
cd "$(dirname "$0")/.."
workload=data/workloads/demo.yaml
.venv/bin/staleness-lab validate "$workload"
for policy in fifo random edf edf-p max-benefit; do
  echo
  .venv/bin/staleness-lab simulate "$workload" --policy "$policy" --relative
done

#!/usr/bin/env bash
# The main job: execute every notebook in notebooks/ at the standard profile (each kernel starts
# its own embedded local Spark session; one notebook per core at once, at most 3, the longest
# first: `report --jobs`) and render reports/<notebook>.html plus reports/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/staleness-lab report --profile standard
echo "reports: open reports/index.html"

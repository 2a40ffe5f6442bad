#!/usr/bin/env bash
# Create .venv/ in the checkout with the package (editable), its dependencies and the test tools,
# and register that environment as the Jupyter kernel "staleness-lab" (inside .venv, so it is
# visible to .venv/bin/jupyter and removed with .venv).
# Idempotent: reinstalls only when pyproject.toml is newer than the last install, and registers
# the kernel only when its spec is missing (so an older .venv gets it too).
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin=${PYTHON:-python3}
if ! "$python_bin" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "setup: Python 3.11 or newer is needed as '$python_bin' (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi

bash scripts/ensure-java.sh

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$python_bin" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing staleness-lab and its dependencies into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[dev]"
  touch "$stamp"
fi
kernel_spec=.venv/share/jupyter/kernels/staleness-lab/kernel.json
if [ ! -f "$kernel_spec" ]; then
  echo "setup: registering the Jupyter kernel 'staleness-lab'"
  .venv/bin/python -m ipykernel install --sys-prefix --name staleness-lab \
    --display-name "Python (staleness-lab)" >/dev/null
fi
# The simulator's compiled core is compiled once per checkout and cached beside its module (about
# 4 s cold, 0.4 s to load); do it here rather than inside the first simulation.
.venv/bin/python -c 'from staleness_lab.api import warm; warm()'
echo "setup: ready ($(.venv/bin/staleness-lab --version))"

#!/usr/bin/env bash
# JupyterLab on notebooks/ with the project's kernel ("Python (staleness-lab)", registered by
# scripts/setup.sh). Listens on loopback only; the port is LAB_PORT (default 8888), the access
# token JUPYTER_TOKEN when set (otherwise Jupyter makes one and prints the URL). Extra arguments
# go to `jupyter lab` unchanged (`make lab LAB_ARGS=...` passes them), e.g. --log-level=DEBUG.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${JUPYTER_TOKEN+set}" ] && [ -z "$JUPYTER_TOKEN" ]; then
  echo "lab: JUPYTER_TOKEN is set but empty, which would switch authentication off; unset it or give a token" >&2
  exit 2
fi
port=${LAB_PORT:-8888}
options=()
# A port asked for explicitly is used or the start fails; the default one may move on if taken.
if [ -n "${LAB_PORT:-}" ]; then
  options+=(--ServerApp.port_retries=0)
fi
# Jupyter refuses to run as root unless told; fine here (containers): loopback only, token required.
if [ "$(id -u)" = "0" ]; then
  options+=(--allow-root)
fi
mkdir -p notebooks
# exec: the server replaces this shell, so a signal to it (Ctrl-C, SIGTERM) stops Jupyter itself.
exec .venv/bin/jupyter lab \
  --notebook-dir=notebooks \
  --ip=127.0.0.1 \
  --port="$port" \
  --no-browser \
  "${options[@]}" \
  "$@"

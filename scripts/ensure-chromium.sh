#!/usr/bin/env bash
# The HTML report tests open the rendered pages in headless Chromium. Use the `chromium` on PATH
# when there is one; otherwise install Debian's `chromium` package with apt-get when we can (root
# on Debian/Ubuntu), else say exactly what is missing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium) is installed"
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium: installing Debian's chromium package with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  if command -v chromium >/dev/null 2>&1; then
    chromium --version 2>/dev/null | head -1 || true
    exit 0
  fi
  echo "chromium: apt-get finished but no \`chromium\` command is on PATH" >&2
  exit 1
fi

cat >&2 <<'MSG'
chromium: missing. The HTML report tests need a headless-capable Chromium as `chromium` on PATH.
Install it, e.g. `sudo apt-get install chromium` on Debian/Ubuntu, then rerun.
MSG
exit 1

#!/usr/bin/env bash
# Spark needs a Java runtime, 17 or newer. Use the one on PATH (or JAVA_HOME) when it is recent
# enough; otherwise install OpenJDK 17 with apt-get when we can (root on Debian/Ubuntu), else say
# exactly what is missing.
set -euo pipefail

java_major() {
  local java_bin="$1"
  "$java_bin" -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}

find_java() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"; return; fi
  command -v java || true
}

java_bin=$(find_java)
if [ -n "$java_bin" ]; then
  major=$(java_major "$java_bin")
  if [ -n "$major" ] && [ "$major" -ge 17 ]; then
    echo "java: $java_bin (major version $major) is fine for Spark"
    exit 0
  fi
  echo "java: $java_bin is version ${major:-unknown}; Spark 4 needs Java 17 or newer"
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "java: installing openjdk-17-jre-headless with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
  java -version 2>&1 | head -1
  exit 0
fi

cat >&2 <<'MSG'
java: missing. Spark needs a Java runtime, version 17 or newer, on PATH (or JAVA_HOME set).
Install one, e.g. `sudo apt-get install openjdk-17-jre-headless` on Debian/Ubuntu, then rerun.
MSG
exit 1

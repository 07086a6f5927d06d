#!/bin/sh
# VmRSS of `bt run bench/idle.bt` holding N idle actors, minus the same with 0 actors.
# usage: bench/idle_memory.sh [BT] [N]
BT=${1:-target/dist/bt}
N=${2:-100000}
rss() {
  "$BT" run bench/idle.bt --main Bench -- "$1" > /tmp/bt_idle.$$ &
  pid=$!
  while ! grep -q READY /tmp/bt_idle.$$ 2>/dev/null; do sleep 0.05; done
  sleep 0.3
  kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  wait $pid
  rm -f /tmp/bt_idle.$$
  echo "$kb"
}
base=$(rss 0)
full=$(rss "$N")
echo "N=$N base=${base}KiB full=${full}KiB per-actor=$(( (full - base) * 1024 / N )) bytes"

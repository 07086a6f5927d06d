#!/usr/bin/env bash
# Instructions per cross-node call (callgrind), the companion of bench/cluster_calls.sh: a bt
# server node under callgrind answers an erl client's gen_server:calls (erl->bt) and a bt
# client's sync sends (bt->bt); the bt client itself runs under callgrind too. Each figure is
# (instructions of N2 calls - instructions of N1 calls) / (N2 - N1), so connection set-up
# and start-up cancel out. Polling is off (BT_DIST_SPIN_US=0): a poll's count depends on
# timing. Prints three lines "... instr/call: K".
# Usage: bench/cluster_calls_instr.sh [N1] [N2]   (defaults 500, 1500; BT=path/to/bt as in
# cluster_calls.sh; needs valgrind and erl)
set -eu
cd "$(dirname "$0")/.."
N1=${1:-500}
N2=${2:-1500}
COOKIE=clustercallsinstr
export BT_DIST_SPIN_US=0
. bench/cluster_env.sh

valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.%p.out" \
  "$BT" run --name ccbt@127.0.0.1 --serve bench/remote_pingpong_server.bt >"$DIR/bt.out" 2>&1 & PIDS+=($!)
VPID=$!
wait_ready "$DIR/bt.out"
erlc -o "$DIR" bench/remote_pingpong_srv.erl
ctl() { callgrind_control "$@" "$VPID" >/dev/null 2>&1; }
# The server's instructions since the last zeroing.
dumped() {
  ctl -d
  local f
  until f=$(ls "$DIR"/cg."$VPID".out.* 2>/dev/null | head -1) && [ -n "$f" ] && grep -q '^totals:' "$f"; do sleep 0.2; done
  sed -n 's/^totals: *//p' "$f"
  rm -f "$DIR"/cg."$VPID".out.*
  ctl -z
}
erl_client() {
  erl -noshell -pa "$DIR" -name "cccli$RANDOM@127.0.0.1" -setcookie "$BT_COOKIE" \
    -eval "remote_pingpong_srv:run('ccbt@127.0.0.1', $1, 0)." >/dev/null
}
bt_client() { # $1 = calls, then a command prefix
  local n=$1
  shift
  "$@" "$BT" run --name "ccbtcli$RANDOM@127.0.0.1" bench/cluster_calls.bt --main Bench -- "$n" ccbt@127.0.0.1
}
erl_client 10
bt_client 10 >/dev/null
ctl -z
erl_client "$N1"; a=$(dumped)
erl_client "$N2"; b=$(dumped)
echo "erl->bt server instr/call: $(((b - a) / (N2 - N1)))"
bt_client "$N1" >/dev/null; a=$(dumped)
bt_client "$N2" >/dev/null; b=$(dumped)
echo "bt->bt server instr/call: $(((b - a) / (N2 - N1)))"
cg() { valgrind --tool=callgrind --callgrind-out-file="$DIR/cli.out" "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }
a=$(bt_client "$N1" cg)
b=$(bt_client "$N2" cg)
echo "bt->bt client instr/call: $(((b - a) / (N2 - N1)))"

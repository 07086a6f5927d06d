#!/usr/bin/env bash
# Remote ping-pong and remote spawn: N synchronous round trips between two
# bt nodes on loopback (through `Actor named: #echo on: aNode` and through the handle of an
# actor spawned there) against two erl nodes doing gen_server:call, and M remote spawns
# (`Idle spawnOn: aNode`, which answers once the actor runs) against erl's spawn/4 (which
# answers at once; one final round trip waits for the last), all in the same run; prints
# microseconds per operation and ratios (Erlang time / bt time: above 1.0 means bt is faster).
# Usage: bench/remote_pingpong.sh [N] [M]   (defaults 20000, 5000; builds bt with the dist profile if needed)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20000}
M=${2:-5000}
COOKIE=remotepingpongbench
. bench/cluster_env.sh

# bt <-> bt
"$BT" run --name ppsrv@127.0.0.1 --serve bench/remote_pingpong_server.bt >"$DIR/bt.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/bt.out"
"$BT" run --name ppcli@127.0.0.1 bench/remote_pingpong.bt --main Bench -- "$N" ppsrv@127.0.0.1 "$M" >"$DIR/btcli.out"
BT_TIME=$(sed -n 's/^TIME //p' "$DIR/btcli.out")
BT_PID=$(sed -n 's/^PIDTIME //p' "$DIR/btcli.out")
BT_SPAWN=$(sed -n 's/^SPAWN //p' "$DIR/btcli.out")

# erl <-> erl
erlc -o "$DIR" bench/remote_pingpong_srv.erl
erl -noshell -pa "$DIR" -name eppsrv@127.0.0.1 -setcookie "$BT_COOKIE" -s remote_pingpong_srv start >"$DIR/erl.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/erl.out"
erl -noshell -pa "$DIR" -name eppcli@127.0.0.1 -setcookie "$BT_COOKIE" \
  -eval "remote_pingpong_srv:run('eppsrv@127.0.0.1', $N, $M)." >"$DIR/erlcli.out"
ERL_TIME=$(sed -n 's/^TIME //p' "$DIR/erlcli.out")
ERL_SPAWN=$(sed -n 's/^SPAWN //p' "$DIR/erlcli.out")

python3 - "$N" "$M" "$BT_TIME" "$BT_PID" "$ERL_TIME" "$BT_SPAWN" "$ERL_SPAWN" <<'PY'
import sys
n, m = int(sys.argv[1]), int(sys.argv[2])
bt, btp, erl, bts, erls = map(float, sys.argv[3:])
print(f"remote round trip N={n}: bt (name proxy) {bt / n * 1e6:.1f} us, bt (spawned handle) {btp / n * 1e6:.1f} us, erlang gen_server:call {erl / n * 1e6:.1f} us; ratio (erlang/bt) {erl / bt:.2f}x, {erl / btp:.2f}x")
print(f"remote spawn M={m}: bt spawnOn: {bts / m * 1e6:.1f} us, erlang spawn/4 {erls / m * 1e6:.1f} us; ratio (erlang/bt) {erls / bts:.2f}x")
PY

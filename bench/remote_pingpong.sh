#!/usr/bin/env bash
# Remote ping-pong (issue 13): N synchronous round trips between two bt nodes on loopback
# (`Actor named: #echo on: aNode`, a gen_server call over Erlang distribution) against two
# erl nodes doing gen_server:call, measured in the same run; prints ns per round trip and
# the ratio (Erlang time / bt time: above 1.0 means bt is faster).
# Usage: bench/remote_pingpong.sh [N]   (default 20000; builds bt in release if needed)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20000}
BT=${BT:-target/release/bt}
[ -x "$BT" ] || cargo build --release -q
DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ERL_EPMD_PORT=$PORT BT_COOKIE=remotepingpongbench HOME=$DIR
"$BT" epmd --port "$PORT" & PIDS+=($!)
until "$BT" epmd --port "$PORT" -names >/dev/null 2>&1; do sleep 0.05; done

wait_ready() { until grep -q ready "$1" 2>/dev/null; do sleep 0.05; done; }

# bt <-> bt
"$BT" run --name ppsrv@127.0.0.1 --serve bench/remote_pingpong_server.bt >"$DIR/bt.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/bt.out"
BT_TIME=$("$BT" run --name ppcli@127.0.0.1 bench/remote_pingpong.bt --main Bench -- "$N" ppsrv@127.0.0.1 | sed -n 's/^TIME //p')

# erl <-> erl
erlc -o "$DIR" bench/remote_pingpong_srv.erl
erl -noshell -pa "$DIR" -name eppsrv@127.0.0.1 -setcookie "$BT_COOKIE" -s remote_pingpong_srv start >"$DIR/erl.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/erl.out"
ERL_TIME=$(erl -noshell -pa "$DIR" -name eppcli@127.0.0.1 -setcookie "$BT_COOKIE" \
  -eval "remote_pingpong_srv:run('eppsrv@127.0.0.1', $N)." | sed -n 's/^TIME //p')

python3 - "$N" "$BT_TIME" "$ERL_TIME" <<'PY'
import sys
n, bt, erl = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"remote_pingpong N={n}: bt {bt / n * 1e9:.0f} ns/round trip, erlang {erl / n * 1e9:.0f} ns/round trip, ratio (erlang/bt) {erl / bt:.2f}x")
PY

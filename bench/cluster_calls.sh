#!/usr/bin/env bash
# Synchronous calls across nodes on loopback, in the same run: an erl client calling a bt
# actor with gen_server:call (erl→bt), the same client calling an Erlang gen_server
# (erl→erl), and a bt client's sync sends to a bt actor (bt→bt). R rounds, the three kinds
# alternating (the order rotates each round); prints each round and the medians in
# microseconds per call, and the ratios erl→erl / erl→bt and erl→erl / bt→bt (above 1.0:
# the bt side is faster).
# Usage: bench/cluster_calls.sh [N] [R]   (defaults 20000 calls, 5 rounds; BT=path/to/bt,
# default target/dist/bt, built with the dist profile if missing)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20000}
R=${2:-5}
COOKIE=clustercallsbench
. bench/cluster_env.sh

# The servers: a bt actor and an Erlang gen_server, both registered as `echo`.
"$BT" run --name ccbt@127.0.0.1 --serve bench/remote_pingpong_server.bt >"$DIR/bt.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/bt.out"
erlc -o "$DIR" bench/remote_pingpong_srv.erl
erl -noshell -pa "$DIR" -name ccerl@127.0.0.1 -setcookie "$BT_COOKIE" -s remote_pingpong_srv start >"$DIR/erl.out" 2>&1 & PIDS+=($!)
wait_ready "$DIR/erl.out"

erl_client() { # $1 = server node; prints seconds
  erl -noshell -pa "$DIR" -name "cccli$RANDOM@127.0.0.1" -setcookie "$BT_COOKIE" \
    -eval "remote_pingpong_srv:run('$1', $N, 0)." | sed -n 's/^TIME //p'
}
bt_client() {
  "$BT" run --name "ccbtcli$RANDOM@127.0.0.1" bench/cluster_calls.bt --main Bench -- "$N" ccbt@127.0.0.1 |
    sed -n 's/^TIME //p'
}
KINDS=(erlbt erlerl btbt)
: >"$DIR/times"
for ((r = 0; r < R; r++)); do
  for ((k = 0; k < 3; k++)); do
    kind=${KINDS[$(((r + k) % 3))]}
    case $kind in
      erlbt) t=$(erl_client ccbt@127.0.0.1) ;;
      erlerl) t=$(erl_client ccerl@127.0.0.1) ;;
      btbt) t=$(bt_client) ;;
    esac
    echo "$r $kind $t" >>"$DIR/times"
  done
done

python3 - "$N" "$DIR/times" <<'PY'
import statistics, sys
n = int(sys.argv[1])
rows = [l.split() for l in open(sys.argv[2])]
us = {}
for r, kind, t in rows:
    us.setdefault(kind, []).append(float(t) / n * 1e6)
for r in sorted({int(r) for r, _, _ in rows}):
    line = ", ".join(f"{k} {float(t) / n * 1e6:.1f}" for rr, k, t in rows if int(rr) == r)
    print(f"round {r + 1}: {line} us/call")
m = {k: statistics.median(v) for k, v in us.items()}
print(f"median of {len(us['erlerl'])} rounds, N={n}: erl->bt gen_server:call {m['erlbt']:.1f} us, "
      f"erl->erl gen_server:call {m['erlerl']:.1f} us, bt->bt sync send {m['btbt']:.1f} us")
print(f"ratio erl->erl / erl->bt {m['erlerl'] / m['erlbt']:.2f}x (>= 1.0: a bt server is as fast); "
      f"erl->erl / bt->bt {m['erlerl'] / m['btbt']:.2f}x (>= 2.0: the goal)")
PY

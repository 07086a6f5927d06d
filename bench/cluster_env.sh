# Sourced by the cross-node benchmarks (bench/remote_pingpong.sh, bench/cluster_calls.sh):
# builds bt with the dist profile if BT is missing, makes a private temp dir (removed on exit
# with every process started through PIDS), and runs a private `bt epmd` on a free port.
# Needs COOKIE set by the caller; defines BT, DIR, PIDS, PORT and wait_ready FILE.
BT=${BT:-target/dist/bt}
[ -x "$BT" ] || cargo build --profile dist -q
DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ERL_EPMD_PORT=$PORT BT_COOKIE=$COOKIE HOME=$DIR
"$BT" epmd --port "$PORT" & PIDS+=($!)
until "$BT" epmd --port "$PORT" -names >/dev/null 2>&1; do sleep 0.05; done
wait_ready() { until grep -q ready "$1" 2>/dev/null; do sleep 0.05; done; }

#!/usr/bin/env bash
# Message passing against its two anchors, interleaved rounds: pingpong (sync round trips to
# one actor) and fan-out (spawn, call and collect N actors) with one or two bt binaries, the
# Lua coroutine programs and the tokio limit of the peer harness. Prints one line per round:
# ns per operation and the ratios. The tokio program is built from the harness's sources
# into a temp dir on first use.
# Usage: BT_SHARED=DIR bench/actors.sh ROUNDS BT [OTHER_BT]
#   e.g. BT_SHARED=DIR chrt -f 50 bench/actors.sh 5 target/dist/bt
set -eu
cd "$(dirname "$0")/.."
R=$1 A=$2 B=${3:-}
# BT_SHARED is the directory that holds bench/ (as for bench/run), or that bench/ itself.
H=$BT_SHARED/bench
[ -d "$H/peers" ] || H=$BT_SHARED
P=$H/peers
[ -f "$P/pingpong_coroutine.lua" ] || { echo "bench/actors.sh: no peer programs under $BT_SHARED" >&2; exit 2; }
TOKDIR=${TMPDIR:-/tmp}/bt-bench-tokio
TOK=$TOKDIR/target/release/tokio-pingpong
if [ ! -x "$TOK" ]; then
  rm -rf "$TOKDIR" && cp -r "$H/tokio-pingpong" "$TOKDIR" && chmod -R u+w "$TOKDIR"
  (cd "$TOKDIR" && { cargo build --release -q --offline || cargo build --release -q; })
fi
t() { "$@" 2>/dev/null | awk '$1=="TIME"{print $2}'; }
for _ in $(seq "$R"); do
  pa=$(t "$A" run bench/pingpong.bt --main Bench -- 1000000)
  pb=${B:+$(t "$B" run bench/pingpong.bt --main Bench -- 1000000)}
  pl=$(t lua5.4 "$P/pingpong_coroutine.lua" 1000000)
  pt=$(t "$TOK" tokio-st-pingpong 1000000)
  fa=$(t "$A" run bench/fanout.bt --main Bench -- 100000)
  fb=${B:+$(t "$B" run bench/fanout.bt --main Bench -- 100000)}
  fl=$(t lua5.4 "$P/fanout_coroutine.lua" 100000)
  ft=$(t "$TOK" tokio-st-fanout 100000)
  awk -v pa="$pa" -v pb="${pb:-0}" -v pl="$pl" -v pt="$pt" -v fa="$fa" -v fb="${fb:-0}" \
    -v fl="$fl" -v ft="$ft" 'BEGIN {
    printf "pingpong ns: bt %.0f", pa * 1000; if (pb > 0) printf " other %.0f", pb * 1000
    printf " lua %.0f tokio %.0f; bt/lua %.2f bt/tokio %.2f", pl * 1000, pt * 1000, pa / pl, pa / pt
    if (pb > 0) printf " other/lua %.2f", pb / pl
    printf " | fanout ns: bt %.0f", fa * 1e4; if (fb > 0) printf " other %.0f", fb * 1e4
    printf " lua %.0f tokio %.0f; bt/tokio %.2f bt/lua %.2f", fl * 1e4, ft * 1e4, fa / ft, fa / fl
    if (fb > 0) printf " other/tokio %.2f", fb / ft
    printf "\n" }'
done

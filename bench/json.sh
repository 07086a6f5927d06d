#!/usr/bin/env bash
# Json speed vs Python's json module, measured in the same run on the same ~10 MB document:
# `Json parse:` vs json.loads, `Json generate:` vs json.dumps (compact, sorted keys — bt writes
# Dictionaries in term order; UTF-8 output, ensure_ascii=False). Prints each time and the ratio
# (> 1: bt is faster).
# Usage: bench/json.sh [RUNS]   (builds bt with the dist profile unless BT names a binary; needs python3)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-5}
if [ -z "${BT:-}" ]; then cargo build --profile dist -q; BT=${CARGO_TARGET_DIR:-target}/dist/bt; fi
bt=$BT
doc=$(mktemp --suffix=.json); trap 'rm -f "$doc"' EXIT
python3 - "$doc" <<'PY'
import json, random, sys
rnd = random.Random(17)
words = ["alpha", "beta", "gamma", "delta", "naïve", "zürich", "東京", "quote\"d", "tab\there"]
recs = []
size = 0
i = 0
while size < 10_000_000:
    r = {"id": i, "name": "user %d" % i, "email": "user%d@example.org" % i,
         "active": i % 3 == 0, "score": round(rnd.random() * 1000, 3), "big": 10**20 + i,
         "tags": [rnd.choice(words) for _ in range(4)], "parent": None,
         "address": {"street": "%d Main St" % i, "zip": "%05d" % (i % 100000),
                     "geo": [rnd.uniform(-90, 90), rnd.uniform(-180, 180)]}}
    s = json.dumps(r)
    size += len(s) + 2
    recs.append(r)
    i += 1
open(sys.argv[1], "w", encoding="utf-8").write(json.dumps({"records": recs, "count": i}, indent=1))
PY
echo "document: $(wc -c < "$doc") bytes"
py=$(python3 bench/json_peer.py "$doc" "$runs")
b=$("$bt" run bench/json.bt --main Bench -- "$doc" "$runs")
echo "python: $py" | tr '\n' ' '; echo
echo "bt:     $b" | tr '\n' ' '; echo
python3 - "$py" "$b" <<'PY'
import sys
def get(s, k): return float([l.split()[1] for l in s.splitlines() if l.startswith(k)][0])
py, bt = sys.argv[1], sys.argv[2]
for k in ("PARSE", "GENERATE"):
    p, b = get(py, k), get(bt, k)
    print("%-9s bt %.3f s  python %.3f s  ratio (python/bt) %.2fx" % (k.lower(), b, p, p / b))
PY

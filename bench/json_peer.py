# Peer of bench/json.bt: time json.loads / json.dumps of the document given as argv[1]
# (best of `runs`, default 5). Prints `PARSE s` and `GENERATE s`, and RESULT lines to compare.
import json, sys, time
text = open(sys.argv[1], encoding="utf-8").read()
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
best_p = best_g = None
for _ in range(runs):
    t = time.perf_counter(); doc = json.loads(text); p = time.perf_counter() - t
    t = time.perf_counter(); out = json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False); g = time.perf_counter() - t
    best_p = p if best_p is None else min(best_p, p)
    best_g = g if best_g is None else min(best_g, g)
print("RESULT", len(doc), len(out))
print("PARSE", best_p)
print("GENERATE", best_g)

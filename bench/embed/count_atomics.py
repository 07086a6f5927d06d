#!/usr/bin/env python3
"""Counts the locked read-modify-writes (x86 `lock`-prefixed instructions and `xchg`) a
program executed, from a callgrind profile taken with `--dump-instr=yes`:

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=OUT \\
        BIN profile script
    python3 bench/embed/count_atomics.py OUT        # per object, the hottest sites

`profile script` makes 200,000 `Engine::run` calls: divide the binary's total by 200,000
for the atomics per call. Sites are listed with their address (`addr2line -f -e BIN ADDR`
names the function).
"""
import collections
import re
import subprocess
import sys


def parse(path):
    counts = collections.defaultdict(collections.Counter)
    names, ob, pos, skip = {}, None, 0, False
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        m = re.match(r"(c?)ob=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if not m.group(1):
                ob = names[m.group(2)]
            continue
        if line.startswith("calls="):
            skip = True  # the next line is the call's inclusive cost
            continue
        if line[0] in "0123456789+-*":
            toks = line.split()
            t = toks[0]
            if t == "*":
                pass
            elif t[0] in "+-":
                pos += int(t, 0)
            else:
                pos = int(t, 0)
            if skip:
                skip = False
            elif len(toks) >= 3:
                counts[ob][pos] += int(toks[2])
    return counts


def main():
    total = 0
    for obj, c in parse(sys.argv[1]).items():
        if not obj or not obj.startswith("/"):
            continue
        dis = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True
        ).stdout
        sites = []
        for l in dis.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s+(.*)", l)
            if not m:
                continue
            ins = m.group(2)
            if ins.startswith("lock ") or (ins.startswith("xchg") and "%ax,%ax" not in ins):
                n = c.get(int(m.group(1), 16), 0)
                if n:
                    sites.append((n, m.group(1), ins))
        n = sum(s[0] for s in sites)
        total += n
        print(f"{obj}: {n}")
        for k, a, ins in sorted(sites, reverse=True)[:25]:
            print(f"  {k:>10} 0x{a} {ins}")
    print("total", total)


if __name__ == "__main__":
    main()

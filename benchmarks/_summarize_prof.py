"""Summarise MATCHFLOW_GPR_PROFILE output of profile_gpr.py (second solve)."""
import collections
import re
import sys

lines = open(sys.argv[1]).read().splitlines()
idx = [i for i, l in enumerate(lines) if "download" in l]
sec = lines[idx[0] + 1:idx[1] + 1] if len(idx) > 1 else lines
agg = collections.defaultdict(lambda: [0, 0.0])
for l in sec:
    m = re.match(r"\[gpr\] (\S+)\s+([\d.]+) ms\s+(-?\d+) (-?\d+)", l)
    if m:
        agg[m[1]][0] += 1
        agg[m[1]][1] += float(m[2])
print({k: (v[0], round(v[1], 2)) for k, v in agg.items()})
if len(sys.argv) > 2:
    print("\n".join(sec))
print("\n".join(l for l in lines if "MatchingStats" in l or "rror" in l))

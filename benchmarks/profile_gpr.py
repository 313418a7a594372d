"""One warm-up and N timed gpu-pr solves on uniform_random(2^k, degree 3), for profilers."""
import sys
import time

import matchflow
import matchflow._matching
import matchflow._validation
from matchflow import generators

log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 22
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 1
g = generators.uniform_random(1 << log2n, 1 << log2n, degree=3.0, seed=1)
b = matchflow._validation.as_bipartite(g)
matchflow.maximum_matching(g, method="gpu-pr", device="cuda")
for _ in range(reps):
    t0 = time.perf_counter()
    r = matchflow._matching._match(b, t0, method="gpu-pr", device="cuda")
    print(r.stats, flush=True)

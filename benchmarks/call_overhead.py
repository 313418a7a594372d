#!/usr/bin/env python
"""Where the whole-call time of a GPU matching goes, outside the GPU.

For each graph and GPU method: the median over --repeat calls of the public
call (`maximum_matching`), of its validation (`as_bipartite`), of the core
call alone (`_core.matching`, which reports transfer, setup and on-GPU time
in its stats), and what is left in the core call beyond those parts (stream
and context work, copies not timed as transfer, result arrays).  Then a
cProfile of the public call, Python frames by own time.

    python benchmarks/call_overhead.py [--log2 20] [--repeat 7]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time

from matchflow import generators
from matchflow._matching import GPU_METHODS, _solve, _Tuning, maximum_matching
from matchflow._validation import as_bipartite


def median_seconds(call, repeat: int):
    call()  # warm-up
    times, last = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        last = call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), last


def report(name, graph, method, repeat):
    total, _ = median_seconds(lambda: maximum_matching(graph, method=method, device="cuda"),
                              repeat)
    check, g = median_seconds(lambda: as_bipartite(graph), repeat)
    core, (_, _, s) = median_seconds(lambda: _solve(g, method, 0, _Tuning()), repeat)
    parts = {k: s[f"seconds_{k}"] for k in ("transfer", "setup", "transpose", "init", "solve")}
    rest = core - sum(parts.values())
    cells = "  ".join(f"{k} {v * 1e3:.2f}" for k, v in parts.items())
    print(f"{name:<18} {method:<9} total {total * 1e3:7.2f} ms = validate {check * 1e3:.2f} "
          f"+ core {core * 1e3:.2f} (+ Python {(total - check - core) * 1e3:.2f}); "
          f"core: {cells}  rest {rest * 1e3:.2f}", flush=True)


def profile(graph, method):
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(5):
        maximum_matching(graph, method=method, device="cuda")
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(10)
    print(out.getvalue())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log2", type=int, default=20)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    n = 1 << args.log2
    graphs = {"uniform": generators.uniform_random(n, degree=3, seed=0),
              "rmat": generators.rmat(args.log2, edge_factor=16, seed=0)}
    for name, graph in graphs.items():
        for method in GPU_METHODS[:2]:
            report(f"{name}-2^{args.log2}", graph, method, args.repeat)
    profile(graphs["rmat"], "gpu-pr")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Where the whole-call time of a GPU matching (or, with --flow, a GPU maximum
flow) goes, outside the GPU.

For each graph and GPU method: the median over --repeat calls of the public
call (`maximum_matching`), of its validation (`as_bipartite`), of the core
call alone (`_core.matching`, which reports transfer, setup and on-GPU time
in its stats), and what is left in the core call beyond those parts (stream
and context work, copies not timed as transfer, result arrays).  Then a
cProfile of the public call, Python frames by own time.

    python benchmarks/call_overhead.py [--log2 20] [--repeat 7] [--flow]

--flow: for flow-suite instances, the median whole `solve_flow` call (gpu-pr)
split into validation (`_checked`), the core call (its stats: setup,
transfer, phases) and SciPy's flow matrix (`_flow_matrix`).
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


def report_flow(name, inst, repeat):
    from matchflow import _flow
    call = lambda: _flow.solve_flow(inst.graph, inst.source, inst.sink, method="gpu-pr")  # noqa: E731
    total, _ = median_seconds(call, repeat)
    check, net = median_seconds(lambda: _flow._checked(inst.graph, inst.source, inst.sink),
                                repeat)
    core, (_, arc_flow, _, s, built) = median_seconds(
        lambda: _flow._solve(net, "gpu-pr", 0, _flow._Tuning()), repeat)
    matrix, _ = median_seconds(lambda: _flow._flow_matrix(net, arc_flow, True, built=built),
                               repeat)
    cells = "  ".join(f"{k} {s['seconds_' + k] * 1e3:.1f}"
                      for k in ("setup", "transfer", "phase1", "phase2"))
    print(f"{name:<40} total {total * 1e3:7.1f} ms = validate {check * 1e3:.1f} + core "
          f"{core * 1e3:.1f} + flow matrix {matrix * 1e3:.1f} (+ Python "
          f"{(total - check - core - matrix) * 1e3:.1f}); core: {cells}", flush=True)


def flow_main(repeat: int) -> None:
    from matchflow.generators import flow
    instances = [flow.acyclic_dense(1000, seed=0), flow.grid_flow(1024, 1024, seed=0)[0],
                 flow.segmentation_grid(1024, 1024, seed=0), flow.rmat_flow(18, seed=0)[0],
                 flow.road_flow(1024, p_delete=0.35, seed=0)[0], flow.delaunay_flow(1 << 20, seed=0)[0]]
    for inst in instances:
        report_flow(inst.name, inst, repeat)


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
    p.add_argument("--flow", action="store_true", help="maximum flow instead of matching")
    args = p.parse_args()
    if args.flow:
        flow_main(args.repeat)
        return
    n = 1 << args.log2
    graphs = {"uniform": generators.uniform_random(n, degree=3, seed=0),
              "rmat": generators.rmat(args.log2, edge_factor=16, seed=0)}
    for name, graph in graphs.items():
        for method in GPU_METHODS[:2]:
            report(f"{name}-2^{args.log2}", graph, method, args.repeat)
    profile(graphs["rmat"], "gpu-pr")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Where the whole-call time of a GPU matching (or, with --flow, a GPU maximum
flow) goes, outside the GPU.

For each graph and GPU method: the median over --repeat calls of the public
call (`maximum_matching`), of the core call alone on SciPy's arrays as they
are (`_solve_raw`: what the public call runs for a CSR going to the GPU; the
structure is checked on the device), which reports transfer, setup and
on-GPU time in its stats, and what is left in the core call beyond those
parts (stream and context work, copies not timed as transfer, result
arrays).  For comparison, the checked host route it replaced: validation
and widening on the host (`as_bipartite`) + `_core.matching`.  With
--device-input (CuPy needed): the same graph from GPU memory (a CuPy CSR),
against the on-GPU time.  Then a cProfile of the public call, Python frames
by own time.

    python benchmarks/call_overhead.py [--log2 20] [--repeat 7] [--device-input] [--flow]

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
from matchflow._matching import (GPU_METHODS, _raw_csr, _solve, _solve_raw, _Tuning,
                                 maximum_matching)
from matchflow._validation import as_bipartite


def median_seconds(call, repeat: int):
    call()  # warm-up
    times, last = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        last = call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), last


def _cells(core, s):
    parts = {k: s[f"seconds_{k}"] for k in ("transfer", "setup", "transpose", "init", "solve")}
    rest = core - sum(parts.values())
    return "  ".join(f"{k} {v * 1e3:.2f}" for k, v in parts.items()) + f"  rest {rest * 1e3:.2f}"


def on_gpu(s) -> float:
    """The stats' on-GPU time: init, transpose and solve."""
    return s["seconds_init"] + s["seconds_transpose"] + s["seconds_solve"]


def report(name, graph, method, repeat):
    total, r = median_seconds(lambda: maximum_matching(graph, method=method, device="cuda"),
                              repeat)
    raw = _raw_csr(graph)
    core, (_, _, s) = median_seconds(lambda: _solve_raw(raw, method, 0, _Tuning()), repeat)
    csr_bytes = raw.indptr.nbytes + raw.indices.nbytes
    budget = on_gpu(s) + csr_bytes / 20e9 + 1e-3
    print(f"{name:<18} {method:<9} total {total * 1e3:7.2f} ms (target <= on-GPU "
          f"{on_gpu(s) * 1e3:.2f} + {csr_bytes / 1e6:.0f} MB at 20 GB/s + 1 ms = "
          f"{budget * 1e3:.2f}: {'met' if total <= budget else 'MISSED'}) = core "
          f"{core * 1e3:.2f} (+ Python {(total - core) * 1e3:.2f}); core: {_cells(core, s)}",
          flush=True)
    check, g = median_seconds(lambda: as_bipartite(graph), repeat)
    core, (_, _, s) = median_seconds(lambda: _solve(g, method, 0, _Tuning()), repeat)
    print(f"{'':<18} {'(checked host route)':<9} validate {check * 1e3:.2f} + core "
          f"{core * 1e3:.2f} = {(check + core) * 1e3:.2f} ms; core: {_cells(core, s)}",
          flush=True)


def report_device(name, graph, method, repeat):
    """The same graph from GPU memory (a CuPy CSR): whole call vs on-GPU time."""
    import cupy
    import cupyx.scipy.sparse as csp
    # cupyx holds only bool / float / complex data; the pattern is what is matched.
    dev = csp.csr_matrix((cupy.ones(graph.nnz, dtype=cupy.float32), cupy.asarray(graph.indices),
                          cupy.asarray(graph.indptr)), shape=graph.shape)

    def call():
        r = maximum_matching(dev, method=method)
        cupy.cuda.get_current_stream().synchronize()
        return r
    total, r = median_seconds(call, repeat)
    budget = 1.2 * on_gpu(r.stats.__dict__) + 0.3e-3
    print(f"{name:<18} {method:<9} from GPU memory: total {total * 1e3:7.2f} ms (target <= "
          f"1.2 x on-GPU {on_gpu(r.stats.__dict__) * 1e3:.2f} + 0.3 ms = {budget * 1e3:.2f}: "
          f"{'met' if total <= budget else 'MISSED'}); setup "
          f"{r.stats.seconds_setup * 1e3:.2f} transfer {r.stats.seconds_transfer * 1e3:.2f}",
          flush=True)


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
    p.add_argument("--device-input", action="store_true",
                   help="also time the graphs from GPU memory (CuPy CSR)")
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
            if args.device_input:
                report_device(f"{name}-2^{args.log2}", graph, method, args.repeat)
    profile(graphs["rmat"], "gpu-pr")


if __name__ == "__main__":
    main()

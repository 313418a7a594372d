#!/usr/bin/env python
"""Where the whole-call time of a GPU matching (or, with --flow, a GPU maximum
flow) goes, outside the GPU.

For each graph and GPU method: the medians over --repeat calls of the public
call (`maximum_matching`), of its on-GPU time and of what the call took
beyond it, call by call (the host-memory target: that part <= the CSR at
20 GB/s + 1 ms); of the core call alone on SciPy's arrays as they
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
                                       [--families uniform rmat delaunay rgg grid] [--rcp]

--families takes bench_matching.py's families and their defaults (uniform random
and R-MAT unless given); --rcp adds each graph with random row and column
permutations, as the 2^20 matching suite does.

--flow: for flow-suite instances, the median whole `solve_flow` call (gpu-pr,
or --flow-method) split into validation (`_checked`), the core call (its
stats: setup, transfer, phases), SciPy's flow matrix (`_flow_matrix`) and
the rest, each part timed inside the same calls as the total.

    python benchmarks/call_overhead.py --flow [--flow-method pr --threads 2]
                                       [--instances grid road] [--repeat 3]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

from matchflow import generators
from matchflow._matching import (GPU_METHODS, _raw_csr, _solve, _solve_raw, _Tuning,
                                 maximum_matching)
from matchflow._validation import as_bipartite

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_matching  # noqa: E402  (the matching suite's graph families)


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


def per_call(call, repeat: int):
    """Medians over `repeat` calls (after a warm-up) of the whole call, its
    on-GPU time (its own stats) and their difference, taken call by call:
    the GPU methods' solve times vary between calls (races are resolved
    after the fact), so a total and an on-GPU time from different calls
    would not be comparable; and the last result."""
    call()
    totals, gpus, last = [], [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        last = call()
        totals.append(time.perf_counter() - t0)
        gpus.append(on_gpu(last.stats.__dict__))
    over = [t - g for t, g in zip(totals, gpus)]
    return statistics.median(totals), statistics.median(gpus), statistics.median(over), last


def report(name, graph, method, repeat):
    total, gpu, over, _ = per_call(
        lambda: maximum_matching(graph, method=method, device="cuda"), repeat)
    raw = _raw_csr(graph)
    core, (_, _, s) = median_seconds(lambda: _solve_raw(raw, method, 0, _Tuning()), repeat)
    csr_bytes = raw.indptr.nbytes + raw.indices.nbytes
    allowed = csr_bytes / 20e9 + 1e-3
    print(f"{name:<24} {method:<9} total {total * 1e3:7.2f} ms, on-GPU {gpu * 1e3:.2f}, beyond "
          f"it {over * 1e3:.2f} (target <= {csr_bytes / 1e6:.0f} MB at 20 GB/s + 1 ms = "
          f"{allowed * 1e3:.2f}: {'met' if over <= allowed else 'MISSED'}); core call "
          f"{core * 1e3:.2f}: {_cells(core, s)}", flush=True)
    check, g = median_seconds(lambda: as_bipartite(graph), repeat)
    core, (_, _, s) = median_seconds(lambda: _solve(g, method, 0, _Tuning()), repeat)
    print(f"{'':<24} {'(checked host route)':<9} validate {check * 1e3:.2f} + core "
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
    total, gpu, _, r = per_call(call, repeat)
    budget = 1.2 * gpu + 0.3e-3
    print(f"{name:<24} {method:<9} from GPU memory: total {total * 1e3:7.2f} ms (target <= "
          f"1.2 x on-GPU {gpu * 1e3:.2f} + 0.3 ms = {budget * 1e3:.2f}: "
          f"{'met' if total <= budget else 'MISSED'}); setup "
          f"{r.stats.seconds_setup * 1e3:.2f} transfer {r.stats.seconds_transfer * 1e3:.2f}",
          flush=True)
    for gap in (0.0, 0.005):
        device_parts(name, call, repeat, gap)


# The Python steps of a call on a graph in GPU memory (_matching._match_on_device).
DEVICE_STEPS = ("_darr.sparse_pattern", "_check_device_method", "_skewed_degrees",
                "_darr.empty", "_core.matching_raw")


def device_parts(name, call, repeat: int, gap_s: float) -> None:
    """Medians of the parts of the call from GPU memory, each taken inside the
    call it belongs to: the Python steps, the core call split into its
    stats' parts and what is left of it ("core rest": stream and context
    work, the copies of the mates, the frees), and the stream's wait."""
    from matchflow import _matching
    rows = _timed_calls(_matching, DEVICE_STEPS, call, repeat, gap_s)
    for r in rows:
        s = r["stats"]
        r["on-GPU"] = s.seconds_init + s.seconds_transpose + s.seconds_solve
        r["setup"], r["transfer"] = s.seconds_setup, s.seconds_transfer
        r["core rest"] = r["_core.matching_raw"] - r["on-GPU"] - r["setup"] - r["transfer"]
        r["rest"] = r["total"] - sum(r[k] for k in DEVICE_STEPS)
    keys = ("total", "on-GPU", "setup", "transfer", "core rest") + DEVICE_STEPS[:-1] + ("rest",)
    cells = "  ".join(f"{k.split('.')[-1].strip('_')} "
                      f"{statistics.median(r[k] for r in rows) * 1e3:.3f}" for k in keys)
    print(f"{'':<24} {'':<9} parts (ms, {gap_s * 1e3:.0f} ms idle before each call): {cells}",
          flush=True)


def _timed_calls(module, names, call, repeat: int, gap_s: float = 0.0) -> list[dict]:
    """`repeat` calls (after a warm-up), each with the wall time of every
    function in `names` of `module` it ran (wrapped for the duration) and
    its own total: parts and total come from the same call, so their
    difference is what ran outside the parts (separately taken medians
    differ by the calls' own variation).  A name "mod.fn" wraps `fn` of the
    module `module.mod`.  `gap_s`: the host sleeps that long before each
    call (as a harness checking the last answer leaves the GPU idle)."""
    def owner(name):
        head, _, tail = name.rpartition(".")
        return (getattr(module, head) if head else module), tail
    saved = {name: getattr(*owner(name)) for name in names}
    parts: dict = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[name] = parts.get(name, 0.0) + time.perf_counter() - t0
        return wrapper

    rows = []
    try:
        for name, fn in saved.items():
            setattr(*owner(name), timed(name, fn))
        last = call()  # warm-up
        for _ in range(repeat):
            parts.clear()
            del last  # the previous result is freed outside the timing
            time.sleep(gap_s)
            t0 = time.perf_counter()
            last = call()
            rows.append(dict(parts, total=time.perf_counter() - t0, stats=last.stats))
    finally:
        for name, fn in saved.items():
            setattr(*owner(name), fn)
    return rows


def report_flow(name, inst, repeat, method="gpu-pr", threads=None, return_flow=True):
    """Medians over calls of the whole call and of its parts, each call's
    parts timed inside it: validation (`_checked`), the core call
    (`_solve`; its stats: setup, transfer, phases), SciPy's flow matrix
    (`_flow_matrix`: on the GPU path only its wrapping, built in transfer)
    and the rest of the call ("Python": method and device choice, stats,
    result)."""
    from matchflow import _flow
    call = lambda: _flow.solve_flow(inst.graph, inst.source, inst.sink,  # noqa: E731
                                    method=method, threads=threads,
                                    return_flow=return_flow)
    checks = ("_checked_compressed", "_int64_capacities", "_source_capacity")
    rows = _timed_calls(_flow, ("_checked", "_solve", "_flow_matrix") + checks, call, repeat)
    for r in rows:
        r["python"] = r["total"] - r["_checked"] - r["_solve"] - r.get("_flow_matrix", 0.0)
        for k in ("setup", "transfer", "phase1", "phase2"):
            r[k] = getattr(r["stats"], "seconds_" + k)
    med = {k: statistics.median(r.get(k, 0.0) for r in rows) * 1e3
           for k in ("total", "_checked", "_solve", "_flow_matrix", "python",
                     "setup", "transfer", "phase1", "phase2") + checks}
    cells = "  ".join(f"{k} {med[k]:.1f}" for k in ("setup", "transfer", "phase1", "phase2"))
    parts = "  ".join(f"{k.strip('_')} {med[k]:.1f}" for k in checks)
    print(f"{name:<40} total {med['total']:7.1f} ms = validate {med['_checked']:.1f} + core "
          f"{med['_solve']:.1f} + flow matrix {med['_flow_matrix']:.1f} (+ Python "
          f"{med['python']:.1f}); core: {cells}; validate: {parts}", flush=True)


def flow_main(repeat: int, method: str, threads, names, return_flow=True) -> None:
    from matchflow.generators import flow
    instances = {
        "ac": lambda: flow.acyclic_dense(1000, seed=0),
        "grid": lambda: flow.grid_flow(1024, 1024, seed=0)[0],
        "segmentation": lambda: flow.segmentation_grid(1024, 1024, seed=0),
        "segmentation2k": lambda: flow.segmentation_grid(2048, 2048, seed=0),
        "segmentation8": lambda: flow.segmentation_grid(1024, 1024, seed=0, connectivity=8),
        "segmentation3d": lambda: flow.segmentation_volume(128, 128, 128, seed=0),
        "rmat": lambda: flow.rmat_flow(18, seed=0)[0],
        "road": lambda: flow.road_flow(1024, p_delete=0.35, seed=0)[0],
        "delaunay": lambda: flow.delaunay_flow(1 << 20, seed=0)[0]}
    for key in names or instances:
        inst = instances[key]()
        report_flow(inst.name, inst, repeat, method, threads, return_flow)


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
    p.add_argument("--flow-method", default="gpu-pr", help="--flow: the method (default gpu-pr)")
    p.add_argument("--threads", type=int, default=None, help="--flow: OpenMP threads")
    p.add_argument("--instances", nargs="*", default=None,
                   help="--flow: some of ac grid segmentation segmentation2k segmentation8 "
                        "segmentation3d rmat road delaunay (default all)")
    p.add_argument("--value-only", action="store_true",
                   help="--flow: return_flow=False (value and cut only)")
    p.add_argument("--device-input", action="store_true",
                   help="also time the graphs from GPU memory (CuPy CSR)")
    p.add_argument("--families", nargs="+", default=["uniform", "rmat"],
                   choices=bench_matching.ALL_FAMILIES,
                   help="matching: bench_matching.py's families (default: uniform rmat)")
    p.add_argument("--rcp", action="store_true",
                   help="matching: each graph also with random row and column permutations")
    args = p.parse_args()
    if args.flow:
        flow_main(args.repeat, args.flow_method, args.threads, args.instances,
                  not args.value_only)
        return
    suite_args = bench_matching.parse_args([])  # the suite's defaults: degree, seed, ...
    last = None
    for family in args.families:
        built = bench_matching.family_builder(family, args.log2, suite_args)
        if built is None:
            continue
        name, build = built
        graph = build()
        variants = [(name, graph)]
        if args.rcp:
            permuted = generators.random_permutation(graph, seed=suite_args.seed + 1)
            variants.append((name + "-rcp", permuted))
        for label, g in variants:
            for method in GPU_METHODS[:2]:
                report(label, g, method, args.repeat)
                if args.device_input:
                    report_device(label, g, method, args.repeat)
        last = graph
    if last is not None:
        profile(last, "gpu-pr")


if __name__ == "__main__":
    main()

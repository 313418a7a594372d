"""`matchflow demo`: the four problems on generated inputs, each solved by
every method this machine runs and checked against SciPy (matching: every
method; assignment, flow, preprocessing: `auto` on the CPU and, where there
is one, the GPU)."""
from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp


Row = tuple[str, str, Any, float, "bool | str"]  # name, device, answer, seconds, ok or a note


def _table(title: str, rows: list[Row], scipy_seconds: float) -> int:
    """Prints the rows (name, device, answer, seconds, ok); returns the failures."""
    print(f"\n{title}")
    print(f"  {'method':<12} {'device':<7} {'answer':>12} {'seconds':>9} {'vs scipy':>9}  check")
    for name, device, answer, seconds, ok in rows:
        speed = f"{scipy_seconds / seconds:>8.1f}x" if seconds > 0 else f"{'-':>9}"
        print(f"  {name:<12} {device:<7} {answer:>12} {seconds:>9.4f} {speed}  "
              f"{ok if isinstance(ok, str) else ('ok' if ok else 'WRONG')}")
    return sum(1 for *_, ok in rows if ok is False)


def _devices() -> list[str]:
    from . import _device
    return ["cpu", "cuda"] if _device.cuda_available() else ["cpu"]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def matching(n: int, degree: float, seed: int) -> int:
    import scipy.sparse.csgraph as csgraph

    from . import _device, generators
    from ._matching import CPU_METHODS, GPU_METHODS, maximum_matching
    graph = generators.uniform_random(n, degree=degree, seed=seed)
    ref, t_ref = _timed(lambda: int(np.count_nonzero(
        csgraph.maximum_bipartite_matching(graph) >= 0)))
    rows: list[Row] = [("scipy", "cpu", ref, t_ref, "reference")]
    methods = [(m, "cpu") for m in CPU_METHODS]
    if _device.cuda_available():
        methods += [(m, "cuda") for m in GPU_METHODS]
    for method, device in methods:
        r = maximum_matching(graph, method=method, device=device)
        ok = r.cardinality == ref and _is_matching(graph, r)
        rows.append((method, r.device, r.cardinality, r.stats.seconds_total, ok))
    return _table(f"Maximum matching: uniform random bipartite graph {n} x {n}, {graph.nnz} "
                  f"edges (seed {seed})", rows, t_ref)


def _is_matching(graph, result) -> bool:
    """Every matched pair is an edge and the two mate arrays agree."""
    rows = np.flatnonzero(result.col4row >= 0)
    cols = result.col4row[rows]
    if not np.array_equal(result.row4col[cols], rows):
        return False
    csr = graph.tocsr()
    return all(c in csr.indices[csr.indptr[r]:csr.indptr[r + 1]] for r, c in zip(rows, cols))


def assignment(n: int, seed: int) -> int:
    from scipy.optimize import linear_sum_assignment

    from . import _lsap
    c = np.random.default_rng(seed).integers(0, n, size=(n, n))
    (r0, c0), t_ref = _timed(lambda: linear_sum_assignment(c))
    ref = int(c[r0, c0].sum())
    rows: list[Row] = [("scipy", "cpu", ref, t_ref, "reference")]
    (r1, c1), t = _timed(lambda: _lsap.linear_sum_assignment(c))  # SciPy's call, drop-in
    rows.append(("lsa auto", "-", int(c[r1, c1].sum()), t, int(c[r1, c1].sum()) == ref))
    for device in _devices():
        r = _lsap.solve_assignment(c, device=device)
        ok = r.cost == ref and int(r.u.sum() + r.v.sum()) == ref  # the duals certify it
        rows.append((r.method, r.device, r.cost, r.stats.seconds_total, ok))
    return _table(f"Linear assignment: {n} x {n} integer costs in [0, n) (seed {seed}; "
                  "lsa: linear_sum_assignment, then solve_assignment with duals)", rows, t_ref)


def flow(side: int, seed: int) -> int:
    from scipy.sparse.csgraph import maximum_flow

    from . import generators
    from ._flow import solve_flow
    instance = generators.segmentation_grid(side, side, seed=seed)
    graph, source, sink = instance.graph, instance.source, instance.sink
    ref_graph = sp.csr_array(graph, dtype=np.int32)
    ref, t_ref = _timed(lambda: maximum_flow(ref_graph, source, sink).flow_value)
    rows: list[Row] = [("scipy", "cpu", ref, t_ref, "reference")]
    for device in _devices():
        r = solve_flow(graph, source, sink, device=device)
        tails, heads = r.cut_edges()
        cut = int(np.asarray(graph[tails, heads]).sum())  # max-flow = min-cut certifies it
        rows.append((r.method, r.device, r.flow_value, r.stats.seconds_total,
                     r.flow_value == ref == cut))
    return _table(f"Maximum flow: image segmentation grid {side} x {side} ({graph.nnz} arcs, "
                  f"seed {seed})", rows, t_ref)


def preprocessing(n: int, seed: int) -> int:
    from scipy.sparse.csgraph import structural_rank

    from . import generators
    from ._preprocess import dulmage_mendelsohn
    a = generators.uniform_random(n, degree=2.0, seed=seed + 1)
    ref, t_ref = _timed(lambda: int(structural_rank(a)))
    rows: list[Row] = [("scipy", "cpu", ref, t_ref, "reference")]
    for device in _devices():
        dm, t = _timed(lambda: dulmage_mendelsohn(a, device=device))
        permutations = (np.array_equal(np.sort(dm.p), np.arange(n))
                        and np.array_equal(np.sort(dm.q), np.arange(n)))
        rows.append(("dmperm", device, dm.structural_rank, t,
                     dm.structural_rank == ref and permutations))
    return _table(f"Sparse preprocessing: Dulmage-Mendelsohn of a random {n} x {n} matrix "
                  f"({a.nnz} entries; answer: structural rank)", rows, t_ref)


def run(args) -> int:
    failures = matching(args.n, args.degree, args.seed)
    failures += assignment(args.assignment_n, args.seed)
    failures += flow(args.flow_side, args.seed)
    failures += preprocessing(args.n, args.seed)
    from . import _device
    if not _device.cuda_available():
        print("\n(no usable CUDA device: GPU methods not run)")
    return 1 if failures else 0


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="the four problems, every method, checked against SciPy",
                       description=__doc__)
    p.add_argument("--n", type=int, default=200_000, help="matching / preprocessing size")
    p.add_argument("--degree", type=float, default=3.0, help="matching: edges per row")
    p.add_argument("--assignment-n", type=int, default=500, help="assignment size")
    p.add_argument("--flow-side", type=int, default=256, help="flow: grid side")
    p.add_argument("--seed", type=int, default=0)

"""Small inputs for compute-sanitizer: every GPU kernel path, checked answers.

    compute-sanitizer --tool memcheck  python benchmarks/sanitize.py
    compute-sanitizer --tool racecheck python benchmarks/sanitize.py
    (--lsap: the linear-assignment kernels only; --matching: the matching kernels only;
     --flow: the max-flow kernels only; --batched: gpu-sap only; --multi: the multi-GPU
     splits with two parts on GPU 0; these four alone or together;
     --graphs NAME ...: only these of --matching's graphs, e.g. `--matching --graphs csc`)

(benchmarks/gpu_run.sh runs both.)  Exits 1 on a wrong answer.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm
from scipy.sparse.csgraph import maximum_flow as scipy_maxflow
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

import matchflow
from matchflow import generators

MATCHING_CONFIGS = [("gpu-pr", {})] + [
    (m, {"bfs": b, "layout": lay}) for m in ("gpu-apfb", "gpu-apsb")
    for b in ("gpubfs", "gpubfs-wr") for lay in ("ct", "mt")]


def graphs():
    yield "uniform", generators.uniform_random(300, 250, degree=2.5, seed=1)
    yield "rmat", generators.rmat(9, edge_factor=4, seed=2)
    yield "star", generators.star(200)
    yield "path", generators.long_path(300)
    yield "dense-rows", sp.csr_array(np.ones((40, 64)))  # rows a warp walks together
    yield "powerlaw", generators.power_law(600, degree=6.0, seed=3)  # hubs, diagonals by chance
    yield "delaunay", generators.delaunay(500, seed=3)  # the start is perfect: no solve
    # row u: columns u-1, u: the device start's proposal rounds pass their cap
    yield "staircase", sp.csr_array(sp.eye_array(150) + sp.eye_array(150, k=-1))
    # host arrays as SciPy holds them, staged and converted on the device
    wide = generators.uniform_random(300, 250, degree=2.5, seed=4)
    wide.indptr, wide.indices = wide.indptr.astype(np.int32), wide.indices.astype(np.int64)
    yield "int64-ids", wide
    yield "csc", sp.csc_array(generators.rmat(9, edge_factor=4, seed=5))


def check_matching() -> int:
    """Every GPU matching configuration against SciPy's cardinality."""
    wrong = 0
    args = sys.argv[1:]
    wanted = args[args.index("--graphs") + 1:] if "--graphs" in args else None
    for name, g in graphs():
        if wanted is not None and name not in wanted:
            continue
        expected = int(np.count_nonzero(scipy_mbm(g) >= 0))
        for method, kw in MATCHING_CONFIGS:
            r = matchflow.maximum_matching(g, method=method, device="cuda", **kw)
            ok = r.cardinality == expected
            wrong += not ok
            print(f"{name:<11} {method:<9} {kw} {'ok' if ok else 'WRONG'}")
        wrong += check_from_gpu_memory(name, g, expected)
    return wrong


def check_from_gpu_memory(name, g, expected) -> int:
    """`auto` on the graph as a CuPy CSR triple (the skew sample counted on
    the device); 0 without CuPy."""
    try:
        import cupy
    except ImportError:
        return 0
    g = sp.csr_array(g)
    triple = (cupy.asarray(g.indptr), cupy.asarray(g.indices), g.shape)
    r = matchflow.maximum_matching(triple)
    cupy.cuda.get_current_stream().synchronize()
    ok = r.cardinality == expected
    print(f"{name:<11} auto/gpu-mem ({r.method}) {'ok' if ok else 'WRONG'}")
    return int(not ok)


def costs():
    rng = np.random.default_rng(3)
    yield "int", rng.integers(0, 50, (60, 60))  # read as int32 on the GPU
    wide = rng.integers(0, 50, (40, 45))
    wide[-1, -1] = 2**40  # int64 on the GPU (the int32 upload is abandoned)
    yield "int-wide", wide
    yield "wide-float", rng.random((30, 70))
    yield "ties", np.ones((25, 25))
    yield "float32", rng.random((80, 80)).astype(np.float32)  # gpu-auction's phases
    yield "int32", rng.integers(0, 1000, (50, 50), dtype=np.int32)  # read as it is
    forbidden = rng.random((40, 40))
    forbidden[rng.random((40, 40)) < 0.6] = np.inf
    forbidden[np.arange(40), rng.permutation(40)] = 0.5
    yield "forbidden", forbidden
    # Past cost_upload.cuh's 32 MB staging line: int16 on the device; then one
    # value outside int16 in the last rows, so the int16 head is widened to int32.
    big = rng.integers(0, 1000, (2100, 2100))
    yield "int16", big
    big = big.copy()
    big[-3, 5] = 40000
    yield "int16-widen", big


def networks():
    """Small flow networks: a grid, GENRMF, a segmentation grid, parallel
    and anti-parallel arcs with self loops, hubs of 1,201 arcs (a block
    discharges them: cuda/src/maxflow/discharge.cuh), and a complete DAG,
    dense enough that its short lists stay on the grid (push_relabel_dispatch.cu)."""
    from matchflow.generators import flow
    yield flow.grid_flow(12, 12, seed=4)[0]
    yield flow.genrmf(4, 4, seed=5)
    yield flow.segmentation_grid(16, 16, seed=6)
    rng = np.random.default_rng(7)
    tails, heads = rng.integers(0, 40, 300), rng.integers(0, 40, 300)
    yield flow.FlowInstance(sp.csr_array((rng.integers(0, 30, 300), (tails, heads)),
                                         shape=(40, 40)), 0, 39, "multi-arcs")
    fan = np.arange(2, 1202)  # s -> hub 1 -> 1,200 vertices -> hub 1202 -> t
    tails = np.concatenate([[0], np.ones(fan.size, int), fan, [1202]])
    heads = np.concatenate([[1], fan, np.full(fan.size, 1202), [1203]])
    caps = rng.integers(1, 9, tails.size)
    caps[[0, -1]] = 5000
    yield flow.FlowInstance(sp.csr_array((caps, (tails, heads)), shape=(1204, 1204)), 0, 1203,
                            "hubs")
    yield flow.acyclic_dense(200, seed=9)


def check_flows() -> int:
    """gpu-pr on networks(), both variants, with and without phase 2; then the
    tuned one with MATCHFLOW_GPU_PR_HUB_ARCS=4 (most discharges by a block)."""
    wrong = 0
    runs = [(v, f, None) for v in ("tuned", "paper") for f in (True, False)]
    runs.append(("tuned", True, "4"))
    for inst in networks():
        summed = sp.csr_array(inst.graph, dtype=np.int32)
        summed.sum_duplicates()
        expected = scipy_maxflow(summed, inst.source, inst.sink).flow_value
        for variant, return_flow, hub_arcs in runs:
            if hub_arcs:
                os.environ["MATCHFLOW_GPU_PR_HUB_ARCS"] = hub_arcs
            r = matchflow.solve_flow(inst.graph, inst.source, inst.sink, method="gpu-pr",
                                     device="cuda", variant=variant, return_flow=return_flow)
            os.environ.pop("MATCHFLOW_GPU_PR_HUB_ARCS", None)
            ok = r.flow_value == expected
            wrong += not ok
            print(f"{inst.name:<22} gpu-pr {variant:<5} flow={return_flow!s:<5} "
                  f"{f'hub_arcs={hub_arcs} ' if hub_arcs else ''}{'ok' if ok else 'WRONG'}")
    return wrong + check_staged_flow()


def check_staged_flow() -> int:
    """One network large enough for the staged upload (737k arcs), whose
    capacities cross as int32 and are widened on the device; value as pr's."""
    from matchflow.generators import flow
    inst = flow.segmentation_grid(384, 384, seed=8)
    expected = matchflow.solve_flow(inst.graph, inst.source, inst.sink, method="pr",
                                    device="cpu", return_flow=False).flow_value
    r = matchflow.solve_flow(inst.graph, inst.source, inst.sink, method="gpu-pr",
                             device="cuda", return_flow=False)
    ok = r.flow_value == expected and r.stats.capacity_bytes == 4
    print(f"{inst.name:<22} gpu-pr staged int32 capacities {'ok' if ok else 'WRONG'}")
    return int(not ok)


def check_multi() -> int:
    """Both multi-GPU splits (gpu-tree: columns, gpu-classic: rows) with two
    logical parts on GPU 0, square and rectangular, int32 and float64.  Both
    splits come first for each case, and the first two cases differ in shape
    and dtype, so a run the sanitizer's slowness cuts short still covers each."""
    wrong = 0
    rng = np.random.default_rng(12)
    cases = (((48, 48), np.int32), ((30, 70), np.float64), ((48, 48), np.float64),
             ((30, 70), np.int32))
    for shape, dtype in cases:
        c = (rng.random(shape) * 60).astype(dtype)
        ri, ci = scipy_lsa(c)
        for method in ("gpu-tree", "gpu-classic"):
            r = matchflow.solve_assignment(c, method=method, device=["cuda:0", "cuda:0"])
            ok = np.isclose(r.cost, c[ri, ci].sum())
            wrong += not ok
            print(f"multi {method:<11} {shape} {np.dtype(dtype).name:<7} "
                  f"{'ok' if ok else 'WRONG'}")
    return wrong


def main() -> int:
    wrong = 0
    lsap_only = "--lsap" in sys.argv[1:]  # only the assignment kernels
    only = [check for flag, check in (("--matching", check_matching), ("--flow", check_flows),
                                      ("--batched", check_batched), ("--multi", check_multi))
            if flag in sys.argv[1:]]  # these sections alone (any of them)
    if only:
        wrong = sum(check() for check in only)
        print("wrong answers:", wrong)
        return 1 if wrong else 0
    wrong += 0 if lsap_only else check_flows()
    wrong += 0 if lsap_only else check_matching()
    if hasattr(matchflow, "solve_assignment"):
        for name, c in costs():
            ri, ci = scipy_lsa(c)
            big = c.size > 10**6  # the int16 cases: the Hungarian only (sanitizer time)
            for method in ("gpu-tree",) if big else ("gpu-tree", "gpu-classic", "gpu-auction"):
                r = matchflow.solve_assignment(c, method=method, device="cuda")
                ok = (np.isclose(r.cost, c[ri, ci].sum())
                      and len(r.stats.paths_per_iteration) == r.stats.iterations
                      and r.stats.paths_per_iteration.sum() == r.stats.augmenting_paths)
                wrong += not ok
                width = f" (costs read as {r.stats.narrow_cost_bytes or 8} bytes)" if big else ""
                print(f"{name:<11} {method:<11} {'ok' if ok else 'WRONG'}{width}")
    wrong += check_sparse_assignment()
    wrong += check_batched()
    print("wrong answers:", wrong)
    return 1 if wrong else 0


def check_sparse_assignment() -> int:
    """gpu-sparse-sap (its auction start on the GPU) against SciPy."""
    wrong = 0
    rng = np.random.default_rng(5)
    for n, k in ((300, 4), (64, 1), (500, 8)):
        cols = rng.integers(0, n, (n, k))
        cols[:, 0] = rng.permutation(n)
        g = sp.csr_array((rng.random(n * k) + 0.1, (np.repeat(np.arange(n), k), cols.ravel())),
                         shape=(n, n))
        g.sum_duplicates()
        want = g[scipy_mwfbm(g)].sum()
        r = matchflow.solve_sparse_assignment(g, method="gpu-sparse-sap")
        ok = bool(np.isclose(r.cost, want))
        wrong += not ok
        print(f"sparse {n}x{n} k={k} gpu-sparse-sap {'ok' if ok else 'WRONG'}")
    return wrong


def stacks():
    """Small stacks for gpu-sap: each path of its kernel (costs in shared or
    in global memory, square with the column reduction or rectangular,
    tall problems transposed on loading or into a scratch stack) and an
    infeasible problem, found by the column reduction."""
    rng = np.random.default_rng(8)
    yield "square-shared", rng.random((4, 16, 16)).astype(np.float32)
    yield "square-global", rng.random((2, 300, 300))  # float64: past shared memory
    yield "wide-shared", rng.integers(0, 20, (3, 12, 40))
    yield "tall-shared", rng.random((3, 40, 12)).astype(np.float32)
    yield "tall-global", rng.random((2, 300, 200))  # transposed into a scratch stack
    infeasible = rng.random((3, 16, 16))
    infeasible[1, :, 4] = np.inf  # every row keeps allowed columns
    yield "square-infeasible", infeasible


def check_batched() -> int:
    """gpu-sap against SciPy, problem by problem (an infeasible stack must
    name its problem)."""
    wrong = 0
    for name, c in stacks():
        want = []  # SciPy's cost of each problem, None where it is infeasible
        for b in range(c.shape[0]):
            try:
                want.append(c[b][scipy_lsa(c[b])].sum())
            except ValueError:
                want.append(None)
        failing = next((b for b, w in enumerate(want) if w is None), None)
        try:
            rows, cols = matchflow.batch_linear_sum_assignment(c, method="gpu-sap")
            got = [c[b][rows[b], cols[b]].sum() for b in range(c.shape[0])]
            ok = failing is None and bool(np.allclose(got, want))
        except ValueError as exc:
            ok = failing is not None and f"(batch index {failing})" in str(exc)
        wrong += not ok
        print(f"batched {name:<18} gpu-sap {'ok' if ok else 'WRONG'}")
    return wrong


if __name__ == "__main__":
    sys.exit(main())

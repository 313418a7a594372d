"""Correctness sweep and timing for gpu-apfb / gpu-apsb (paper 004).

Runs every method x BFS kernel x thread layout on seeded random graphs of
many shapes and on every Matrix Market file of the data directory, and
checks each answer: cardinality equals SciPy's maximum_bipartite_matching,
every pair is an edge, col4row and row4col are mutual inverses.

    python benchmarks/check_gpu_ap.py                 # full sweep
    python benchmarks/check_gpu_ap.py --small         # few tiny graphs (sanitizers)
    python benchmarks/check_gpu_ap.py --time 22       # + timing on n = 2^22
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

import matchflow
from matchflow.generators import uniform_random

CONFIGS = [(m, b, l) for m in ("gpu-apfb", "gpu-apsb") for b in ("gpubfs", "gpubfs-wr")
           for l in ("ct", "mt")]


def coo(rows, cols, shape):
    return sp.csr_array((np.ones(len(rows), dtype=np.int8), (np.asarray(rows), np.asarray(cols))),
                        shape=shape)


def with_duplicates(a: sp.csr_array, rng) -> sp.csr_array:
    """The same pattern with some entries stored twice (CSR built by hand)."""
    a = sp.csr_array(a)
    a.sort_indices()
    indptr, indices = [0], []
    for i in range(a.shape[0]):
        row = list(a.indices[a.indptr[i]:a.indptr[i + 1]])
        if row and rng.random() < 0.3:
            row.insert(rng.integers(0, len(row) + 1), row[rng.integers(0, len(row))])
        indices.extend(row)
        indptr.append(len(indices))
    return sp.csr_array((np.ones(len(indices)), np.array(indices, dtype=np.int32),
                         np.array(indptr, dtype=np.int64)), shape=a.shape)


def random_graphs(count: int):
    """(name, graph) pairs of many seeded families."""
    out = []
    for seed in range(count):
        rng = np.random.default_rng(seed)
        kind = seed % 12
        n = int(rng.integers(1, 300))
        m = int(rng.integers(1, 300))
        if kind == 0:    # square uniform
            g = uniform_random(n, n, degree=float(rng.uniform(0.5, 4)), seed=seed)
        elif kind == 1:  # tall
            g = uniform_random(n + m, max(1, n // 3), degree=float(rng.uniform(1, 4)), seed=seed)
        elif kind == 2:  # wide
            g = uniform_random(max(1, n // 3), n + m, degree=float(rng.uniform(1, 6)), seed=seed)
        elif kind == 3:  # perfect: a hidden permutation plus noise
            p = rng.permutation(n)
            extra = int(rng.integers(0, 3 * n))
            g = coo(np.r_[np.arange(n), rng.integers(0, n, extra)],
                    np.r_[p, rng.integers(0, n, extra)], (n, n))
        elif kind == 4:  # deficient: columns of a block only reach few rows
            k = max(1, n // 4)
            rows = np.r_[rng.integers(0, k, 3 * n), rng.integers(0, n, n)]
            cols = np.r_[rng.integers(0, n, 3 * n), rng.integers(0, n // 2 + 1, n)]
            g = coo(rows, cols, (n, n))
        elif kind == 5:  # very sparse
            g = uniform_random(n, m, degree=float(rng.uniform(0.05, 0.8)), seed=seed)
        elif kind == 6:  # dense rows (wide degree spread)
            rows = np.r_[rng.integers(0, 3, 40 * m), rng.integers(0, n, n)]
            cols = np.r_[rng.integers(0, m, 40 * m), rng.integers(0, m, n)]
            g = coo(rows, cols, (n, m))
        elif kind == 7:  # stars: a few hub rows and hub columns
            hubs_r = rng.integers(0, n, 3)
            hubs_c = rng.integers(0, m, 3)
            rows = np.r_[np.repeat(hubs_r, m), rng.integers(0, n, n)]
            cols = np.r_[np.tile(np.arange(m), 3), np.repeat(hubs_c, n // 3 + 1)[:n]]
            g = coo(rows, cols, (n, m))
        elif kind == 8:  # long path (staircase), permuted
            k = max(2, n)
            rows = np.r_[np.arange(k), np.arange(k - 1)]
            cols = np.r_[np.arange(k), np.arange(1, k)]
            pr, pc = rng.permutation(k), rng.permutation(k)
            g = coo(pr[rows], pc[cols], (k, k))
        elif kind == 9:  # many rows competing for one column
            rows = np.r_[np.arange(n), rng.integers(0, n, 2)]
            cols = np.r_[np.zeros(n, dtype=np.int64), rng.integers(0, m, 2)]
            g = coo(rows, cols, (n, m))
        elif kind == 10:  # larger uniform (more parallel races)
            big = int(rng.integers(2000, 20000))
            g = uniform_random(big, big + int(rng.integers(-500, 500)),
                               degree=float(rng.uniform(1.5, 4)), seed=seed)
        else:            # duplicates stored
            g = with_duplicates(uniform_random(n, m, degree=float(rng.uniform(1, 4)),
                                               seed=seed), rng)
        out.append((f"rand{seed}-k{kind}", sp.csr_array(g)))
    return out


def data_graphs(data_dir: str):
    out = []
    for path in sorted(glob.glob(os.path.join(data_dir, "**", "*.mtx*"), recursive=True)):
        if not (path.endswith(".mtx") or path.endswith(".mtx.gz")):
            continue
        try:
            a = scipy.io.mmread(path)
        except Exception as e:  # not a matrix (e.g. a vector/array file)
            print(f"skip {path}: {e}")
            continue
        if not sp.issparse(a):
            a = sp.csr_array(np.asarray(a) != 0)
        out.append((os.path.relpath(path, data_dir), sp.csr_array(a)))
    return out


def reference(g) -> int:
    h = sp.csr_array(g, copy=True)
    h.sum_duplicates()
    h.data = np.ones_like(h.data, dtype=np.int8)
    return int((maximum_bipartite_matching(h, perm_type="column") >= 0).sum())


def check(g, res, ref) -> str | None:
    c4r, r4c = res.col4row, res.row4col
    nr, nc = g.shape
    if c4r.shape != (nr,) or r4c.shape != (nc,):
        return "shapes"
    rows = np.flatnonzero(c4r >= 0)
    if len(rows) != ref or res.cardinality != ref:
        return f"cardinality {len(rows)} / {res.cardinality} != {ref}"
    if np.any(r4c[c4r[rows]] != rows):
        return "col4row/row4col not inverse"
    if int((r4c >= 0).sum()) != ref:
        return "row4col has extra matched columns"
    h = sp.coo_array(g)
    edges = h.row.astype(np.int64) * nc + h.col
    pairs = rows.astype(np.int64) * nc + c4r[rows]
    bad = ~np.isin(pairs, edges)
    if bad.any():
        r = rows[np.flatnonzero(bad)[0]]
        return f"pair ({r}, {c4r[r]}) is not an edge"
    return None


def sweep(graphs, reps_for):
    passed = failed = 0
    for name, g in graphs:
        ref = reference(g)
        for (m, b, l) in CONFIGS:
            for rep in range(reps_for(name)):
                try:
                    res = matchflow.maximum_matching(g, method=m, device="cuda", bfs=b, layout=l)
                    err = check(g, res, ref)
                except Exception as e:  # report, keep going
                    err = f"raised {type(e).__name__}: {e}"
                if err:
                    failed += 1
                    print(f"FAIL {name} {g.shape} nnz={g.nnz} {m} {b} {l} rep{rep}: {err}",
                          flush=True)
                else:
                    passed += 1
    return passed, failed


def timing(log2n: int, scipy_log2n: int, reps: int = 5):
    n = 1 << log2n
    t = time.perf_counter()
    g = uniform_random(n, n, degree=3.0, seed=1)
    print(f"\n# timing: uniform_random n=2^{log2n}, nnz={g.nnz} (gen {time.perf_counter()-t:.1f}s)")
    ref = None
    for (m, b, l) in CONFIGS:
        matchflow.maximum_matching(g, method=m, device="cuda", bfs=b, layout=l)  # warm-up
        runs = [matchflow.maximum_matching(g, method=m, device="cuda", bfs=b, layout=l)
                for _ in range(reps)]
        solve = np.median([r.stats.seconds_solve for r in runs])
        total = np.median([r.stats.seconds_total for r in runs])
        tr = np.median([r.stats.seconds_transfer for r in runs])
        s = runs[-1].stats
        card = {r.cardinality for r in runs}
        print(f"{m:9s} {b:10s} {l:3s} solve {solve:8.4f}s total {total:8.4f}s "
              f"transfer {tr:7.4f}s init {s.seconds_init:7.4f}s card {sorted(card)} "
              f"init_card {s.init_cardinality} phases {s.iterations} levels {s.bfs_levels} "
              f"kernels {s.kernel_launches} aug {s.augmentations}", flush=True)
        ref = card if ref is None else ref
    for meth in ("pdbfs",):
        r = matchflow.maximum_matching(g, method=meth, device="cpu")
        print(f"{meth:9s} solve {r.stats.seconds_solve:8.4f}s total {r.stats.seconds_total:8.4f}s "
              f"card {r.cardinality}", flush=True)
    ns = 1 << scipy_log2n
    gs = g if ns == n else uniform_random(ns, ns, degree=3.0, seed=1)
    t = time.perf_counter()
    k = int((maximum_bipartite_matching(gs, perm_type="column") >= 0).sum())
    print(f"scipy maximum_bipartite_matching n=2^{scipy_log2n}: {time.perf_counter()-t:.3f}s "
          f"card {k}", flush=True)
    if ns != n:
        for (m, b, l) in (("gpu-apfb", "gpubfs-wr", "ct"),):
            r = matchflow.maximum_matching(gs, method=m, device="cuda", bfs=b, layout=l)
            r = matchflow.maximum_matching(gs, method=m, device="cuda", bfs=b, layout=l)
            print(f"  same graph {m} {b} {l}: solve {r.stats.seconds_solve:.4f}s "
                  f"total {r.stats.seconds_total:.4f}s card {r.cardinality}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=360)
    ap.add_argument("--reps", type=int, default=10, help="repetitions on the subset")
    ap.add_argument("--subset", type=int, default=48, help="random graphs run --reps times")
    ap.add_argument("--small", action="store_true", help="a few tiny graphs, once each")
    ap.add_argument("--no-data", action="store_true")
    ap.add_argument("--time", type=int, default=0, help="log2 n for timing (0 = none)")
    ap.add_argument("--scipy-time", type=int, default=0, help="log2 n for SciPy's timing")
    args = ap.parse_args()
    if args.small:
        graphs = [gr for gr in random_graphs(24) if gr[1].shape[0] * gr[1].shape[1] < 40000][:8]
        p, f = sweep(graphs, lambda name: 1)
        print(f"small: passed {p} failed {f}")
        sys.exit(1 if f else 0)
    t0 = time.perf_counter()
    graphs = random_graphs(args.random)
    subset = {name for name, _ in graphs[:args.subset]}
    p, f = sweep(graphs, lambda name: args.reps if name in subset else 1)
    print(f"random graphs: {len(graphs)} graphs ({len(subset)} x{args.reps}), "
          f"passed {p} failed {f} ({time.perf_counter()-t0:.0f}s)", flush=True)
    if not args.no_data:
        data_dir = os.environ.get("MATCHFLOW_DATA", "/work/shared/data")
        dg = data_graphs(data_dir)
        t0 = time.perf_counter()
        p2, f2 = sweep(dg, lambda name: 3)
        print(f"data matrices: {len(dg)} graphs (x3), passed {p2} failed {f2} "
              f"({time.perf_counter()-t0:.0f}s)", flush=True)
        f += f2
    if args.time:
        timing(args.time, args.scipy_time or args.time)
    sys.exit(1 if f else 0)


if __name__ == "__main__":
    main()

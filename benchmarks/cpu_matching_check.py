"""CPU matching methods: correctness sweep and timings against SciPy.

    python benchmarks/cpu_matching_check.py check [--count N]
        Every CPU method x initial matching x thread count on N seeded random
        graphs (square, rectangular, deficient, duplicates, dense rows/columns)
        and on adversarial ones (stars, long paths, the layered pattern of
        scipy#26147); each answer must be a valid matching (pairs are edges,
        mate arrays mutual inverses) of SciPy's cardinality.

    python benchmarks/cpu_matching_check.py bench [--uniform-scale S ...]
        [--rmat-scale S ...] [--threads T ...] [--json FILE]
        Times SciPy (in a subprocess, with a time limit), each CPU method and
        "auto" on uniform random (2^S x 2^S, 3 per row), R-MAT / Kronecker
        (scale S, edge factor 16, Graph500 parameters) and their RCP (random
        row and column permutation) versions.  Prints one line per (graph, method) and writes JSON
        with --json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

import matchflow
from matchflow import generators
from matchflow._matching import CPU_METHODS, _match
from matchflow._validation import as_bipartite


# ---- graphs ------------------------------------------------------------------

def pattern(rows, cols, shape) -> sp.csr_array:
    g = sp.csr_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=shape)
    g.sum_duplicates()
    g.data[:] = 1
    return g


def rmat(scale: int, edge_factor: int = 16, seed: int = 0,
         abcd=(0.57, 0.19, 0.19, 0.05)) -> sp.csr_array:
    """R-MAT / Kronecker graph (Graph500 parameters), vertices randomly
    relabelled as Graph500 does; rows = edge sources, columns = targets."""
    rng = np.random.default_rng(seed)
    n = 1 << scale
    nnz = edge_factor * n
    src = np.zeros(nnz, dtype=np.int64)
    dst = np.zeros(nnz, dtype=np.int64)
    a, b, c, _ = abcd
    for bit in range(scale):
        u = rng.random(nnz, dtype=np.float32)
        down = u >= a + b                       # quadrants c, d: source bit set
        right = ((u >= a) & (u < a + b)) | (u >= a + b + c)  # quadrants b, d
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    return pattern(perm[src], perm[dst], (n, n))


def ladder(levels: int) -> sp.csr_array:
    """Layered pattern of scipy#26147: two rows and two columns per level,
    each row adjacent to both columns of its level and of the next; the last
    row is removed so every search runs through all levels."""
    rows, cols = [], []
    for level in range(levels):
        for a in range(2):
            for nxt in (level, level + 1):
                if nxt < levels:
                    for b in range(2):
                        rows.append(2 * level + a)
                        cols.append(2 * nxt + b)
    g = pattern(np.array(rows), np.array(cols), (2 * levels, 2 * levels))
    return sp.csr_array(g[: 2 * levels - 1])


def long_path(n: int) -> sp.csr_array:
    rows = np.r_[np.arange(n), np.arange(n - 1)]
    cols = np.r_[np.arange(n), np.arange(1, n)]
    return sp.csr_array(pattern(rows, cols, (n, n))[::-1][:, ::-1])


def star(n: int, centre_is_column: bool) -> sp.csr_array:
    g = pattern(np.arange(n), np.zeros(n, dtype=int), (n, n))
    return g if centre_is_column else sp.csr_array(g.T)


def random_graph(seed: int) -> sp.csr_array:
    """Seeded graph from one of six families, with duplicates in one."""
    rng = np.random.default_rng(seed)
    family = seed % 6
    m, n = (int(x) for x in rng.integers(1, 300, size=2))
    if family == 0:
        n = m
        g = sp.random_array((m, n), density=rng.uniform(0.002, 0.1), rng=rng)
    elif family == 1:
        g = sp.random_array((m, n), density=rng.uniform(0.001, 0.02), rng=rng)
    elif family == 2:  # perfect matching hidden under noise
        n = m
        g = sp.csr_array((np.ones(m), (np.arange(m), rng.permutation(m))), shape=(m, m))
        g = g + sp.random_array((m, m), density=0.01, rng=rng)
    elif family == 3:  # deficient: half the rows share a few columns
        g = sp.random_array((m, n), density=0.03, rng=rng).tolil()
        few = sorted(set(rng.integers(0, n, size=max(1, n // 10)).tolist()))
        for r in rng.integers(0, m, size=m // 2):
            g.rows[r], g.data[r] = list(few), [1.0] * len(few)
    elif family == 4:  # dense rows and columns
        g = sp.random_array((m, n), density=0.01, rng=rng).tolil()
        g[int(rng.integers(m)), :] = 1
        g[:, int(rng.integers(n))] = 1
    else:  # duplicates, unsorted indices
        nnz = int(rng.integers(1, 3 * (m + n)))
        r = rng.integers(0, m, nnz)
        c = rng.integers(0, n, nnz)
        g = sp.coo_array((np.ones(nnz + 5), (np.r_[r, r[:5]], np.r_[c, c[:5]])),
                         shape=(m, n)).tocsr()
        g.has_sorted_indices = False
    return sp.csr_array(g)


# ---- checks --------------------------------------------------------------------

def scipy_size(g) -> int:
    p = sp.csr_array(g, copy=True)
    p.data = np.ones_like(p.data, dtype=np.int8)
    p.sum_duplicates()
    if min(p.shape) == 0:
        return 0
    return int(np.count_nonzero(scipy_mbm(p, perm_type="column") >= 0))


def check_valid(g, res, expected: int, label: str) -> None:
    csr = sp.csr_array(g)
    c4r, r4c = res.col4row, res.row4col
    rows = np.flatnonzero(c4r >= 0)
    cols = c4r[rows]
    assert np.all(c4r < csr.shape[1]) and np.all(r4c < csr.shape[0]), label
    assert np.array_equal(r4c[cols], rows), f"{label}: mates not mutual inverses"
    assert np.count_nonzero(r4c >= 0) == rows.size == res.cardinality, label
    if rows.size:
        pat = csr.copy()
        pat.data = np.ones_like(pat.data, dtype=np.float64)
        hit = np.asarray(pat[rows, cols]).ravel()
        assert np.all(hit != 0), f"{label}: a matched pair is no edge"
    assert res.cardinality == expected, f"{label}: {res.cardinality} != {expected}"


def run_checks(count: int) -> int:
    cases = [(f"random-{s}", random_graph(s), None) for s in range(count)]
    cases += [("ladder-200", ladder(200), 399), ("ladder-2000", ladder(2000), 3999),
              ("long-path", long_path(20000), None), ("star-col", star(3000, True), 1),
              ("star-row", star(3000, False), 1),
              ("uniform-2e4", generators.uniform_random(20000, degree=2.0, seed=1), None),
              ("uniform-rect", generators.uniform_random(30000, 10000, degree=1.5, seed=2), None),
              ("rmat-12", rmat(12, 4, seed=3), None),
              ("empty", sp.csr_array((5, 7), dtype=np.int8), 0)]
    done = 0
    for label, g, expected in cases:
        expected = scipy_size(g) if expected is None else expected
        for method in CPU_METHODS:
            for init in ("cheap", "karp-sipser", "none"):
                for threads in ((1,) if method == "pr" else (1, 2, 4)):
                    res = matchflow.maximum_matching(g, method=method, device="cpu",
                                                     init=init, threads=threads)
                    check_valid(g, res, expected, f"{label}/{method}/{init}/{threads}")
                    done += 1
        res = matchflow.maximum_matching(g, device="cpu")
        check_valid(g, res, expected, f"{label}/auto")
        done += 1
    print(f"{done} runs on {len(cases)} graphs: all valid and maximum")
    return done


# ---- timings -------------------------------------------------------------------

SCIPY_CHILD = r"""
import sys, time, numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching
g = sp.load_npz(sys.argv[1]).tocsr()
t = time.perf_counter()
r = maximum_bipartite_matching(g, perm_type="column")
print(time.perf_counter() - t, int(np.count_nonzero(r >= 0)))
"""


def time_scipy(g, limit: float):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.npz")
        sp.save_npz(path, sp.csr_matrix(g), compressed=False)
        try:
            out = subprocess.run([sys.executable, "-c", SCIPY_CHILD, path], capture_output=True,
                                 text=True, timeout=limit, check=True).stdout.split()
        except subprocess.TimeoutExpired:
            return None, None
    return float(out[0]), int(out[1])


def graphs_for(uniform_scales, rmat_scales):
    for s in uniform_scales:
        u = generators.uniform_random(1 << s, degree=3.0, seed=s)
        yield f"uniform-2^{s}x3", u  # RCP of it has the same distribution
    for s in rmat_scales:
        r = rmat(s, 16, seed=s)
        yield f"rmat-{s}-ef16", r
        yield f"rmat-{s}-ef16-rcp", generators.random_permutation(r, seed=s)


def bench(uniform_scales, rmat_scales, threads_list, scipy_limit: float, repeat: int,
          out_json: str | None):
    rows = []
    for label, g in graphs_for(uniform_scales, rmat_scales):
        b = as_bipartite(g)
        t_sp, size_sp = time_scipy(g, scipy_limit)
        print(f"{label}: {g.shape[0]} x {g.shape[1]}, nnz {g.nnz}; scipy "
              f"{'>%.0f' % scipy_limit if t_sp is None else '%.3f' % t_sp} s "
              f"(size {size_sp})", flush=True)
        rows.append(dict(graph=label, method="scipy", threads=1, seconds=t_sp,
                         cardinality=size_sp, n=g.shape[0], nnz=int(g.nnz)))
        top = max(threads_list)
        runs = [("pr", "cheap", 1), ("pr", "karp-sipser", 1), ("pdbfs", "cheap", top),
                ("msbfs-graft", "cheap", top)]
        runs += [(m, "karp-sipser", t) for t in threads_list for m in ("pdbfs", "msbfs-graft")]
        runs += [("auto", None, 0)]
        for method, init, t in runs:
            best = None
            for _ in range(repeat):
                start = time.perf_counter()
                res = _match(b, start, method=method, device="cpu", init=init,
                             threads=t or None)
                wall = time.perf_counter() - start
                if best is None or wall < best[0]:
                    best = (wall, res)
            wall, res = best
            st = res.stats
            ok = size_sp is None or res.cardinality == size_sp
            speed = "" if t_sp is None else f"  x{t_sp / wall:.1f} vs scipy"
            print(f"  {method:12s} {init or 'default':12s} t={t or 'all':>3}  {wall:8.3f} s  "
                  f"(init {st.seconds_init:.3f}, solve {st.seconds_solve:.3f}, "
                  f"phases {st.iterations}) size {res.cardinality}"
                  f"{'' if ok else ' MISMATCH'}{speed}  [{res.method}]", flush=True)
            rows.append(dict(graph=label, method=method, init=init, threads=t, seconds=wall,
                             seconds_init=st.seconds_init, seconds_solve=st.seconds_solve,
                             phases=st.iterations, cardinality=res.cardinality,
                             resolved=res.method, ok=ok))
    if out_json:
        meta = dict(cpu_count=os.cpu_count(), platform=platform.platform(),
                    python=platform.python_version(), numpy=np.__version__,
                    scipy=scipy.__version__, command=" ".join(sys.argv))
        with open(out_json, "w") as f:
            json.dump(dict(meta=meta, results=rows), f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--count", type=int, default=300)
    b = sub.add_parser("bench")
    b.add_argument("--uniform-scale", type=int, nargs="*", default=[20])
    b.add_argument("--rmat-scale", type=int, nargs="*", default=[18])
    b.add_argument("--threads", type=int, nargs="+", default=[os.cpu_count() or 1])
    b.add_argument("--scipy-limit", type=float, default=300.0)
    b.add_argument("--repeat", type=int, default=1)
    b.add_argument("--json")
    a = ap.parse_args()
    if a.cmd == "check":
        run_checks(a.count)
    else:
        bench(a.uniform_scale, a.rmat_scale, a.threads, a.scipy_limit, a.repeat, a.json)


if __name__ == "__main__":
    main()

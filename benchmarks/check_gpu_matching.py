"""Repeated-run correctness check and timing of a (GPU) matching method.

Checks, for seeded random graphs of many shapes and every Matrix Market file
in the data dir, that `matchflow.maximum_matching(g, method=M, device=D)`
run R times always returns a valid matching (every pair an edge, col4row and
row4col mutual inverses) of SciPy's cardinality.  Optionally times the
method on uniform random graphs against SciPy.

    python benchmarks/check_gpu_matching.py --method gpu-pr --device cuda \
        --graphs 300 --repeat 10 [--data DIR] [--time 22 --scipy-log2 20]
"""
from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

import matchflow
from matchflow import generators


def reference_cardinality(g) -> int:
    a = sp.csr_array(g, copy=True)
    a.sum_duplicates()
    a.data[:] = 1
    return int(np.count_nonzero(maximum_bipartite_matching(a, perm_type="column") >= 0))


def check_result(g, res, expected: int) -> str | None:
    """Returns None when `res` is a valid matching of `expected` size, else why not."""
    m, n = g.shape
    c4r, r4c = np.asarray(res.col4row), np.asarray(res.row4col)
    if c4r.shape != (m,) or r4c.shape != (n,):
        return f"bad shapes {c4r.shape} {r4c.shape}"
    if c4r.min(initial=-1) < -1 or c4r.max(initial=-1) >= n:
        return "col4row out of range"
    if r4c.min(initial=-1) < -1 or r4c.max(initial=-1) >= m:
        return "row4col out of range"
    rows = np.flatnonzero(c4r >= 0)
    cols = c4r[rows]
    if not np.array_equal(r4c[cols], rows):
        return "col4row/row4col not inverse"
    if np.count_nonzero(r4c >= 0) != rows.size:
        return "row4col has extra pairs"
    csr = sp.csr_array(g)
    csr.sum_duplicates()
    if rows.size and not np.all(np.asarray(csr[rows, cols]).ravel() != 0) and \
            not _edges_present(csr, rows, cols):
        return "a pair is not an edge"
    if rows.size != expected or res.cardinality != expected:
        return f"cardinality {rows.size} (reported {res.cardinality}), expected {expected}"
    return None


def _edges_present(csr, rows, cols) -> bool:
    for r, c in zip(rows, cols):
        seg = csr.indices[csr.indptr[r]:csr.indptr[r + 1]]
        if c not in seg:
            return False
    return True


def _pattern(rows, cols, shape, keep_duplicates=False):
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    data = np.ones(rows.size, dtype=np.float64)
    a = sp.coo_array((data, (rows, cols)), shape=shape)
    if keep_duplicates:
        return a.tocsr()  # CSR conversion of COO sums duplicates; keep them via csr ctor
    return generators._pattern(rows, cols, shape)


def random_graphs(count: int, seed: int):
    """Yields (name, graph) for `count` seeded graphs of the adversarial families."""
    rng = np.random.default_rng(seed)
    families = ["square", "tall", "wide", "deficient", "perfect", "sparse", "dense_rows",
                "star", "path", "compete", "duplicates", "large"]
    for i in range(count):
        fam = families[i % len(families)]
        s = int(rng.integers(1 << 30))
        r = np.random.default_rng(s)
        n = int(r.integers(1, 3000))
        if fam == "square":
            g = generators.uniform_random(n, n, degree=float(r.uniform(0.5, 6)), seed=s)
        elif fam == "tall":
            g = generators.uniform_random(n, max(1, n // int(r.integers(2, 6))),
                                          degree=float(r.uniform(0.5, 4)), seed=s)
        elif fam == "wide":
            g = generators.uniform_random(max(1, n // int(r.integers(2, 6))), n,
                                          degree=float(r.uniform(1, 8)), seed=s)
        elif fam == "deficient":
            g = sp.lil_array(generators.uniform_random(n, n, degree=2.5, seed=s))
            dead_r = r.choice(n, size=n // 5, replace=False)
            dead_c = r.choice(n, size=n // 5, replace=False)
            g[dead_r, :] = 0
            g[:, dead_c] = 0
            g = sp.csr_array(g)
            g.eliminate_zeros()
        elif fam == "perfect":
            p = r.permutation(n)
            extra = int(r.integers(0, 3 * n + 1))
            rows = np.concatenate([np.arange(n), r.integers(0, n, extra)])
            cols = np.concatenate([p, r.integers(0, n, extra)])
            g = _pattern(rows, cols, (n, n))
        elif fam == "sparse":
            m2 = int(r.integers(1, 3000))
            g = generators.uniform_random(n, m2, degree=float(r.uniform(0.05, 1.0)), seed=s)
        elif fam == "dense_rows":
            base = generators.uniform_random(n, n, degree=1.5, seed=s).tocoo()
            k = int(r.integers(1, 6))
            dr = np.repeat(r.integers(0, n, k), n)
            dc = np.tile(np.arange(n), k)
            g = _pattern(np.concatenate([base.row, dr]), np.concatenate([base.col, dc]), (n, n))
        elif fam == "star":
            base = generators.uniform_random(n, n, degree=float(r.uniform(0, 1.5)), seed=s).tocoo()
            hub = int(r.integers(0, n))
            if r.random() < 0.5:  # one column joined to every row
                rr, cc = np.arange(n), np.full(n, hub)
            else:  # one row joined to every column
                rr, cc = np.full(n, hub), np.arange(n)
            g = _pattern(np.concatenate([base.row, rr]), np.concatenate([base.col, cc]), (n, n))
        elif fam == "path":
            # Row i joins columns i and i+1 with i+1 stored first, so the
            # greedy initial matching leaves one augmenting path of length
            # ~2n; optionally permuted.
            nn = max(2, n)
            rows = np.repeat(np.arange(nn), 2)[:-1]
            cols = np.stack([np.arange(1, nn + 1), np.arange(nn)], axis=1).ravel()[:-1]
            cols = np.minimum(cols, nn - 1)
            rows[-1] = nn - 1
            cols[-1] = nn - 1
            indptr = np.zeros(nn + 1, dtype=np.int64)
            np.add.at(indptr, rows + 1, 1)
            indptr = np.cumsum(indptr)
            g = sp.csr_array((np.ones(rows.size), cols, indptr), shape=(nn, nn))
            g.has_sorted_indices = False
            if r.random() < 0.3:
                g = generators.random_permutation(g, seed=s)
        elif fam == "compete":
            base = generators.uniform_random(n, n, degree=float(r.uniform(0.2, 2)), seed=s).tocoo()
            hubs = r.integers(0, n, int(r.integers(1, 4)))
            rr = np.tile(np.arange(n), hubs.size)
            cc = np.repeat(hubs, n)
            g = _pattern(np.concatenate([base.row, rr]), np.concatenate([base.col, cc]), (n, n))
        elif fam == "duplicates":
            base = generators.uniform_random(n, n, degree=2.0, seed=s).tocoo()
            rep = r.integers(1, 4, base.nnz)
            rows, cols = np.repeat(base.row, rep), np.repeat(base.col, rep)
            order = r.permutation(rows.size)
            g = sp.csr_array((np.ones(rows.size), (rows[order], cols[order])), shape=(n, n))
            # Rebuild with duplicates kept (the COO -> CSR constructor sums them).
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.add.at(indptr, rows + 1, 1)
            indptr = np.cumsum(indptr)
            srt = np.argsort(rows, kind="stable")
            g = sp.csr_array((np.ones(rows.size), cols[srt], indptr), shape=(n, n))
        else:  # large: many threads racing
            big = int(r.integers(50_000, 300_000))
            kind = r.integers(0, 3)
            if kind == 0:
                g = generators.uniform_random(big, big, degree=float(r.uniform(1.5, 4)), seed=s)
            elif kind == 1:
                g = generators.uniform_random(big, big // 2, degree=3.0, seed=s)
            else:
                g = generators.uniform_random(big // 2, big, degree=3.0, seed=s)
        yield f"{fam}#{i}(seed={s})", sp.csr_array(g)


def _mmread(source):
    """scipy.io.mmread returning a sparse array where SciPy can (no deprecation warning)."""
    try:
        return scipy.io.mmread(source, spmatrix=False)
    except TypeError:  # SciPy without the keyword
        return scipy.io.mmread(source)


def data_matrices(root: Path):
    for path in sorted(root.rglob("*")):
        if not (path.name.endswith(".mtx") or path.name.endswith(".mtx.gz")):
            continue
        try:
            if path.name.endswith(".gz"):
                with gzip.open(path, "rb") as fh:
                    a = _mmread(fh)
            else:
                a = _mmread(str(path))
        except Exception as exc:  # noqa: BLE001 - report and move on
            print(f"  skip {path}: {exc}")
            continue
        if not sp.issparse(a):
            a = sp.csr_array(np.asarray(a))
        yield str(path.relative_to(root)), sp.csr_array(a)


def run_checks(cases, method, device, repeat) -> tuple[int, int]:
    passed = failed = 0
    for name, g in cases:
        expected = reference_cardinality(g)
        bad = None
        for _ in range(repeat):
            res = matchflow.maximum_matching(g, method=method, device=device)
            bad = check_result(g, res, expected)
            if bad:
                break
        if bad:
            failed += 1
            print(f"FAIL {name} shape={g.shape} nnz={g.nnz}: {bad}", flush=True)
        else:
            passed += 1
    return passed, failed


def time_method(log2n: int, method: str, device: str, reps: int, scipy_log2: int | None):
    n = 1 << log2n
    g = generators.uniform_random(n, n, degree=3.0, seed=1)
    matchflow.maximum_matching(g, method=method, device=device)  # warm-up
    solve, total, rows = [], [], []
    for _ in range(reps):
        res = matchflow.maximum_matching(g, method=method, device=device)
        solve.append(res.stats.seconds_solve)
        total.append(res.stats.seconds_total)
        rows.append(res)
    st = rows[-1].stats
    print(f"{method} n=2^{log2n} nnz={g.nnz} card={rows[-1].cardinality} "
          f"init={st.init_cardinality}: median seconds_solve={statistics.median(solve):.4f} "
          f"seconds_total={statistics.median(total):.4f} transfer={st.seconds_transfer:.4f} "
          f"iterations={st.iterations} global_relabels={st.global_relabels} "
          f"bfs_levels={st.bfs_levels} kernel_launches={st.kernel_launches}", flush=True)
    if scipy_log2 is not None:
        gs = g if scipy_log2 == log2n else generators.uniform_random(
            1 << scipy_log2, 1 << scipy_log2, degree=3.0, seed=1)
        t0 = time.perf_counter()
        ref = maximum_bipartite_matching(gs, perm_type="column")
        t_scipy = time.perf_counter() - t0
        card = int(np.count_nonzero(ref >= 0))
        if scipy_log2 != log2n:
            res = matchflow.maximum_matching(gs, method=method, device=device)
            times = []
            for _ in range(reps):
                r2 = matchflow.maximum_matching(gs, method=method, device=device)
                times.append((r2.stats.seconds_solve, r2.stats.seconds_total))
            s_med = statistics.median(t[0] for t in times)
            t_med = statistics.median(t[1] for t in times)
            print(f"  at n=2^{scipy_log2}: {method} solve={s_med:.4f} total={t_med:.4f} "
                  f"card={res.cardinality}; scipy={t_scipy:.3f}s card={card}", flush=True)
        else:
            print(f"  scipy={t_scipy:.3f}s card={card}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--method", default="gpu-pr")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--graphs", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--data", default=os.environ.get("MATCHFLOW_DATA"))
    ap.add_argument("--time", type=int, default=None, help="log2 n of the timing graph")
    ap.add_argument("--time-reps", type=int, default=5)
    ap.add_argument("--scipy-log2", type=int, default=None)
    ap.add_argument("--skip-checks", action="store_true")
    args = ap.parse_args()

    failed_total = 0
    if not args.skip_checks:
        t0 = time.perf_counter()
        p, f = run_checks(random_graphs(args.graphs, args.seed), args.method, args.device,
                          args.repeat)
        print(f"random graphs: {p} passed, {f} failed ({time.perf_counter() - t0:.1f}s)",
              flush=True)
        failed_total += f
        if args.data:
            t0 = time.perf_counter()
            p, f = run_checks(data_matrices(Path(args.data)), args.method, args.device,
                              args.repeat)
            print(f"data matrices: {p} passed, {f} failed ({time.perf_counter() - t0:.1f}s)",
                  flush=True)
            failed_total += f
    if args.time is not None:
        time_method(args.time, args.method, args.device, args.time_reps, args.scipy_log2)
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())

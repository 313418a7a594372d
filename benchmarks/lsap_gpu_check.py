"""Checks matchflow's GPU Hungarian (gpu_hungarian) through lsap_gpu_driver.

Writes seeded cost matrices to DIR, runs the driver (each case REPS times),
and checks every repetition: a valid assignment, objective equal to
scipy.optimize.linear_sum_assignment (exactly for integers), and the dual
certificate (u_i + v_j <= c_ij, equality on assigned pairs, v <= 0, v = 0 on
unassigned columns).  Not part of the installed package.

    python benchmarks/lsap_gpu_check.py DRIVER DIR [tree|classic ...] [--reps 10]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment

DTYPES = {np.dtype(np.float64): 0, np.dtype(np.float32): 1, np.dtype(np.int64): 2}


def cases():
    rng = np.random.default_rng(12345)
    out = []
    out.append(("1x1", np.array([[7]], dtype=np.int64)))
    out.append(("1x1f", np.array([[-2.5]], dtype=np.float64)))
    out.append(("1x5", rng.integers(0, 10, (1, 5)).astype(np.int64)))
    for n in (2, 3, 5, 17, 64, 100, 257, 600):
        for name, hi in (("n/10", max(1, n // 10)), ("n", n), ("10n", 10 * n)):
            for seed in range(2 if n <= 257 else 1):
                r = np.random.default_rng(1000 * n + seed + len(name))
                out.append((f"sq{n}_int[0,{name}]_s{seed}", r.integers(0, hi + 1, (n, n)).astype(np.int64)))
    for (m, n) in ((2, 3), (5, 9), (50, 80), (120, 121), (200, 500), (300, 1000), (40, 2000)):
        for hi in (max(1, n // 10), n, 10 * n):
            out.append((f"wide{m}x{n}_int[0,{hi}]", rng.integers(0, hi + 1, (m, n)).astype(np.int64)))
    for n in (10, 100, 400):
        out.append((f"sq{n}_f64", rng.random((n, n))))
        out.append((f"sq{n}_f32", rng.random((n, n)).astype(np.float32)))
        out.append((f"wide{n}x{2*n}_f64", rng.random((n, 2 * n)) * 100 - 50))
        out.append((f"sq{n}_f64_neg_big", (rng.random((n, n)) - 0.5) * 1e6))
    for n in (8, 50, 300):  # many ties
        out.append((f"ties01_{n}", rng.integers(0, 2, (n, n)).astype(np.int64)))
        out.append((f"allequal_{n}", np.full((n, n), 3, dtype=np.int64)))
        out.append((f"ties_f64_{n}", rng.integers(0, 3, (n, n)).astype(np.float64)))
        out.append((f"wide_ties_{n}", rng.integers(0, 2, (n, 2 * n)).astype(np.int64)))
    for (m, n, p) in ((6, 6, 0.5), (30, 30, 0.7), (200, 200, 0.9), (100, 250, 0.8), (500, 500, 0.5)):
        for dt in (np.float64, np.float32):
            c = (rng.random((m, n)) * 10).astype(dt)
            c[rng.random((m, n)) < p] = np.inf
            perm = rng.permutation(n)[:m]
            c[np.arange(m), perm] = (rng.random(m) * 10).astype(dt)  # keeps it feasible
            out.append((f"inf{m}x{n}_p{p}_{np.dtype(dt).name}", c))
    # adversarial: Machol-Wien like c_ij = i*j, and a long chain
    n = 200
    i, j = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1), indexing="ij")
    out.append(("machol_wien_200", (i * j).astype(np.int64)))
    out.append(("chain_300", np.abs(np.subtract.outer(np.arange(300), np.arange(300) + 1)).astype(np.int64)))
    out.append(("bigvals_int", rng.integers(0, 10**12, (100, 100)).astype(np.int64)))
    return out


def write_case(path, c):
    with open(path, "wb") as f:
        np.array([DTYPES[c.dtype], c.shape[0], c.shape[1]], dtype=np.int64).tofile(f)
        np.ascontiguousarray(c).tofile(f)


def read_out(path, c, reps):
    m, n = c.shape
    raw = open(path, "rb").read()
    t = c.dtype
    off = 0
    res = []
    for _ in range(reps):
        code = np.frombuffer(raw, np.int64, 1, off)[0]; off += 8
        col = np.frombuffer(raw, np.int64, m, off); off += 8 * m
        u = np.frombuffer(raw, t, m, off); off += t.itemsize * m
        v = np.frombuffer(raw, t, n, off); off += t.itemsize * n
        st = np.frombuffer(raw, np.float64, 8, off); off += 64
        res.append((code, col, u, v, st))
    return res


def check(c, col, u, v):
    m, n = c.shape
    if col.shape != (m,) or col.min() < 0 or col.max() >= n or len(np.unique(col)) != m:
        return "not an injective assignment"
    rows = np.arange(m)
    if not np.all(np.isfinite(c[rows, col].astype(np.float64))):
        return "assigned a forbidden (+inf) entry"
    r, cc = linear_sum_assignment(c.astype(np.float64) if c.dtype != np.int64 else c)
    ref = c[r, cc].astype(np.float64 if c.dtype != np.int64 else np.int64).sum()
    got = c[rows, col].astype(ref.dtype).sum()
    if c.dtype == np.int64:
        if got != ref:
            return f"objective {got} != scipy {ref}"
        red = c - u[:, None] - v[None, :]
        if red.min() < 0:
            return f"dual infeasible (min reduced cost {red.min()})"
        if np.any(red[rows, col] != 0):
            return "complementary slackness violated"
        if v.max() > 0:
            return "v > 0"
        free = np.setdiff1d(np.arange(n), col)
        if free.size and np.any(v[free] != 0):
            return "v != 0 on an unassigned column"
        return None
    cf = c.astype(np.float64)
    fin = np.isfinite(cf)
    scale = max(1.0, np.abs(cf[fin]).max()) if fin.any() else 1.0
    eps = 1e-9 if c.dtype == np.float64 else 2e-4
    tol = eps * scale * max(1, m) ** 0.5
    if abs(got - ref) > eps * scale * m:
        return f"objective {got} != scipy {ref}"
    uf, vf = u.astype(np.float64), v.astype(np.float64)
    red = np.where(fin, cf - uf[:, None] - vf[None, :], np.inf)
    if red.min() < -tol:
        return f"dual infeasible (min reduced cost {red.min()})"
    if np.abs(red[rows, col]).max() > tol:
        return f"complementary slackness violated ({np.abs(red[rows, col]).max()})"
    if vf.max() > tol:
        return "v > 0"
    free = np.setdiff1d(np.arange(n), col)
    if free.size and np.abs(vf[free]).max() > tol:
        return "v != 0 on an unassigned column"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("dir")
    ap.add_argument("methods", nargs="*", default=["tree", "classic"])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    cs = cases()
    paths = []
    for k, (name, c) in enumerate(cs):
        p = os.path.join(a.dir, f"case{k:03d}.bin")
        write_case(p, c)
        paths.append(p)
    failures = 0
    for method in a.methods:
        try:
            r = subprocess.run([a.driver, "files", method, str(a.reps)] + paths, capture_output=True,
                               text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            last = err.strip().splitlines()[-1:] if err.strip() else ["?"]
            names = dict(zip(paths, (n for n, _ in cs)))
            lastp = last[0].replace("case ", "")
            print(f"{method}: TIMEOUT after {a.timeout} s in {lastp} ({names.get(lastp, '?')})")
            failures += 1
            continue
        if r.returncode != 0:
            print(f"{method}: driver failed rc={r.returncode}\n{r.stderr[-3000:]}")
            failures += 1
            continue
        passed = 0
        for (name, c), p in zip(cs, paths):
            for rep, (code, col, u, v, st) in enumerate(read_out(p + ".out", c, a.reps)):
                err = f"status {code}" if code != 0 else check(c, col, u, v)
                if err:
                    failures += 1
                    print(f"FAIL {method} {name} rep {rep}: {err}")
                else:
                    passed += 1
        print(f"{method}: {passed}/{len(cs) * a.reps} case-repetitions passed ({len(cs)} cases x {a.reps})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

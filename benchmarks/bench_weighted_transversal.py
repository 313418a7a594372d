"""Benchmark: weighted_transversal's three objectives against maximum_transversal
on the same matrix (the target: at most 2x).

Instances: the square matrices of the data folder named on the command line
(rectangular ones are listed and skipped: weighted_transversal needs a square
matrix), and the seeded random n x n matrix with k entries per row of
bench_sparse_lap.py.  Each time is the best of --repeat runs of the whole
public call, `threads=1` for weighted_transversal, `device="cpu"` for
maximum_transversal.

    python benchmarks/bench_weighted_transversal.py [--data DIR]
           [--names bayer10 arrow ...] [--n 100000] [--k 5] [--repeat 3]
"""
from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

import scipy.io
import scipy.sparse as sp

from matchflow import maximum_transversal, weighted_transversal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sparse_lap import random_instance  # noqa: E402

OBJECTIVES = ("bottleneck", "product", "sum")
NAMES = ["bayer10", "bcsstk16", "arrow", "Pd", "cryg2500", "west0067", "west0479",
         "rajat01", "lp_afiro", "lp_e226", "lp_share1b"]


def best_of(work, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def read(root: Path, name: str) -> sp.csr_array | None:
    paths = sorted(root.glob(f"**/{name}.mtx*"))
    if not paths:
        return None
    opener = gzip.open if paths[0].suffix == ".gz" else open
    with opener(paths[0], "rb") as f:
        return sp.csr_array(scipy.io.mmread(f))


def row(name: str, A, repeat: int) -> str:
    base = best_of(lambda: maximum_transversal(A, device="cpu"), repeat)
    cells = []
    for objective in OBJECTIVES:
        try:
            t = best_of(lambda: weighted_transversal(A, objective, threads=1), repeat)
        except ValueError:
            cells.append("singular")
            continue
        cells.append(f"{1e3 * t:.2f} ({t / base:.1f}x)")
    return (f"| {name} | {A.shape[0]} | {A.nnz} | {1e3 * base:.2f} | "
            + " | ".join(cells) + " |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2]
                   / "shared" / "data")
    p.add_argument("--names", nargs="*", default=NAMES)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    print("| matrix | n | nnz | maximum_transversal ms | "
          + " | ".join(f"{o} ms (ratio)" for o in OBJECTIVES) + " |")
    print("| --- " * (4 + len(OBJECTIVES)) + "|")
    for name in args.names:
        A = read(args.data, name)
        if A is None:
            print(f"| {name} | not in {args.data} |")
        elif A.shape[0] != A.shape[1]:
            print(f"| {name} | {A.shape[0]} x {A.shape[1]}: rectangular, no transversal |")
        else:
            print(row(name, A, args.repeat), flush=True)
    A = random_instance(args.n, args.k, seed=0)
    print(row(f"random {args.n} x {args.k}", A, args.repeat), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line: `matchflow info`, `matchflow demo` and `matchflow solve FILE`."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _demo(args) -> int:
    import scipy.sparse.csgraph as csgraph

    from . import _device, generators
    from ._matching import CPU_METHODS, GPU_METHODS, maximum_matching

    graph = generators.uniform_random(args.n, degree=args.degree, seed=args.seed)
    print(f"uniform random bipartite graph: {args.n} x {args.n}, {graph.nnz} edges "
          f"(seed {args.seed})")
    start = time.perf_counter()
    reference = int(np.count_nonzero(csgraph.maximum_bipartite_matching(graph) >= 0))
    scipy_seconds = time.perf_counter() - start
    rows = [("scipy", "cpu", reference, scipy_seconds, "reference")]
    methods = [(m, "cpu") for m in CPU_METHODS]
    if _device.cuda_available():
        methods += [(m, "cuda") for m in GPU_METHODS]
    failures = 0
    for method, device in methods:
        result = maximum_matching(graph, method=method, device=device)
        ok = result.cardinality == reference and _is_matching(graph, result)
        failures += not ok
        rows.append((method, result.device, result.cardinality, result.stats.seconds_total,
                     "ok" if ok else "WRONG"))
    print(f"{'method':<12} {'device':<7} {'matched':>9} {'seconds':>9} {'vs scipy':>9}  check")
    for method, device, size, seconds, verdict in rows:
        print(f"{method:<12} {device:<7} {size:>9} {seconds:>9.4f} "
              f"{scipy_seconds / seconds:>8.1f}x  {verdict}")
    if not _device.cuda_available():
        print("(no usable CUDA device: GPU methods not run)")
    return 1 if failures else 0


def _is_matching(graph, result) -> bool:
    """Every matched pair is an edge and the two mate arrays agree."""
    rows = np.flatnonzero(result.col4row >= 0)
    cols = result.col4row[rows]
    if not np.array_equal(result.row4col[cols], rows):
        return False
    csr = graph.tocsr()
    return all(c in csr.indices[csr.indptr[r]:csr.indptr[r + 1]] for r, c in zip(rows, cols))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="matchflow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="how matchflow was built and which devices it sees")
    demo = sub.add_parser("demo", help="match a random graph with every method, check vs SciPy")
    demo.add_argument("--n", type=int, default=200_000, help="rows and columns")
    demo.add_argument("--degree", type=float, default=3.0, help="edges per row")
    demo.add_argument("--seed", type=int, default=0)
    from . import _cli_solve
    _cli_solve.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "info":
        from ._device import show_config

        show_config()
        return 0
    if args.command == "solve":
        try:
            return _cli_solve.run(args)
        except (ValueError, OverflowError, MemoryError, RuntimeError, OSError) as e:
            print(f"matchflow solve: {e}", file=sys.stderr)
            return 2
    return _demo(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Per-kernel GPU time of one GPU matching call, from ncu.

`--run` solves one graph from GPU memory (a CuPy CSR triple, after an
unprofiled warm-up on a small graph) inside the NVTX range "measure", so that
ncu profiles that call's kernels alone; `--summary FILE` reads ncu's CSV and
prints each kernel's count and total time, largest first:

    ncu --csv --nvtx --nvtx-include "measure/" --metrics gpu__time_duration.sum \
        python benchmarks/matching_kernel_times.py --run --graph rmat-ef16-21 > k.csv
    python benchmarks/matching_kernel_times.py --summary k.csv

(ncu serialises the kernels and profiles each on its own: the times add up to
more than the call's, and launch gaps are not in them.)
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict

GRAPHS = {
    "powerlaw-22": lambda g: g.power_law(1 << 22, degree=4.0, seed=0),
    "rmat-ef8-21": lambda g: g.rmat(21, edge_factor=8, seed=0),
    "rmat-ef16-21": lambda g: g.rmat(21, edge_factor=16, seed=0),
    "rmat-ef16-22": lambda g: g.rmat(22, edge_factor=16, seed=0),
}


def run(name: str, method: str) -> None:
    import cupy

    from matchflow import generators, maximum_matching

    nvtx = bool(getattr(cupy.cuda.nvtx, "available", False))

    def solve(graph, measure=False):
        triple = (cupy.asarray(graph.indptr), cupy.asarray(graph.indices), graph.shape)
        cupy.cuda.get_current_stream().synchronize()
        if measure and nvtx:
            cupy.cuda.nvtx.RangePush("measure")
        r = maximum_matching(triple, method=method)
        cupy.cuda.get_current_stream().synchronize()
        if measure and nvtx:
            cupy.cuda.nvtx.RangePop()
        return r
    if not nvtx:
        print("no NVTX: ncu profiles the warm-up's kernels too", file=sys.stderr)
    solve(generators.uniform_random(4096, degree=4.0, seed=1))  # context, modules
    r = solve(GRAPHS[name](generators), measure=True)
    s = r.stats
    print(f"{name} {r.method}: init {s.seconds_init * 1e3:.2f} ms solve "
          f"{s.seconds_solve * 1e3:.2f} ms, {s.iterations} phases, {s.bfs_levels} levels",
          file=sys.stderr, flush=True)


# ncu's time units (short forms by default, long ones in older releases), in microseconds.
_US_PER = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def summary(path: str) -> None:
    rows = [r for r in csv.DictReader(line for line in open(path) if line.startswith('"'))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    per_kernel: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        unit = r["Metric Unit"]
        value = float(r["Metric Value"].replace(",", ""))
        us = value * _US_PER[unit]
        per_kernel[r["Kernel Name"].split("(")[0]].append(us)
    total = sum(sum(v) for v in per_kernel.values())
    print(f"{len(rows)} kernels, {total / 1e3:.3f} ms in all")
    for name, times in sorted(per_kernel.items(), key=lambda kv: -sum(kv[1])):
        mean = sum(times) / len(times)
        print(f"{sum(times) / 1e3:9.3f} ms {len(times):6d} x  mean {mean:8.1f} us  {name[:90]}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="store_true", help="solve the graph (under ncu)")
    p.add_argument("--graph", default="rmat-ef16-21", choices=sorted(GRAPHS))
    p.add_argument("--method", default="auto")
    p.add_argument("--summary", metavar="CSV", help="summarise ncu's CSV")
    args = p.parse_args()
    if args.summary:
        summary(args.summary)
    if args.run:
        run(args.graph, args.method)
    return 0


if __name__ == "__main__":
    sys.exit(main())

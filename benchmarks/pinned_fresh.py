#!/usr/bin/env python
"""What a GPU call's page-locked result array costs when the pool has no
block for it (a fresh one is pinned before the solve) and when it has one,
against a fresh pageable NumPy array written once (what a staged download
into new pages costs on top of the copy).

    python benchmarks/pinned_fresh.py [--mib 4 16 64] [--repeat 5]

Each fresh take holds its array, so the next take cannot reuse its block;
then all are freed and taken again (kept blocks).  Milliseconds, medians.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import matchflow
from matchflow import _core


def _ms(call) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = call()
    return (time.perf_counter() - t0) * 1e3, out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", nargs="+", type=int, default=[4, 16, 64])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    print(f"matchflow {matchflow.__file__}")
    for mib in args.mib:
        n = mib << 18  # int32 entries
        matchflow.free_host_cache()
        fresh, held = [], []
        for _ in range(args.repeat):
            dt, a = _ms(lambda: _core.result_array(n, np.int32))
            fresh.append(dt)
            held.append(a)
        pinned = sum(type(getattr(a.base, "obj", None)).__name__ == "_PinnedBlock" for a in held)
        held.clear()
        kept = [_ms(lambda: _core.result_array(n, np.int32))[0] for _ in range(args.repeat)]
        pageable = []
        for _ in range(args.repeat):  # held too: freed pages would be reused
            dt, a = _ms(lambda: np.full(n, -1, np.int32))
            pageable.append(dt)
            held.append(a)
        held.clear()
        print(f"{mib:4d} MiB  fresh block {statistics.median(fresh):7.2f}  "
              f"kept block {statistics.median(kept):6.3f}  "
              f"fresh pageable, written {statistics.median(pageable):6.2f}  "
              f"({pinned} of {args.repeat} fresh takes page-locked)")
    matchflow.free_host_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

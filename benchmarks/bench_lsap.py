"""Linear sum assignment benchmark: paper 001's tables, SciPy vs matchflow.

Suites (all seeded):
  table1  n = 500 ... 5000, integer costs in [0, n]              (paper 001, Table 1)
  table3  n = 5000 ... 20000 x costs in [0, n/10], [0, n], [0, 10n] (paper 001, Table 3)
  float   uniform float64 costs in [0, 1)
  floats  n = 600, 1000, 2000, 5000, 10000, uniform costs in [0, 1) as float32 and
          as float64 (gpu-auction's targets; pick columns with --configs)
  rect    n x 2n, integer costs in [0, n]
  ties    n = 500 ... 5000, integer costs in [0, kn] for k = 1, 10, ..., 10^4
  orlib   OR-Library assign500/600/700 (MATCHFLOW_DATA/orlib), when present
  tiny    n = 1 ... 500, n x n, n x 2n, 2n x n, float64 [0, 1), int64 [0, n] and
          int64 [0, 10^6] ("float", "int", "int-wide"); up to n = 100 also
          float32, int32, uint8 and bool, up to n = 20 nested lists:
          SciPy vs the drop-in `linear_sum_assignment` (method="auto"), per-call
          times from batched loops (median of 5 batches of >= 20 ms each);
          "auto / scipy" pairs them: 11 rounds, each a batch of SciPy and a
          batch of auto (>= 10 ms each, the order alternating), and gives the
          median of the rounds' ratios, so that drifts of the host's speed
          cancel out

Columns: SciPy, omp-tree at 1 thread and at all threads, gpu-classic,
gpu-tree (when a GPU is usable), auto, lapx (`lap.lapjvx`, the JV solver of
the lapx package, with extend_cost for rectangles; when installed).  Times are
wall-clock medians around the public call (conversion and host<->device copies included); the GPU
solve time without copies is reported too.  Columns ending in "/cupy" (when
CuPy is importable) pass the costs as a CuPy array uploaded before the timing,
and time the call up to a synchronised stream: the whole call from GPU
memory.  Every answer is checked: its
objective must equal SciPy's (exactly for integers) and its duals must
certify optimality (dual feasible, dual objective = cost).

    python benchmarks/bench_lsap.py --out DIR [--suites table1 table3 ...]
           [--scipy-max-n 10000] [--t1-max-n 5000] [--repeat 3] [--configs LABEL ...]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow
from matchflow._lsap import AUCTION_MAX_COLUMNS, GPU_METHODS

try:  # optional: the lapx package (imported as `lap`)
    import lap as lapx
    if not hasattr(lapx, "lapjvx"):
        lapx = None
except ImportError:
    lapx = None
try:  # optional: GPU-array inputs
    import cupy
except ImportError:
    cupy = None
from matchflow.io import read_orlib_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_matching import git_sha, machine_info, median_index  # noqa: E402


def instances(suites, data_dir):
    """Yield (name, builder) pairs."""
    def ints(n, m, hi, seed):
        return lambda: np.random.default_rng(seed).integers(0, hi + 1, (n, m), dtype=np.int64)

    if "table1" in suites:
        for n in (500, 1000, 2000, 3000, 4000, 5000):
            yield f"int[0,n] n={n}", ints(n, n, n, n)
    if "table3" in suites:
        for n in (5000, 10000, 15000, 20000):
            for label, hi in (("n/10", n // 10), ("n", n), ("10n", 10 * n)):
                yield f"int[0,{label}] n={n}", ints(n, n, hi, n + hi)
    if "float" in suites:
        for n in (1000, 5000, 10000):
            yield f"float[0,1) n={n}", (lambda n=n: np.random.default_rng(n).random((n, n)))
    if "floats" in suites:
        for n in (600, 1000, 2000, 5000, 10000):
            for dtype in (np.float32, np.float64):
                yield (f"{np.dtype(dtype).name}[0,1) n={n}",
                       lambda n=n, d=dtype: np.random.default_rng(n).random((n, n)).astype(d))
    if "rect" in suites:
        for n in (1000, 5000):
            yield f"int[0,n] {n}x{2 * n}", ints(n, 2 * n, n, 7 * n)
    if "ties" in suites:  # where the GPU stops paying as ties thin out
        for n in (500, 1000, 2000, 5000):
            for k in (1, 10, 100, 1000, 10000):
                yield f"int[0,{k}n] n={n}", ints(n, n, k * n, 3 * n + k)
    if "orlib" in suites and data_dir:
        for name in ("assign500", "assign600", "assign700"):
            path = Path(data_dir) / "orlib" / f"{name}.txt"
            if path.exists():
                yield f"orlib {name}", (lambda p=path: read_orlib_assignment(p))


def lapx_solve(cost: np.ndarray):
    """lapx's JV solver, (row_ind, col_ind) as SciPy; float64 input as it needs."""
    c = np.asarray(cost, dtype=np.float64)
    return lapx.lapjvx(c, extend_cost=c.shape[0] != c.shape[1], return_cost=False)


def tiny_instances():
    """float64 [0, 1), int64 [0, n] and [0, 10^6] up to n = 500; other dtypes (which the
    small route reads as they are, or copies past 1024 entries) up to n = 100;
    nested lists of floats and of ints (NumPy converts them) up to n = 20."""
    others = [("float32", lambda r, s, n: r.random(s).astype(np.float32)),
              ("int32", lambda r, s, n: r.integers(0, n + 1, s, dtype=np.int32)),
              ("uint8", lambda r, s, n: r.integers(0, min(n, 255) + 1, s, dtype=np.uint8)),
              ("bool", lambda r, s, n: r.random(s) < 0.5)]
    for n in (1, 2, 5, 10, 20, 50, 100, 200, 500):
        for shape in ((n, n), (n, 2 * n), (2 * n, n)):
            seed = 1000 * shape[0] + shape[1]
            yield (f"float {shape[0]}x{shape[1]}",
                   lambda s=shape, k=seed: np.random.default_rng(k).random(s))
            yield (f"int {shape[0]}x{shape[1]}",
                   lambda s=shape, k=seed, n=n: np.random.default_rng(k).integers(
                       0, n + 1, s, dtype=np.int64))
            yield (f"int-wide {shape[0]}x{shape[1]}",  # [0, 10^6]: few ties
                   lambda s=shape, k=seed: np.random.default_rng(k).integers(
                       0, 10**6 + 1, s, dtype=np.int64))
            if n <= 20:
                yield (f"list-float {shape[0]}x{shape[1]}",
                       lambda s=shape, k=seed: np.random.default_rng(k).random(s).tolist())
                yield (f"list-int {shape[0]}x{shape[1]}",
                       lambda s=shape, k=seed, n=n: np.random.default_rng(k).integers(
                           0, n + 1, s).tolist())
            if n > 100:
                continue
            for label, make in others:
                yield (f"{label} {shape[0]}x{shape[1]}",
                       lambda s=shape, k=seed, n=n, make=make: make(
                           np.random.default_rng(k), s, n))


def per_call(call, batches=5, min_seconds=0.02):
    """Median per-call time over batches of >= min_seconds each; the result."""
    res = call()
    t0 = time.perf_counter()
    res = call()
    once = max(time.perf_counter() - t0, 1e-7)
    loops = max(1, int(min_seconds / once))
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(loops):
            call()
        times.append((time.perf_counter() - t0) / loops)
    return sorted(times)[len(times) // 2], res


def paired_ratio(first, second, rounds=11, min_seconds=0.01) -> float:
    """Median over rounds of (time of `second`) / (time of `first`), the two
    timed back to back in each round, in alternating order."""
    first(), second()
    t0 = time.perf_counter()
    first()
    loops = max(1, int(min_seconds / max(time.perf_counter() - t0, 1e-7)))

    def batch(call):
        t0 = time.perf_counter()
        for _ in range(loops):
            call()
        return time.perf_counter() - t0

    ratios = []
    for k in range(rounds):
        if k % 2:
            b, a = batch(second), batch(first)
        else:
            a, b = batch(first), batch(second)
        ratios.append(b / a)
    return sorted(ratios)[rounds // 2]


def bench_tiny(args):
    rows = []
    for name, build in tiny_instances():
        given = build()  # what the calls get: an array, or a nested list
        cost = np.asarray(given)  # what the checks index
        row = {"name": name, "shape": list(cost.shape), "dtype": str(cost.dtype), "runs": {}}
        t, (ri, ci) = per_call(lambda: scipy_lsa(given))
        ref = cost[ri, ci].sum(dtype=np.float64)
        row["runs"]["scipy"] = {"seconds": t}
        calls = [("auto", lambda: matchflow.linear_sum_assignment(given)),
                 ("omp-tree/t1", lambda: matchflow.linear_sum_assignment(
                     given, method="omp-tree", threads=1)),
                 ("solve_assignment", lambda: matchflow.solve_assignment(given))]
        if lapx is not None:
            calls.append(("lapx", lambda: lapx_solve(cost)))
        for label, call in calls:
            t, res = per_call(call)
            if label == "solve_assignment":
                r, k = res.row_ind, res.col_ind
            else:
                r, k = res
            got = cost[np.asarray(r), np.asarray(k)].sum(dtype=np.float64)
            tol = 1e-5 if cost.dtype == np.float32 else 1e-12  # omp-tree solves in float32
            ok = np.isclose(float(got), float(ref), rtol=tol, atol=tol)
            row["runs"][label] = {"seconds": t, "check": "ok" if ok else f"cost {got} != {ref}"}
        same = all(np.array_equal(x, y) for x, y in zip(
            matchflow.linear_sum_assignment(given), (ri, ci)))
        row["auto_same_arrays_as_scipy"] = bool(same)
        row["auto_over_scipy_paired"] = paired_ratio(
            lambda: scipy_lsa(given), lambda: matchflow.linear_sum_assignment(given))
        rows.append(row)
        print(tiny_markdown(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def _cell(m: dict | None, text) -> str:
    """A table cell: '-' when not run, else text(m), flagged when the answer was wrong."""
    if m is None:
        return "-"
    cell = text(m)
    if m.get("check", "ok") != "ok":
        cell += f" WRONG: {m['check']}"
    return cell


def tiny_markdown(rows) -> str:
    labels = ["scipy", "auto", "omp-tree/t1", "solve_assignment", "lapx"]
    lines = ["| instance | " + " | ".join(f"{lab} (us)" for lab in labels)
             + " | auto / scipy (paired) | auto's arrays |", "|" + "---|" * (len(labels) + 3)]
    for row in rows:
        cells = [_cell(row["runs"].get(label), lambda m: f"{m['seconds'] * 1e6:.1f}")
                 for label in labels]
        same = "SciPy's" if row["auto_same_arrays_as_scipy"] else "other optimum"
        lines.append(f"| {row['name']} | " + " | ".join(cells)
                     + f" | {row['auto_over_scipy_paired']:.2f} | {same} |")
    return "\n".join(lines)


def tiny_summary(rows) -> str:
    """The worst paired ratio, and the cells over 1.10, per n."""
    by_n = {}
    for row in rows:
        by_n.setdefault(min(row["shape"]), []).append(row["auto_over_scipy_paired"])
    lines = ["| n (shorter side) | cells | median auto / scipy | worst | cells > 1.10 |",
             "|---|---|---|---|---|"]
    for n, ratios in sorted(by_n.items()):
        ratios.sort()
        lines.append(f"| {n} | {len(ratios)} | {ratios[len(ratios) // 2]:.2f} | "
                     f"{ratios[-1]:.2f} | {sum(r > 1.10 for r in ratios)} |")
    return "\n".join(lines)


def rel_tol(cost: np.ndarray) -> float:
    """Relative tolerance of a float optimum: a float32 solve keeps float32
    duals, so its sums carry float32 rounding (about 1e-8 relative on n =
    1000 uniform costs, lsap-floats.md)."""
    return 1e-5 if cost.dtype == np.float32 else 1e-9


def certified(cost: np.ndarray, r) -> str:
    """'' when the duals prove r optimal, else what is wrong (row blocks: bounded memory)."""
    u, v = r.u.astype(np.float64), r.v.astype(np.float64)
    scale = max(1.0, float(np.abs(cost[np.isfinite(cost)]).max()) if cost.size else 1.0)
    tol = 0 if np.issubdtype(cost.dtype, np.integer) else rel_tol(cost) * scale * max(cost.shape)
    for start in range(0, cost.shape[0], 1024):
        block = cost[start:start + 1024].astype(np.float64)
        if np.any(u[start:start + 1024, None] + v[None, :] > block + tol):
            return "dual infeasible"
    if abs(u.sum() + v.sum() - float(r.cost)) > tol:
        return "dual objective differs from the cost"
    return ""


def configurations(threads: int):
    configs = [("omp-tree/t1", "omp-tree", "cpu", 1), (f"omp-tree/t{threads}", "omp-tree", "cpu",
                                                       threads)]
    if matchflow.cuda_available():
        configs += [(m, m, "cuda", None) for m in GPU_METHODS]
        if cupy is not None:
            configs += [(f"{m}/cupy", m, "cuda", None) for m in GPU_METHODS]
    return configs + [("auto", "auto", "auto", None)]


def timed(call, repeat):
    times, results = [], []
    for i in range(repeat + 1):  # the first run is a warm-up
        t0 = time.perf_counter()
        res = call()
        dt = time.perf_counter() - t0
        if i or dt > 5.0:  # a long warm-up is its own measurement
            times.append(dt)
            results.append(res)
        if dt > 5.0:
            break
    k = median_index(times)
    return times[k], results[k]


def timed_device_input(cost: np.ndarray, method: str, repeat: int):
    """timed() for the costs in GPU memory: the call up to a synchronised
    stream; the result's arrays brought to the host afterwards."""
    d_cost = cupy.asarray(cost)
    stream = cupy.cuda.get_current_stream()
    stream.synchronize()

    def call():
        r = matchflow.solve_assignment(d_cost, method=method, device="cuda")
        stream.synchronize()
        return r

    call()  # untimed: CuPy compiles the kernels of the input checks on first use
    t, r = timed(call, repeat)
    host = {f: cupy.asnumpy(getattr(r, f)) for f in ("row_ind", "col_ind", "u", "v")}
    return t, dataclasses.replace(r, **host)


def bench_instance(name, cost, args, configs):
    n = max(cost.shape)
    row = {"name": name, "shape": list(cost.shape), "dtype": str(cost.dtype), "runs": {}}
    ref = None
    if n <= args.scipy_max_n:
        t, (ri, ci) = timed(lambda: scipy_lsa(cost), args.repeat)
        ref = cost[ri, ci].sum(dtype=np.float64)  # float32 costs summed as the solvers do
        row["runs"]["scipy"] = {"seconds": t}
    if lapx is not None and n <= args.lapx_max_n:
        t, (ri, ci) = timed(lambda: lapx_solve(cost), args.repeat)
        got = cost[np.asarray(ri), np.asarray(ci)].sum()
        ok = ref is None or np.isclose(float(got), float(ref), rtol=1e-12, atol=0)
        row["runs"]["lapx"] = {"seconds": t, "check": "ok" if ok else f"cost {got} != {ref}"}
    for label, method, device, threads in configs:
        if label.endswith("/t1") and n > args.t1_max_n:
            continue
        if method == "gpu-auction" and (cost.shape[0] != cost.shape[1]
                                        or n > AUCTION_MAX_COLUMNS):
            continue  # its cap (and auto would not pick it)
        if label.endswith("/cupy"):
            t, r = timed_device_input(cost, method, args.repeat)
        else:
            t, r = timed(lambda: matchflow.solve_assignment(cost, method=method, device=device,
                                                            threads=threads), args.repeat)
        problem = certified(cost, r)
        if ref is not None and not np.isclose(float(r.cost), float(ref),
                                              rtol=1e-12 if cost.dtype != np.float32 else 1e-7,
                                              atol=0):
            problem = problem or f"cost {r.cost} != scipy {ref}"
        if r.stats.auction_phases or r.stats.auction_rounds:
            row.setdefault("auction", {})[label] = {
                "seconds_auction": r.stats.seconds_init, "seconds_searches": r.stats.seconds_solve,
                "phases": r.stats.auction_phases, "rounds": r.stats.auction_rounds,
                "bids": r.stats.auction_bids, "searches": r.stats.iterations}
        row["runs"][label] = {"seconds": t, "solve": r.stats.seconds_solve + r.stats.seconds_init,
                              "transfer": r.stats.seconds_transfer,
                              "method": r.method, "device": r.device,
                              "iterations": r.stats.iterations,
                              "paths_per_iteration_max": int(r.stats.paths_per_iteration.max(
                                  initial=0)),
                              "narrow_costs": r.stats.narrow_costs,
                              "narrow_cost_bytes": r.stats.narrow_cost_bytes,
                              "launches": r.stats.kernel_launches, "check": problem or "ok"}
    return row


def markdown(rows, labels) -> str:
    head = "| instance | " + " | ".join(labels) + " |"
    lines = [head, "|" + "---|" * (len(labels) + 1)]
    for row in rows:
        base = row["runs"].get("scipy", {}).get("seconds")

        def text(m, label):
            cell = f"{m['seconds']:.4f}"
            if base and label != "scipy":
                cell += f" ({base / m['seconds']:.1f}x)"
            if label.startswith("gpu"):
                cell += f" [solve {m['solve'] * 1e3:.1f} ms, copy {m['transfer'] * 1e3:.1f} ms]"
            a = row.get("auction", {}).get(label)
            if a:
                cell += (f" [auction {a['seconds_auction'] * 1e3:.1f} ms: {a['phases']} phases,"
                         f" {a['bids']} bids, {a['rounds']} rounds; {a['searches']} searches"
                         f" {a['seconds_searches'] * 1e3:.1f} ms]")
            if label == "auto":
                cell += f" {m['method']}@{m['device']}"
            return cell

        cells = [_cell(row["runs"].get(label), lambda m, label=label: text(m, label))
                 for label in labels]
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--suites", nargs="+",
                   default=["tiny", "table1", "table3", "float", "rect", "orlib"])
    p.add_argument("--scipy-max-n", type=int, default=10000)
    p.add_argument("--lapx-max-n", type=int, default=10000)
    p.add_argument("--t1-max-n", type=int, default=5000)
    p.add_argument("--max-n", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--configs", nargs="+", default=None, metavar="LABEL",
                   help="run only these columns (e.g. gpu-auction gpu-tree omp-tree/t16 auto); "
                   "SciPy always runs up to --scipy-max-n")
    p.add_argument("--time-budget", type=float, default=float("inf"))
    p.add_argument("--only", nargs="+", default=None, metavar="TEXT",
                   help="run only the instances whose name contains one of these (not tiny)")
    p.add_argument("--git-sha", default=None, help="recorded in the results (else git or "
                   "$MATCHFLOW_GIT_SHA)")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    configs = configurations(args.threads)
    if args.configs:
        configs = [c for c in configs if c[0] in args.configs]
    labels = ["scipy"] + [c[0] for c in configs] + (["lapx"] if lapx is not None else [])
    header = {"machine": machine_info(args), "git": git_sha(args), "command": " ".join(sys.argv),
              "lapx": getattr(lapx, "__version__", None) if lapx is not None else None}
    rows, start, failures = [], time.perf_counter(), 0
    tiny_rows = bench_tiny(args) if "tiny" in args.suites else []
    failures += sum(m.get("check", "ok") != "ok" for r in tiny_rows for m in r["runs"].values())

    def write():
        (out / "lsap.json").write_text(json.dumps({**header, "rows": rows, "tiny_rows": tiny_rows},
                                                  indent=1, default=str))
        tiny = ("\n\n## tiny and small sizes (per call)\n\n" + tiny_summary(tiny_rows)
                + "\n\n" + tiny_markdown(tiny_rows)
                if tiny_rows else "")
        (out / "lsap.md").write_text(f"command: `{header['command']}`\n\n"
                                     + markdown(rows, labels) + tiny + "\n")
    write()
    data = os.environ.get("MATCHFLOW_DATA") or Path(__file__).resolve().parents[2] / "shared/data"
    for name, build in instances(args.suites, data if Path(data).is_dir() else None):
        if args.only and not any(text in name for text in args.only):
            continue
        if time.perf_counter() - start > args.time_budget:
            print(f"[time budget] stopping before {name}", flush=True)
            break
        cost = build()
        if max(cost.shape) > args.max_n:
            continue
        rows.append(bench_instance(name, cost, args, configs))
        failures += sum(m.get("check", "ok") != "ok" for m in rows[-1]["runs"].values())
        print(markdown(rows[-1:], labels).splitlines()[-1], flush=True)
        write()
    print(markdown(rows, labels))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

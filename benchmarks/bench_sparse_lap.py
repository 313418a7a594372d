"""Sparse linear assignment benchmark: SciPy's min_weight_full_bipartite_matching
(LAPJVsp) vs matchflow's sparse shortest augmenting path solver (sparse-sap,
and gpu-sparse-sap where a GPU is usable), and weighted_transversal vs
maximum_transversal on the same matrices (unless --no-transversal).

Instances (all seeded):
  random  n x n, k entries per row (n = 10^5 ... 10^6, k = 5 ... 20): k - 1
          uniformly random columns plus one on a random permutation (so that a
          full matching exists), weights uniform in [0, 1)
  suite   the matching suite's generators (matchflow.generators, as
          bench_matching.py) at 2^log2 rows with uniform random weights,
          restricted to the rows and columns of a maximum matching (so that a
          full matching exists)

Every answer is checked: matchflow's dual objective equals its cost, its
duals are feasible on every entry, and its cost equals SciPy's when SciPy
finished.  SciPy runs in a forked child killed after --scipy-timeout
seconds: a capped time is reported as "> T s" and the speedup as "> ratio".

    python benchmarks/bench_sparse_lap.py --out DIR [--n 100000 1000000]
           [--k 5 10 20] [--log2 18 20] [--scipy-timeout 600] [--repeat 3]
           [--no-transversal]
"""
from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

import matchflow
from matchflow import generators, solve_sparse_assignment, weighted_transversal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_matching import _die_with_parent, doc_parser, machine_info  # noqa: E402


def random_instance(n: int, k: int, seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, n, (n, k), dtype=np.int32)
    cols[:, 0] = rng.permutation(n)
    a = sp.csr_array((rng.random(n * k), (np.repeat(np.arange(n), k), cols.ravel())),
                     shape=(n, n))
    a.sum_duplicates()
    return a


def suite_instance(family: str, log2n: int, seed: int) -> sp.csr_array:
    n = 1 << log2n
    g = {"uniform": lambda: generators.uniform_random(n, degree=3.0, seed=seed),
         "rmat": lambda: generators.rmat(log2n, edge_factor=16, seed=seed),
         "rgg": lambda: generators.random_geometric(n, degree=8.0, seed=seed)}[family]()
    g = sp.csr_array(g)
    m = matchflow.maximum_matching(g, device="cpu")
    rows = np.flatnonzero(m.col4row >= 0)
    sub = g[rows][:, m.col4row[rows]].tocsr()  # square, with a perfect matching
    sub.sum_duplicates()
    rng = np.random.default_rng(seed)
    return sp.csr_array((rng.random(sub.nnz) + 1e-9, sub.indices, sub.indptr), shape=sub.shape)


def _scipy_child(graph, conn):
    _die_with_parent()
    try:
        t0 = time.perf_counter()
        r, c = scipy_mwfbm(graph)
        conn.send(("ok", time.perf_counter() - t0, float(graph[r, c].sum())))
    except BaseException as exc:  # report anything, never hang the parent
        conn.send(("error", 0.0, repr(exc)))
    finally:
        conn.close()


def run_scipy(graph, timeout: float) -> dict:
    """One SciPy run in a forked child, killed after `timeout` seconds."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_scipy_child, args=(graph, send))
    child.start()
    send.close()
    try:
        if not recv.poll(timeout):
            return dict(status="timeout", limit=timeout)
        tag, seconds, value = recv.recv()
        if tag == "error":
            return dict(status="error", note=value)
        return dict(status="ok", seconds=seconds, cost=value)
    except EOFError:
        return dict(status="error", note="SciPy child died")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()


def check(graph: sp.csr_array, r) -> None:
    """Dual feasibility on every entry and dual objective = cost."""
    coo = graph.tocoo()
    slack = coo.data - r.u[coo.row] - r.v[coo.col]
    scale = max(1.0, abs(r.cost))
    assert slack.min() >= -1e-9 * scale, f"dual infeasible by {-slack.min()}"
    assert abs(r.u.sum() + r.v.sum() - r.cost) <= 1e-9 * scale, "dual objective != cost"


def timed(call, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def transversal_times(graph, repeat: int) -> dict:
    """weighted_transversal ("product", with scaling) vs the structural transversal."""
    structural = getattr(matchflow, "maximum_transversal", None)
    label = "maximum_transversal"
    if structural is None:
        label = "maximum_matching"
        structural = lambda a: matchflow.maximum_matching(a, device="cpu")  # noqa: E731
    t_struct, _ = timed(lambda: structural(graph), repeat)
    t_weighted, _ = timed(lambda: weighted_transversal(graph), repeat)
    return dict(structural=label, structural_seconds=t_struct, weighted_seconds=t_weighted)


def bench(name, graph, args) -> dict:
    print(f"== {name}: {graph.shape[0]} x {graph.shape[1]}, nnz {graph.nnz}", flush=True)
    t_ours, r = timed(lambda: solve_sparse_assignment(graph, device="cpu"), args.repeat)
    check(graph, r)
    entry = dict(instance=name, n=graph.shape[0], nnz=int(graph.nnz), seconds=t_ours,
                 cost=r.cost, seconds_init=r.stats.seconds_init,
                 seconds_solve=r.stats.seconds_solve, searches=r.stats.augmenting_paths,
                 columns_scanned=r.stats.dual_updates)
    if matchflow.cuda_available():
        t_gpu, g = timed(lambda: solve_sparse_assignment(graph, method="gpu-sparse-sap"),
                         args.repeat)
        check(graph, g)
        assert np.isclose(g.cost, r.cost, rtol=1e-12), "gpu-sparse-sap's cost differs"
        entry.update(gpu_seconds=t_gpu, gpu_seconds_init=g.stats.seconds_init,
                     gpu_seconds_solve=g.stats.seconds_solve)
    entry["scipy"] = (dict(status="skipped") if args.no_scipy
                      else run_scipy(graph, args.scipy_timeout))
    if entry["scipy"]["status"] == "ok":
        assert np.isclose(entry["scipy"]["cost"], r.cost, rtol=1e-9), "cost differs from SciPy"
    if not args.no_transversal:
        entry.update(transversal_times(graph, args.repeat))
    gpu = f"  gpu {entry['gpu_seconds']:.3f} s" if "gpu_seconds" in entry else ""
    print(f"   matchflow {t_ours:.3f} s{gpu}  scipy {fmt_scipy(entry)}  " + (
        f"weighted/structural {entry['weighted_seconds']:.3f}/{entry['structural_seconds']:.3f} s"
        if "weighted_seconds" in entry else ""), flush=True)
    return entry


def fmt_scipy(e) -> str:
    s = e["scipy"]
    if s["status"] == "ok":
        return f"{s['seconds']:.3f}"
    if s["status"] == "timeout":
        return f"> {s['limit']:g} (capped)"
    return s["status"]


def speedup(e, key="seconds") -> str:
    s = e["scipy"]
    if key not in e:
        return "-"
    if s["status"] == "ok":
        return f"{s['seconds'] / e[key]:.1f}x"
    if s["status"] == "timeout":
        return f"> {s['limit'] / e[key]:.1f}x"
    return "-"


def split_time(e, prefix="") -> str:
    """'total (init + searches)' of sparse-sap (prefix "") or gpu-sparse-sap ("gpu_")."""
    if prefix + "seconds" not in e:
        return "-"
    return (f"{e[prefix + 'seconds']:.3f} ({e[prefix + 'seconds_init']:.3f} + "
            f"{e[prefix + 'seconds_solve']:.3f})")


def fmt_seconds(e, key) -> str:
    return f"{e[key]:.3f}" if key in e else "-"


def ratio(e) -> str:
    if "weighted_seconds" not in e:
        return "-"
    return f"{e['weighted_seconds'] / e['structural_seconds']:.1f}"


def markdown(header: dict, rows: list[dict]) -> str:
    m = header["machine"]
    lines = [
        "# Sparse linear assignment: matchflow sparse-sap and gpu-sparse-sap vs SciPy LAPJVsp",
        "",
        f"command: `{m['command']}`  ", f"commit: {m['git_sha']}  ",
        f"date: {m['date']}; cpu: {m['cpu']} ({m['cpu_affinity']} usable); "
        f"versions: {m['versions']}", "",
        f"SciPy runs in a child process killed after {header['scipy_timeout']:g} s: a capped "
        "time is shown as \"> T\" and the speedup as a lower bound.  Times are medians of "
        f"{header['repeat']} runs of the public call (conversion included); SciPy one run.  "
        "sparse-sap runs on the CPU threads; gpu-sparse-sap runs its auction start on the GPU "
        "(init: upload, auction, greedy pass) and the searches on the CPU.  "
        "weighted = weighted_transversal (product, with scaling); structural = "
        "maximum_transversal (maximum_matching where it does not exist).", "",
        "| instance | n | nnz | sparse-sap s (init + searches) | searches "
        "| gpu-sparse-sap s (init + searches) | SciPy s | speedup | speedup (GPU) "
        "| weighted s | structural s | weighted / structural |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for e in rows:
        lines.append(
            f"| {e['instance']} | {e['n']} | {e['nnz']} | {split_time(e)} | {e['searches']} "
            f"| {split_time(e, 'gpu_')} | {fmt_scipy(e)} | {speedup(e)} "
            f"| {speedup(e, 'gpu_seconds')} | {fmt_seconds(e, 'weighted_seconds')} "
            f"| {fmt_seconds(e, 'structural_seconds')} | {ratio(e)} |")
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    p = doc_parser(__doc__)
    p.add_argument("--out", default="benchmarks/results/latest")
    p.add_argument("--n", nargs="*", type=int, default=[100_000, 300_000, 1_000_000])
    p.add_argument("--k", nargs="*", type=int, default=[5, 10, 20])
    p.add_argument("--log2", nargs="*", type=int, default=[18, 20],
                   help="suite sizes (none: skip the suite)")
    p.add_argument("--families", nargs="*", default=["uniform", "rmat", "rgg"])
    p.add_argument("--scipy-timeout", type=float, default=600.0)
    p.add_argument("--no-scipy", action="store_true")
    p.add_argument("--no-transversal", action="store_true",
                   help="skip the weighted_transversal / maximum_transversal columns")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--git-sha", default=None)
    p.add_argument("--quick", action="store_true", help="n = 10^4, k = 5 10, 2^12: < 1 min")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.k, args.log2 = [10_000], [5, 10], [12]
        args.scipy_timeout = min(args.scipy_timeout, 60.0)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header = dict(machine=machine_info(args), scipy_timeout=args.scipy_timeout,
                  repeat=args.repeat)
    rows = []
    for n in args.n:
        for k in args.k:
            rows.append(bench(f"random n={n} k={k}", random_instance(n, k, args.seed + n + k),
                              args))
    for family in args.families if args.log2 else []:
        for log2n in args.log2:
            rows.append(bench(f"{family}-2^{log2n} (matched part)",
                              suite_instance(family, log2n, args.seed), args))
    (out / "sparse-lap.json").write_text(json.dumps({**header, "rows": rows}, indent=1,
                                                    default=float))
    (out / "sparse-lap.md").write_text(markdown(header, rows))
    print(f"wrote {out / 'sparse-lap.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python
"""Benchmark harness: maximum cardinality bipartite matching, matchflow vs SciPy.

Builds a suite of graphs (the papers' families from `matchflow.generators`,
each as generated and with a random row/column permutation, "RCP", as in
paper 004; optionally Matrix Market files), runs
`scipy.sparse.csgraph.maximum_bipartite_matching` and every matchflow
method available on this machine, checks every cardinality against SciPy's
(or, where SciPy was not run, against the largest valid matching found),
and writes, under --out:

  results.json   everything: machine, versions, git SHA, command line,
                 per graph and method all run times and the matchflow stats
  results.md     tables: seconds per method, speedup vs SciPy, GPU stats,
                 geometric means, performance-profile summary
  profile.png    performance profile (paper 000, Fig. 3) when matplotlib
                 is importable; otherwise a note in results.md

ECL-MM (github burtscher/ECL-MM, IPDPS 2025) is a column where a GPU is usable and
its sources are in --ecl (benchmarks/ecl_peer.py builds it): square graphs only, its
own reported time (the graph already on the GPU), to be read against matchflow's
on-GPU time; the geometric means give both that ratio and the whole call's.
--gpu-memory (CuPy needed) adds each GPU method and `auto` on the graph as a CuPy CSR
triple made before the runs, labelled METHOD/gpu-mem: the whole public call on a graph
already on the GPU, ECL-MM's setting (the call's time waits for the stream it used).

Timing: each method gets one untimed warm-up call on a small graph at start
(CUDA context, OpenMP pool), then per graph one untimed warm-up run and up
to --repeat timed runs; the median is reported.  A run longer than
--long-run seconds is not repeated (its warm-up is skipped too when the
warm-up itself was that long: then the warm-up is the measurement, and the
JSON says so with "runs": 1, "warmup_timed": true).  Times are wall-clock
around the public call (conversion and validation included, as for SciPy).

SciPy can be very slow (81 s for uniform 2^22; exponential on layered
patterns, gh-26147, and on the unpermuted grids): --scipy-max-n skips it
above a size, and --scipy-timeout runs it in a forked child that is killed
after that many seconds per run.

Examples
--------
  python benchmarks/bench_matching.py --quick --out /tmp/bench-quick
  python benchmarks/bench_matching.py --log2 20 22 --scipy-timeout 60 --out /tmp/m20
  python benchmarks/bench_matching.py --replot /tmp/m20/results.json
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import multiprocessing
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

import matchflow
from matchflow import _device, generators
from matchflow._matching import CPU_METHODS, GPU_METHODS, maximum_matching

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ecl_peer  # noqa: E402

# CPU methods whose algorithm is sequential: run once, not at 1 and N threads.
SEQUENTIAL_CPU = {"pr"}
DEFAULT_FAMILIES = ("uniform", "powerlaw", "rmat", "delaunay", "rgg", "grid", "layered")
ALL_FAMILIES = DEFAULT_FAMILIES + ("star", "path", "blocks")


# ----------------------------------------------------------------------------
# The suite
# ----------------------------------------------------------------------------

def family_builder(family: str, log2n: int, args):
    """(name, zero-argument builder) for one family at about 2^log2n rows, or None to skip."""
    n = 1 << log2n
    seed = args.seed
    if family == "uniform":
        return f"uniform-d{args.degree:g}-2^{log2n}", lambda: generators.uniform_random(
            n, degree=args.degree, seed=seed)
    if family == "powerlaw":
        return f"powerlaw-d{args.degree_powerlaw:g}-2^{log2n}", lambda: generators.power_law(
            n, degree=args.degree_powerlaw, seed=seed)
    if family == "rmat":
        return f"rmat-ef{args.edge_factor}-2^{log2n}", lambda: generators.rmat(
            log2n, edge_factor=args.edge_factor, seed=seed)
    if family == "delaunay":
        if log2n > args.delaunay_max_log2:
            return None
        return f"delaunay-2^{log2n}", lambda: generators.delaunay(n, seed=seed)
    if family == "rgg":
        return f"rgg-d{args.rgg_degree:g}-2^{log2n}", lambda: generators.random_geometric(
            n, degree=args.rgg_degree, seed=seed)
    if family == "grid":
        w, h = 1 << ((log2n + 1) // 2), 1 << (log2n // 2)
        return f"grid-{w}x{h}-p{args.grid_delete:g}", lambda: generators.grid_road(
            w, h, p_delete=args.grid_delete, seed=seed)
    if family == "layered":
        levels = args.layered_levels
        copies = max(1, n // (3 * levels + 1))
        return f"layered-L{levels}x{copies}", lambda: generators.layered_jacobian(levels, copies)
    if family == "star":
        return f"star-2^{log2n}", lambda: generators.star(n)
    if family == "path":
        return f"path-2^{log2n}", lambda: generators.long_path(n)
    if family == "blocks":
        b = 64
        return f"blocks-{max(1, n // b)}x{b}", lambda: generators.complete_bipartite_blocks(
            max(1, n // b), b)
    raise ValueError(f"unknown family {family!r}")


def load_matrix(path: str) -> sp.csr_array:
    """A Matrix Market file (.mtx or .mtx.gz) as a pattern: every stored entry is an edge."""
    from matchflow.io import read_graph

    a = read_graph(path)
    a.sum_duplicates()
    return sp.csr_array((np.ones(a.nnz, dtype=np.int8), a.indices, a.indptr), shape=a.shape)


def suite(args):
    """Yield (name, builder) pairs; RCP variants are made from each graph later."""
    for family in args.families:
        for log2n in args.log2:
            for ef in args.edge_factors if family == "rmat" else [args.edge_factor]:
                entry = family_builder(family, log2n, argparse.Namespace(
                    **{**vars(args), "edge_factor": ef}))
                if entry is None:
                    print(f"[skip] {family} at 2^{log2n}: above --delaunay-max-log2 "
                          f"{args.delaunay_max_log2}", flush=True)
                    continue
                yield entry
    for path in args.matrix:
        yield Path(path).name.split(".")[0], (lambda p=path: load_matrix(p))


# ----------------------------------------------------------------------------
# The solvers
# ----------------------------------------------------------------------------

def solver_list(args) -> list[dict]:
    """Every matchflow configuration to run: label, method, device, threads."""
    all_threads = args.threads or len(os.sched_getaffinity(0))
    solvers = []
    for m in CPU_METHODS:
        counts = [None] if m in SEQUENTIAL_CPU else sorted({1, all_threads})
        for t in counts:
            label = m if t is None else f"{m}/t{t}"
            solvers.append(dict(label=label, method=m, device="cpu", threads=t, kind="cpu"))
    # Each GPU method and `auto` also run once per --gpu-env setting: METHOD[VALUE].
    env_settings = [spec.split("=", 1) for spec in args.gpu_env] if _device.cuda_available() else []
    gpu = [(m, "cuda", "gpu") for m in GPU_METHODS] if _device.cuda_available() else []
    for m, device, kind in gpu + [("auto", "auto", "auto")]:
        solvers.append(dict(label=m, method=m, device=device, threads=None, kind=kind))
        for name, value in env_settings:
            solvers.append(dict(label=f"{m}[{value}]", method=m, device=device, threads=None,
                                kind=kind, env={name: value}))
        if args.gpu_memory and _device.cuda_available():
            solvers.append(dict(label=f"{m}/gpu-mem", method=m, device=device, threads=None,
                                kind=kind, gpu_memory=True))
    if args.methods:
        wanted = set(args.methods)
        solvers = [s for s in solvers if s["label"] in wanted
                   or (s["method"] in wanted and "env" not in s and "gpu_memory" not in s)]
    return solvers


@contextlib.contextmanager
def environment(setting: dict[str, str]):
    """`setting` in os.environ (which the core reads at each call) while inside."""
    saved = {name: os.environ.get(name) for name in setting}
    os.environ.update(setting)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _host(mates) -> np.ndarray:
    return mates.get() if hasattr(mates, "get") else mates


def _matching_summary(graph, r) -> dict:
    """What the suite keeps of a matchflow result: its check, not its arrays."""
    return dict(invalid=valid_matching(graph, _host(r.col4row), _host(r.row4col)),
                cardinality=r.cardinality, method=r.method, device=r.device, stats=r.stats)


def in_gpu_memory(graph: sp.csr_array):
    """`graph` as a CuPy CSR triple (what the /gpu-mem labels solve)."""
    import cupy
    return cupy.asarray(graph.indptr), cupy.asarray(graph.indices), graph.shape


def run_matchflow(graph, solver, on_gpu=None):
    """One timed public call; a /gpu-mem solver takes `on_gpu` (in_gpu_memory's triple),
    and its time includes waiting for the stream its results are ordered on."""
    g = on_gpu if solver.get("gpu_memory") else graph
    with environment(solver.get("env", {})):
        t0 = time.perf_counter()
        r = maximum_matching(g, method=solver["method"], device=solver["device"],
                             threads=solver["threads"])
        if g is on_gpu:
            import cupy
            cupy.cuda.get_current_stream().synchronize()
        return time.perf_counter() - t0, r


def timed_runs(call, repeat: int, long_run: float, keep=None):
    """Warm-up, then up to `repeat` timed runs; returns (times, results, warmup_timed).
    `keep(result)`, when given, is what `results` holds of each run, taken right after it
    (untimed): a library call's result arrays are then freed before the next call, as in a
    caller's loop, and the next call may reuse their page-locked blocks (a held result makes
    it pin fresh ones: benchmarks/NOTES.md, "Host copies")."""
    keep = keep or (lambda res: res)
    dt, res = call()
    if dt > long_run:
        return [dt], [keep(res)], True
    del res
    times, results = [], []
    for _ in range(repeat):
        dt, res = call()
        times.append(dt)
        results.append(keep(res))
        del res
        if dt > long_run:
            break
    return times, results, False


def median_index(times) -> int:
    order = np.argsort(times)
    return int(order[(len(times) - 1) // 2])


def valid_matching(pattern: sp.csr_array, col4row: np.ndarray, row4col: np.ndarray) -> str:
    """'' when (col4row, row4col) is a matching of `pattern`, else what is wrong."""
    n_rows, n_cols = pattern.shape
    if col4row.shape != (n_rows,) or row4col.shape != (n_cols,):
        return "wrong lengths"
    rows = np.flatnonzero(col4row >= 0)
    cols = col4row[rows]
    if np.any(cols >= n_cols):
        return "column out of range"
    if not np.array_equal(row4col[cols], rows):
        return "mate arrays disagree"
    if np.count_nonzero(row4col >= 0) != rows.shape[0]:
        return "a column matched twice or to nothing"
    if rows.size and not np.all(np.asarray(pattern[rows, cols]).ravel() != 0):
        return "a matched pair is not an edge"
    return ""


# SciPy in a forked child, so that a run over the time limit can be killed.
# (SciPy's Hopcroft-Karp holds the GIL and cannot be interrupted in-process.)

def _scipy_call(graph):
    t0 = time.perf_counter()
    y = scipy_matching(graph, perm_type="row")
    return time.perf_counter() - t0, int(np.count_nonzero(y >= 0))


def _die_with_parent() -> None:
    """Linux: have the kernel kill this child when the harness dies (e.g. by `timeout`)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _scipy_child(graph, repeat, long_run, conn):
    _die_with_parent()
    try:
        dt, card = _scipy_call(graph)
        conn.send(("warmup", dt, card))
        if dt <= long_run:
            for _ in range(repeat):
                dt, card = _scipy_call(graph)
                conn.send(("run", dt, card))
                if dt > long_run:
                    break
        conn.send(("done", 0.0, 0))
    except BaseException as exc:  # report anything to the parent, never hang it
        conn.send(("error", 0.0, repr(exc)))
    finally:
        conn.close()


def run_scipy(graph, args) -> dict:
    n = max(graph.shape)
    if args.no_scipy:
        return dict(status="skipped", note="--no-scipy")
    if args.scipy_max_n is not None and n > args.scipy_max_n:
        return dict(status="skipped", note=f"n > --scipy-max-n {args.scipy_max_n}")
    if not args.scipy_timeout:
        times, results, warm = timed_runs(lambda: _scipy_call(graph), args.repeat, args.long_run)
        return dict(status="ok", times=times, seconds=statistics.median(times),
                    cardinality=results[0], warmup_timed=warm)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_scipy_child, args=(graph, args.repeat, args.long_run, send))
    child.start()
    send.close()
    warm_dt, times, card, out = None, [], None, None
    try:
        while True:
            if not recv.poll(args.scipy_timeout):
                out = dict(status="timeout", limit=args.scipy_timeout,
                           note=f"a run took > {args.scipy_timeout:g} s (--scipy-timeout)")
                break
            tag, dt, value = recv.recv()
            if tag == "error":
                out = dict(status="error", note=value)
                break
            if tag == "done":
                break
            card = value
            if tag == "warmup":
                warm_dt = dt
            else:
                times.append(dt)
    except EOFError:
        out = dict(status="error", note=f"SciPy child died (exit code {child.exitcode})")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    if out is not None and not (out["status"] == "timeout" and (times or warm_dt is not None)):
        return out
    warm = not times
    times = times or [warm_dt]
    res = dict(status="ok", times=times, seconds=statistics.median(times),
               cardinality=card, warmup_timed=warm)
    if out is not None:            # a later run timed out: keep the finished ones
        res["note"] = out["note"]
    return res


# ----------------------------------------------------------------------------
# Running one graph
# ----------------------------------------------------------------------------

def bench_graph(name, graph, gen_seconds, solvers, args) -> dict:
    n_rows, n_cols = graph.shape
    print(f"== {name}: {n_rows} x {n_cols}, nnz {graph.nnz} (built in {gen_seconds:.1f} s)",
          flush=True)
    entry = dict(graph=name, n_rows=n_rows, n_cols=n_cols, nnz=int(graph.nnz),
                 build_seconds=gen_seconds, methods={})
    sc = run_scipy(graph, args)
    entry["methods"]["scipy"] = dict(kind="scipy", **sc)
    print(f"   {'scipy':<14} {_fmt_cell(sc)}", flush=True)
    if args.ecl_binary:
        entry["methods"]["ecl-mm"] = run_ecl(graph, args)
        print(f"   {'ecl-mm':<14} {_fmt_cell(entry['methods']['ecl-mm'])}", flush=True)
    on_gpu = in_gpu_memory(graph) if any(s.get("gpu_memory") for s in solvers) else None
    for s in solvers:
        try:
            times, results, warm = timed_runs(lambda: run_matchflow(graph, s, on_gpu), args.repeat,
                                              args.long_run,
                                              keep=lambda r: _matching_summary(graph, r))
        except Exception as exc:  # a failing method is reported, the suite goes on
            entry["methods"][s["label"]] = dict(kind=s["kind"], status="error",
                                                note=f"{type(exc).__name__}: {exc}")
            print(f"   {s['label']:<14} ERROR {type(exc).__name__}: {exc}", flush=True)
            continue
        mid = results[median_index(times)]
        problems = {r["invalid"] for r in results} - {""}
        cards = {r["cardinality"] for r in results}
        entry["methods"][s["label"]] = dict(
            kind=s["kind"], status="ok", times=times, seconds=statistics.median(times),
            warmup_timed=warm, cardinality=mid["cardinality"],
            all_cardinalities=sorted(cards), invalid="; ".join(sorted(problems)),
            ran_method=mid["method"], ran_device=mid["device"], stats=_stats_dict(mid["stats"]))
    _check(entry)
    for label, m in entry["methods"].items():
        if label != "scipy":
            print(f"   {label:<14} {_fmt_cell(m)}", flush=True)
    return entry


def run_ecl(graph, args) -> dict:
    """ECL-MM's runs on `graph` (ecl_peer.py): its own times, median as for the others."""
    why = ecl_peer.fits(graph)
    if why:
        return dict(kind="peer", status="skipped", note=why)
    path = Path(tempfile.mkstemp(suffix=".egr")[1])
    try:
        ecl_peer.write_graph(graph, path)

        def call():
            r = ecl_peer.run(args.ecl_binary, path, timeout=max(60.0, 20 * args.long_run))
            return r["seconds"], r
        times, results, warm = timed_runs(call, args.repeat, args.long_run)
    except Exception as exc:  # a failing peer is reported, the suite goes on
        return dict(kind="peer", status="error", note=f"{type(exc).__name__}: {exc}")
    finally:
        path.unlink()
    cards = sorted({r["cardinality"] for r in results})
    return dict(kind="peer", status="ok", times=times, seconds=statistics.median(times),
                warmup_timed=warm, cardinality=results[median_index(times)]["cardinality"],
                all_cardinalities=cards, invalid="")


def gpu_breakdown(s: dict) -> dict:
    """on-GPU seconds (transpose + init + solve) and the estimated launch share."""
    on_gpu = s.get("seconds_transpose", 0) + s["seconds_init"] + s["seconds_solve"]
    per_launch = s.get("seconds_per_launch", 0)
    share = s["kernel_launches"] * per_launch / on_gpu if on_gpu > 0 and per_launch else None
    return dict(on_gpu=on_gpu, launch_share=share)


def _stats_dict(stats) -> dict:
    return {k: (float(v) if isinstance(v, float) else int(v)) for k, v in vars(stats).items()}


def _check(entry: dict) -> None:
    """Set 'check' per method: ok / WRONG, against SciPy or the largest valid matching."""
    methods = entry["methods"]
    sc = methods["scipy"]
    if sc["status"] == "ok":
        ref, source = sc["cardinality"], "scipy"
    else:
        valid = [m["cardinality"] for k, m in methods.items()
                 if k != "scipy" and m["status"] == "ok" and not m["invalid"]]
        ref, source = (max(valid) if valid else None), "largest valid matching (no SciPy)"
    entry["reference_cardinality"], entry["reference_source"] = ref, source
    for label, m in methods.items():
        if label == "scipy" or m["status"] != "ok":
            continue
        wrong = [f"invalid: {m['invalid']}"] if m["invalid"] else []
        if ref is not None and m["all_cardinalities"] != [ref]:
            wrong.append(f"cardinality {m['all_cardinalities']} != {ref}")
        m["check"] = "ok" if not wrong else "WRONG: " + "; ".join(wrong)


def _fmt_cell(m: dict) -> str:
    if m["status"] != "ok":
        return f"{m['status']} ({m.get('note', '')})"
    extra = ""
    if "check" in m:
        extra = f"  {m['check']}"
    if m.get("kind") == "auto":
        extra += f"  [ran {m['ran_method']} on {m['ran_device']}]"
    runs = len(m["times"])
    if m.get("ran_device", "cpu").startswith("cuda"):
        st = m["stats"]
        g = gpu_breakdown(st)
        extra += (f"\n{'':18}ms: transfer {1e3 * st['seconds_transfer']:.2f} transpose "
                  f"{1e3 * st.get('seconds_transpose', 0):.2f} init {1e3 * st['seconds_init']:.2f}"
                  f" solve {1e3 * st['seconds_solve']:.2f} setup "
                  f"{1e3 * st.get('seconds_setup', 0):.2f} on-GPU {1e3 * g['on_gpu']:.2f}; "
                  f"launches {st['kernel_launches']} (share {_f(g['launch_share'], '.1%')})")
    return f"{m['seconds']:.4f} s (median of {runs}) matched {m['cardinality']}{extra}"


# ----------------------------------------------------------------------------
# Machine facts
# ----------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_sha(args) -> str:
    if args.git_sha:
        return args.git_sha
    if os.environ.get("MATCHFLOW_GIT_SHA"):
        return os.environ["MATCHFLOW_GIT_SHA"]
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=here, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git; pass --git-sha or set MATCHFLOW_GIT_SHA)"


def machine_info(args) -> dict:
    cfg = _device.config()
    return dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        host=platform.node(),
        cpu=cpu_model(),
        cpu_count=os.cpu_count(),
        cpu_affinity=len(os.sched_getaffinity(0)),
        omp_num_threads=os.environ.get("OMP_NUM_THREADS"),
        gpus=[d.get("name", "?") for d in cfg.get("devices", [])],
        matchflow_config=cfg,
        versions=dict(python=platform.python_version(), numpy=np.__version__,
                      scipy=scipy.__version__, matchflow=matchflow.__version__),
        git_sha=git_sha(args),
        command=" ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        cwd=os.getcwd(),
    )


# ----------------------------------------------------------------------------
# Summaries, tables, profile
# ----------------------------------------------------------------------------

def labels_of(results) -> list[str]:
    seen = []
    for e in results["graphs"]:
        for k in e["methods"]:
            if k not in seen:
                seen.append(k)
    return seen


def _secs(m) -> float | None:
    return m["seconds"] if m and m.get("status") == "ok" else None


def best_cpu_seconds(entry) -> float | None:
    t = [_secs(m) for m in entry["methods"].values() if m.get("kind") == "cpu"]
    t = [x for x in t if x is not None]
    return min(t) if t else None


def _scipy_at_least(entry, results) -> float | None:
    """SciPy's seconds, or, where it timed out, the timeout: a lower bound."""
    m = entry["methods"].get("scipy") or {}
    if m.get("status") == "timeout":
        return m.get("limit", results.get("settings", {}).get("scipy_timeout"))
    return _secs(m)


def _on_gpu_seconds(m) -> float | None:
    """Compute time with the graph already on the GPU (median run), else None."""
    if not m or m.get("status") != "ok" or not m.get("ran_device", "cpu").startswith("cuda"):
        return None
    return gpu_breakdown(m["stats"])["on_gpu"] or None


def _start_and_solve_seconds(m) -> float | None:
    """The on-GPU time less the transpose (median run): what ECL-MM times, whose input
    file already holds both directions of every edge."""
    t = _on_gpu_seconds(m)
    return t - m["stats"].get("seconds_transpose", 0) if t else None


def geomeans(results) -> dict:
    """Per label, geometric means of speedups over the graphs where both ran:
    vs SciPy; vs SciPy counting its timeouts at the limit (a lower bound:
    it took longer); vs the best CPU method; and, for GPU runs, the same
    two with the on-GPU time instead of the whole call."""
    out = {}
    for label in labels_of(results):
        ratios = {k: [] for k in ("scipy", "scipy_lower", "cpu", "gpu_scipy", "gpu_cpu", "ecl",
                                  "gpu_ecl", "solve_ecl")}
        for e in results["graphs"]:
            m = e["methods"].get(label)
            t, t_gpu = _secs(m), _on_gpu_seconds(m)
            ts, ts_low, tc = _secs(e["methods"].get("scipy")), _scipy_at_least(e, results), \
                best_cpu_seconds(e)
            te = _secs(e["methods"].get("ecl-mm")) if label != "ecl-mm" else None
            for key, num, den in (("scipy", ts, t), ("scipy_lower", ts_low, t), ("cpu", tc, t),
                                  ("gpu_scipy", ts, t_gpu), ("gpu_cpu", tc, t_gpu),
                                  ("ecl", te, t), ("gpu_ecl", te, t_gpu),
                                  ("solve_ecl", te, _start_and_solve_seconds(m))):
                if num is not None and den and label != "scipy":
                    ratios[key].append(num / den)
        out[label] = dict(
            speedup_vs_scipy=_gmean(ratios["scipy"]), n_vs_scipy=len(ratios["scipy"]),
            speedup_vs_scipy_lower=_gmean(ratios["scipy_lower"]),
            n_vs_scipy_lower=len(ratios["scipy_lower"]),
            speedup_vs_best_cpu=_gmean(ratios["cpu"]), n_vs_best_cpu=len(ratios["cpu"]),
            on_gpu_vs_scipy=_gmean(ratios["gpu_scipy"]),
            on_gpu_vs_best_cpu=_gmean(ratios["gpu_cpu"]), n_on_gpu=len(ratios["gpu_cpu"]),
            whole_vs_ecl=_gmean(ratios["ecl"]), on_gpu_vs_ecl=_gmean(ratios["gpu_ecl"]),
            start_solve_vs_ecl=_gmean(ratios["solve_ecl"]), n_vs_ecl=len(ratios["gpu_ecl"]))
    return out


def _gmean(x) -> float | None:
    x = [v for v in x if v > 0]
    return float(math.exp(sum(math.log(v) for v in x) / len(x))) if x else None


def profile_ratios(results) -> dict[str, list[float]]:
    """Per label, t / t_best per graph (inf where it did not finish), paper 000 Fig. 3."""
    labels = labels_of(results)
    ratios = {k: [] for k in labels}
    for e in results["graphs"]:
        t = {k: _secs(e["methods"].get(k)) for k in labels}
        finite = [v for v in t.values() if v is not None and v > 0]
        if not finite:
            continue
        best = min(finite)
        for k in labels:
            wrong = e["methods"].get(k, {}).get("check", "ok") != "ok"
            ratios[k].append(math.inf if t[k] is None or wrong else max(t[k], 1e-12) / best)
    return ratios


def draw_profile(ratios: dict[str, list[float]], path: Path, title: str, item: str) -> bool:
    """Draw a performance profile (Dolan and More): for each label, the
    fraction of items (graphs, instances) whose time is within x of the
    fastest on that item; an infinite ratio (failed, wrong) never counts.
    False when matplotlib is not importable here."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    finite = [r for v in ratios.values() for r in v if math.isfinite(r)]
    xmax = max(2.0, max(finite) * 1.1) if finite else 2.0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, r in ratios.items():
        if not r:
            continue
        xs = np.sort(np.asarray(r))
        grid = np.concatenate([[1.0], xs[np.isfinite(xs)], [xmax]])
        ys = [np.count_nonzero(xs <= g) / len(xs) for g in grid]
        ax.step(grid, ys, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlim(1.0, xmax)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"x: time relative to the fastest on each {item}")
    ax.set_ylabel(f"fraction of {item}s within x of the fastest")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def device_label(machine: dict) -> str:
    """The GPUs a run used, else its CPU (for plot titles)."""
    return ", ".join(machine["gpus"]) or machine["cpu"]


def plot_profile(results, path: Path) -> str:
    title = (f"Maximum matching, {len(results['graphs'])} graphs "
             f"({device_label(results['machine'])})")
    if not draw_profile(profile_ratios(results), path, title, "graph"):
        return "matplotlib is not importable here: profile.png not written " \
               "(run `bench_matching.py --replot results.json` where it is)"
    return f"![performance profile]({path.name})"


def _f(x, spec=".4f") -> str:
    return "-" if x is None else format(x, spec)


def header_lines(title: str, results) -> list[str]:
    """A results file's title and what it was run on, with, by what command."""
    mach = results["machine"]
    config = mach.get("matchflow_config", {})
    return [
        f"# {title}",
        "",
        f"- date: {mach['date']}, host: {mach['host']}",
        f"- CPU: {mach['cpu']} ({mach['cpu_affinity']} usable of {mach.get('cpu_count', '?')} "
        f"logical CPUs; OMP_NUM_THREADS={mach['omp_num_threads']})",
        f"- GPU: {', '.join(mach['gpus']) or 'none usable'}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in mach["versions"].items())
        + f"; CUDA compiled: {config.get('cuda_compiled')} "
        f"(arch {config.get('cuda_architectures') or '-'})",
        f"- git: {mach['git_sha']}",
        f"- command: `{mach['command']}`",
        f"- settings: {json.dumps(results['settings'])}",
        f"- stopped early: {results['stopped_early']}" if results.get("stopped_early") else "",
        "",
    ]


def markdown(results, plot_note: str) -> str:
    labels = labels_of(results)
    lines = header_lines("Maximum matching benchmark", results) + [
        "Seconds: median of the timed runs (wall time of the public call).  "
        "In parentheses: speedup vs SciPy (t_scipy / t_method; > 1 is faster).  "
        "`!` marks a wrong answer; `timeout`/`skipped`: SciPy not finished/not run.",
        "",
        "## Seconds per method",
        "",
        "| graph | n_rows | n_cols | nnz | matched | " + " | ".join(labels) + " |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(labels),
    ]
    for e in results["graphs"]:
        ts = _secs(e["methods"].get("scipy"))
        cells = []
        for k in labels:
            m = e["methods"].get(k)
            if m is None:
                cells.append("")
            elif m["status"] != "ok":
                cells.append(m["status"])
            else:
                c = f"{m['seconds']:.4g}"
                if k != "scipy" and ts:
                    c += f" ({ts / m['seconds']:.3g}x)"
                if m.get("check", "ok") != "ok":
                    c += " !"
                cells.append(c)
        lines.append(f"| {e['graph']} | {e['n_rows']} | {e['n_cols']} | {e['nnz']} | "
                     f"{_f(e['reference_cardinality'], 'd')} | " + " | ".join(cells) + " |")
    gm = results["summary"]["geomean"]
    lines += ["", "## Geometric means of speedups", "",
              "Whole call, over the graphs where both ran; `>=`: SciPy's timeouts counted at "
              "the timeout (a lower bound: it took longer).  on-GPU: the GPU method's compute "
              "time with the graph already on the device, against the others' whole call "
              "(vs SciPy: over the graphs of `vs SciPy`).  start + solve: the on-GPU time "
              "less the transpose, as ECL-MM times itself (its input holds both directions "
              "of every edge, built outside its time).",
              "",
              "| method | vs SciPy | graphs | vs SciPy, >= | graphs | vs best CPU method | "
              "graphs | on-GPU vs SciPy | on-GPU vs best CPU | graphs | whole vs ECL-MM | "
              "on-GPU vs ECL-MM | start + solve vs ECL-MM | graphs |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in labels:
        g = gm[k]
        lines.append(f"| {k} | {_f(g['speedup_vs_scipy'], '.3g')} | {g['n_vs_scipy']} | "
                     f"{_f(g.get('speedup_vs_scipy_lower'), '.3g')} | "
                     f"{g.get('n_vs_scipy_lower', '-')} | "
                     f"{_f(g['speedup_vs_best_cpu'], '.3g')} | {g['n_vs_best_cpu']} | "
                     f"{_f(g.get('on_gpu_vs_scipy'), '.3g')} | "
                     f"{_f(g.get('on_gpu_vs_best_cpu'), '.3g')} | {g.get('n_on_gpu', '-')} | "
                     f"{_f(g.get('whole_vs_ecl'), '.3g')} | {_f(g.get('on_gpu_vs_ecl'), '.3g')} | "
                     f"{_f(g.get('start_solve_vs_ecl'), '.3g')} | {g.get('n_vs_ecl', '-')} |")
    gpu = [(e, k, m) for e in results["graphs"] for k, m in e["methods"].items()
           if m.get("status") == "ok" and m.get("ran_device", "cpu").startswith("cuda")]
    if gpu:
        lines += ["", "## GPU runs: statistics of the median run", "",
                  "Milliseconds.  on-GPU = transpose + init + solve: the compute with the "
                  "graph already on the GPU (transpose and init run on the device unless "
                  "init is Karp-Sipser).  setup: device selection, allocations, CUDA graph "
                  "build.  launch share = kernel_launches x the measured cost of one empty "
                  "launch (launch_us) / on-GPU time: an estimate of the time launches cost.",
                  "",
                  "| graph | method | total | transfer | transpose | init | solve | setup | "
                  "on-GPU | launches | launch_us | launch share | iterations | "
                  "global_relabels |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for e, k, m in gpu:
            s = m["stats"]
            g = gpu_breakdown(s)
            lines.append(f"| {e['graph']} | {k} | {1e3 * s['seconds_total']:.2f} | "
                         f"{1e3 * s['seconds_transfer']:.2f} | "
                         f"{1e3 * s.get('seconds_transpose', 0):.2f} | "
                         f"{1e3 * s['seconds_init']:.2f} | {1e3 * s['seconds_solve']:.2f} | "
                         f"{1e3 * s.get('seconds_setup', 0):.2f} | {1e3 * g['on_gpu']:.2f} | "
                         f"{s['kernel_launches']} | {1e6 * s.get('seconds_per_launch', 0):.2f} | "
                         f"{_f(g['launch_share'], '.1%')} | "
                         f"{s['iterations']} | {s['global_relabels']} |")
    wrong = [(e["graph"], k, m["check"]) for e in results["graphs"]
             for k, m in e["methods"].items() if m.get("check", "ok") != "ok"]
    lines += ["", "## Checks", ""]
    if wrong:
        lines += [f"- WRONG: {g} / {k}: {c}" for g, k, c in wrong]
    else:
        lines.append("Every matchflow answer was a valid matching of the reference "
                     "cardinality (SciPy's, or the largest valid one where SciPy did not run).")
    ratios = profile_ratios(results)
    lines += ["", "## Performance profile", "",
              "Fraction of graphs on which each method is within x of the fastest "
              "(not finished = never).", "",
              "| method | x=1 | 1.5 | 2 | 4 | 10 |", "|---|---:|---:|---:|---:|---:|"]
    for k, r in ratios.items():
        if r:
            fr = [sum(v <= x * (1 + 1e-9) for v in r) / len(r) for x in (1, 1.5, 2, 4, 10)]
            lines.append(f"| {k} | " + " | ".join(f"{v:.2f}" for v in fr) + " |")
    lines += ["", plot_note, ""]
    return "\n".join(lines)


def write_outputs(results, out: Path) -> None:
    results["summary"] = dict(geomean=geomeans(results))
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=_json_default))
    tmp.replace(out / "results.json")
    note = results.get("plot_note", "(profile.png is drawn at the end of the run)")
    (out / "results.md").write_text(markdown(results, note))


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    raise TypeError(type(x).__name__)


def finish(results, out: Path) -> None:
    results["plot_note"] = plot_profile(results, out / "profile.png")
    write_outputs(results, out)


# ----------------------------------------------------------------------------

def warm_up(solvers) -> None:
    """One untimed call per solver (CUDA context, OpenMP thread pool)."""
    g = generators.uniform_random(4096, degree=4.0, seed=123)
    on_gpu = in_gpu_memory(g) if any(s.get("gpu_memory") for s in solvers) else None
    for s in solvers:
        try:
            run_matchflow(g, s, on_gpu)
        except Exception as exc:
            print(f"[warm-up] {s['label']}: {type(exc).__name__}: {exc}", flush=True)


def doc_parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser for a benchmark script: the description is the first
    paragraph of its docstring, the epilog (shown verbatim) the rest."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog=doc.split("\n\n", 1)[1])


def over_budget(args, start: float) -> bool:
    """True once --time-budget seconds have passed since `start` (never without one)."""
    return args.time_budget is not None and time.perf_counter() - start > args.time_budget


def stop_if_over_budget(args, start: float, results: dict, before: str) -> bool:
    """over_budget, and when it is, the note of where the suite stopped (in
    results["stopped_early"] and printed)."""
    if not over_budget(args, start):
        return False
    results["stopped_early"] = f"--time-budget {args.time_budget:g} s reached before {before}"
    print(f"[stop] {results['stopped_early']}", flush=True)
    return True


def timed_build(build):
    """(what build() returns, its seconds)."""
    t0 = time.perf_counter()
    built = build()
    return built, time.perf_counter() - t0


def report_end(results, items: str, stem: Path) -> int:
    """Say what was written (stem.md, stem.json) and how many answers were
    wrong over results[items]; the exit status (1 when any was)."""
    wrong = sum(m.get("check", "ok") != "ok" for e in results[items]
                for m in e["methods"].values())
    print(f"wrote {stem}.md, {stem.name}.json ({len(results[items])} {items}, "
          f"{results['total_seconds']:.0f} s); {results['plot_note']}")
    print(f"{wrong} wrong answers" if wrong else "all answers checked ok")
    return 1 if wrong else 0


def parse_args(argv=None):
    p = doc_parser(__doc__)
    p.add_argument("--out", default="benchmarks/results/latest",
                   help="output directory (default %(default)s)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes (2^10, 2^12), every family: checks the harness in < 1 min")
    p.add_argument("--families", nargs="*", choices=ALL_FAMILIES, default=None,
                   help=f"default: {' '.join(DEFAULT_FAMILIES)}; --quick adds star path blocks; "
                        "none (just --families) with --matrix: only the files")
    p.add_argument("--log2", nargs="+", type=int, default=None,
                   help="log2 of the number of rows, one or more (default 18 20)")
    p.add_argument("--matrix", nargs="*", default=[],
                   help="Matrix Market files (.mtx / .mtx.gz) to add to the suite")
    p.add_argument("--no-rcp", action="store_true",
                   help="do not add the randomly permuted (RCP) copy of each graph")
    p.add_argument("--methods", nargs="+", default=None,
                   help="run only these labels or method names (e.g. pr pdbfs/t1 gpu-pr auto)")
    p.add_argument("--no-scipy", action="store_true", help="never run SciPy")
    p.add_argument("--gpu-env", action="append", default=[], metavar="NAME=VALUE",
                   help="also run each GPU method with this environment variable set, "
                        "labelled METHOD[VALUE]: a same-run A/B of a knob the core reads")
    p.add_argument("--gpu-memory", action="store_true",
                   help="also run each GPU method and auto on the graph in GPU memory (CuPy), "
                        "labelled METHOD/gpu-mem")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per method (median)")
    p.add_argument("--long-run", type=float, default=10.0,
                   help="seconds; a run longer than this is not repeated (default %(default)s)")
    p.add_argument("--scipy-max-n", type=int, default=None,
                   help="skip SciPy on graphs with more rows or columns than this")
    p.add_argument("--scipy-timeout", type=float, default=None,
                   help="seconds per SciPy run; runs SciPy in a forked child killed after it")
    p.add_argument("--threads", type=int, default=None,
                   help="'all threads' count for CPU methods (default: usable CPUs)")
    p.add_argument("--ecl", type=Path, default=ecl_peer.DEFAULT_ROOT,
                   help="an ECL-MM checkout: its column where a GPU is usable (skipped if absent)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--degree", type=float, default=3.0, help="uniform: edges per row")
    p.add_argument("--degree-powerlaw", type=float, default=4.0,
                   help="powerlaw: edges per row")
    p.add_argument("--edge-factor", type=int, nargs="+", default=[16], dest="edge_factors",
                   help="rmat: edges per vertex, one graph per value")
    p.add_argument("--rgg-degree", type=float, default=8.0, help="rgg: average degree")
    p.add_argument("--grid-delete", type=float, default=0.1, help="grid: edge deletion prob.")
    p.add_argument("--layered-levels", type=int, default=16,
                   help="layered (gh-26147): ladder depth; SciPy's cost per copy ~ 2^levels")
    p.add_argument("--delaunay-max-log2", type=int, default=20,
                   help="skip delaunay above 2^this points (Qhull is slow; default %(default)s)")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds; start no new graph after this (results so far are kept)")
    p.add_argument("--git-sha", default=None, help="record this SHA (when there is no .git)")
    p.add_argument("--replot", metavar="RESULTS_JSON", default=None,
                   help="only redraw results.md and profile.png from an existing results.json")
    args = p.parse_args(argv)
    if args.quick:
        args.log2 = args.log2 or [10, 12]
        args.families = list(ALL_FAMILIES) if args.families is None else args.families
        args.layered_levels = min(args.layered_levels, 10)
        args.long_run = min(args.long_run, 2.0)
    args.log2 = args.log2 or [18, 20]
    args.families = list(DEFAULT_FAMILIES) if args.families is None else args.families
    args.edge_factor = args.edge_factors[0]  # family_builder's rmat, for one graph
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.replot:
        path = Path(args.replot)
        results = json.loads(path.read_text())
        finish(results, path.parent)
        print(f"rewrote {path.parent / 'results.md'}: {results['plot_note']}")
        return 0
    out = Path(args.out)
    solvers = solver_list(args)
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()
                if k not in ("out", "replot")}
    args.ecl_binary = ecl_peer.build(args.ecl) if _device.cuda_available() else None
    results = dict(machine=machine_info(args), settings=settings,
                   solvers=[s["label"] for s in solvers], graphs=[])
    print(f"matchflow {matchflow.__version__}, scipy {scipy.__version__}; "
          f"CPU: {results['machine']['cpu']}; GPU: {results['machine']['gpus'] or 'none'}",
          flush=True)
    print(f"methods: scipy, {'ecl-mm, ' if args.ecl_binary else ''}"
          f"{', '.join(results['solvers'])}", flush=True)
    warm_up(solvers)
    start = time.perf_counter()
    for name, build in suite(args):
        if stop_if_over_budget(args, start, results, name):
            break
        graph, gen = timed_build(build)
        results["graphs"].append(bench_graph(name, graph, gen, solvers, args))
        write_outputs(results, out)           # partial results survive a kill
        if not args.no_rcp:
            if over_budget(args, start):
                continue
            graph, gen = timed_build(
                lambda g=graph: generators.random_permutation(g, seed=args.seed + 1))
            results["graphs"].append(bench_graph(name + "-rcp", graph, gen, solvers, args))
            write_outputs(results, out)
        del graph
    results["total_seconds"] = time.perf_counter() - start
    finish(results, out)
    return report_end(results, "graphs", out / "results")


if __name__ == "__main__":
    sys.exit(main())

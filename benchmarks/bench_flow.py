#!/usr/bin/env python
"""Maximum flow benchmark: paper 002's inputs, matchflow vs SciPy, OR-Tools, igraph.

Suite (all seeded, from `matchflow.generators.flow`):

  acyclic       complete DAGs ac_nN                       (paper 002, Table I)
  genrmf-long   GENRMF, a:b = 1:8                         (Table I)
  genrmf-wide   GENRMF, a:b = 1:1                         (Table I)
  washlong      Washington RLG, r:c = 1:2                 (Table I)
  washwide      Washington RLG, r:c = 1:1                 (Table I)
  grid          4-connected grid (2d-2e20.sym)            (Table II), 5 random s-t pairs
  rmat          R-MAT made undirected (rmat22.sym)        (Table II), 5 s-t pairs by degree
  delaunay      Delaunay triangulation (delaunay_nXX)     (Table II), 5 s-t pairs by degree
  road          grid with 35% of edges deleted, largest component (USA-road-d stand-in)
  matching      maximum matching as a unit-capacity flow: uniform random 2^s + 2^s, 3 arcs/row
  segmentation  image-segmentation grids (Boykov-Jolly terminals), 4-connected
  segmentation8     the same, 8-connected
  segmentation3d    volume segmentation, 6-connected voxels
  segmentation3d26  the same, 26-connected

Sizes go from 10^6 to about 10^7 arcs by default (--quick: a few thousand,
for a smoke test; --max-arcs skips the larger ones before they are built).

Columns:
  scipy    `scipy.sparse.csgraph.maximum_flow(method="dinic")` in a forked child
           killed after --scipy-timeout s; skipped where a capacity or the
           source's total capacity exceeds int32 (SciPy casts to int32 and
           wraps silently).  Given an int32 copy made before timing.
  ortools  `ortools.graph.python.max_flow.SimpleMaxFlow` (when installed)
  igraph   `igraph.Graph.maxflow_value` (when installed)
  pymaxflow  PyMaxflow's `Graph[int].maxflow()` (Boykov-Kolmogorov, when
           installed): arcs out of the source and into the sink as its
           terminal capacities, the rest as its edges.
  hi_pr, syncpar  pbbs-maxflow's HI-PR and synchronous parallel push-relabel
           (--peer-threads OpenMP threads), when its sources are in --pbbs: built
           there, run as programs on the instance in their format; their time is
           their maximum-preflow phase, as they report it (benchmarks/pbbs_peers.py).
  pr, ppr and bk (all threads), bk/t1 (one thread), gpu-pr (when a GPU is usable), auto:
           `matchflow.solve_flow(graph, s, t, method=, device=, return_flow=)`.
OR-Tools and igraph run in forked children too (same timeout; a peer that times
out is skipped on the larger sizes of that family); their time is
the solve alone, their graph construction is reported separately ("build").
matchflow's time is the whole call (validation, conversion, copies); for
gpu-pr the on-GPU time (stats.seconds_phase1 + seconds_phase2) is given too.
Every value is checked against SciPy's (else OR-Tools', igraph's, pr's):
a differing one is marked WRONG, as is a returned flow that breaks a
capacity or conservation, or a returned cut (source_side) that does not
separate the terminals or whose capacity is not the value (checked with
--value-only too).  Median of --repeat runs after one warm-up.

Writes flow.md, flow.json and flow-profile.png (when matplotlib is
importable) into --out; each states commit, machine, versions and the
command line.

    python benchmarks/bench_flow.py --quick --out /tmp/flow-quick
    python benchmarks/bench_flow.py --out DIR --time-budget 300 --families genrmf-long washlong
"""
from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow as scipy_maximum_flow

import matchflow
from matchflow import _device
from matchflow.generators import flow as gen

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pbbs_peers  # noqa: E402
from bench_matching import (  # noqa: E402
    _die_with_parent,
    _f,
    _gmean,
    _json_default,
    device_label,
    doc_parser,
    draw_profile,
    machine_info,
    header_lines,
    over_budget,
    stop_if_over_budget,
    timed_build,
    report_end,
    timed_runs,
)

INT32_MAX = np.iinfo(np.int32).max
PEERS = ("scipy", "ortools", "igraph", "pymaxflow", "hi_pr", "syncpar")
CPU_PEERS = PEERS[1:]  # the fastest correct of these is the "fastest CPU peer"
PREFLOW_COLUMNS = ("pr", "ppr")  # their preflow is shown beside the whole call (_preflow_secs)

# family -> (builder(size, seed) -> FlowInstance | list, default sizes, --quick sizes)
FAMILIES = {
    "acyclic": (lambda s, seed: gen.acyclic_dense(s, seed=seed), [1000, 2000, 4000], [60]),
    "genrmf-long": (lambda s, seed: gen.genrmf_long(s, seed=seed), [32, 48, 64], [4]),
    "genrmf-wide": (lambda s, seed: gen.genrmf_wide(s, seed=seed), [64, 96, 128], [8]),
    "washlong": (lambda s, seed: gen.washington_rlg_long(s, seed=seed), [512, 896, 1280], [16]),
    "washwide": (lambda s, seed: gen.washington_rlg_wide(s, seed=seed), [1024, 1536, 2048], [20]),
    "grid": (lambda s, seed: gen.grid_flow(s, s, seed=seed), [1024, 2048], [24]),
    "rmat": (lambda s, seed: gen.rmat_flow(s, edge_factor=8, seed=seed), [18, 20, 21], [9]),
    "delaunay": (lambda s, seed: gen.delaunay_flow(s, seed=seed), [1 << 20], [600]),
    "road": (lambda s, seed: gen.road_flow(s, p_delete=0.35, seed=seed), [1024, 2048], [30]),
    "matching": (lambda s, seed: gen.matching_flow(gen.matching.uniform_random(1 << s, degree=3,
                                                                           seed=seed)),
                 [20, 21], [10]),
    "segmentation": (lambda s, seed: gen.segmentation_grid(s, s, seed=seed), [1024, 2048], [32]),
    "segmentation8": (lambda s, seed: gen.segmentation_grid(s, s, seed=seed, connectivity=8),
                      [724, 1024], [32]),
    "segmentation3d": (lambda s, seed: gen.segmentation_volume(s, s, s, seed=seed), [96, 128],
                       [10]),
    "segmentation3d26": (lambda s, seed: gen.segmentation_volume(s, s, s, seed=seed,
                                                                 connectivity=26), [64, 80], [8]),
}
SEGMENTATION = ("segmentation", "segmentation8", "segmentation3d", "segmentation3d26")

# Arcs per size, to skip (--max-arcs) before building (Table I formulas; others estimated).
ARCS = {
    "acyclic": lambda s: s * (s - 1) // 2,
    "genrmf-long": lambda a: 4 * a * (a - 1) * 8 * a + a * a * (8 * a - 1),
    "genrmf-wide": lambda a: 4 * a * (a - 1) * a + a * a * (a - 1),
    "washlong": lambda r: 3 * r * (2 * r - 1) + 2 * r,
    "washwide": lambda r: 3 * r * (r - 1) + 2 * r,
    "grid": lambda s: 4 * s * s,
    "rmat": lambda s: 16 << s,
    "delaunay": lambda s: 6 * s,
    "road": lambda s: 3 * s * s,
    "matching": lambda s: 5 << s,
    "segmentation": lambda s: 5 * s * s,
    "segmentation8": lambda s: 9 * s * s,
    "segmentation3d": lambda s: 7 * s ** 3,
    "segmentation3d26": lambda s: 27 * s ** 3,
}


def suite(args):
    """Yield (family, size, builder)."""
    for family in args.families:
        build, sizes, quick = FAMILIES[family]
        for size in (quick if args.quick else sizes):
            if args.max_arcs and ARCS[family](size) > args.max_arcs:
                print(f"[skip] {family} {size}: about {ARCS[family](size):.3g} arcs > --max-arcs",
                      flush=True)
                continue
            yield family, size, (lambda b=build, s=size: b(s, args.seed))


# ----------------------------------------------------------------------------
# Peers, each in a forked child (SciPy, OR-Tools and igraph hold the GIL and
# cannot be interrupted in-process).
# ----------------------------------------------------------------------------

def _optional(name):
    try:
        if name == "ortools":
            from ortools.graph.python import max_flow
            return max_flow
        if name == "igraph":
            import igraph
            return igraph
        if name == "pymaxflow":
            import maxflow
            return maxflow
    except ImportError:
        return None
    return None


ORTOOLS, IGRAPH, PYMAXFLOW = _optional("ortools"), _optional("igraph"), _optional("pymaxflow")


def _tails(g: sp.csr_array) -> np.ndarray:
    return np.repeat(np.arange(g.shape[0], dtype=np.int32), np.diff(g.indptr))


def scipy_runner(inst):
    g32 = sp.csr_array((inst.graph.data.astype(np.int32), inst.graph.indices, inst.graph.indptr),
                       shape=inst.graph.shape)

    def run():
        t0 = time.perf_counter()
        v = scipy_maximum_flow(g32, inst.source, inst.sink, method="dinic").flow_value
        return dict(seconds=time.perf_counter() - t0, value=int(v))
    return run


def ortools_runner(inst):
    g = inst.graph

    def run():
        t0 = time.perf_counter()
        mf = ORTOOLS.SimpleMaxFlow()
        mf.add_arcs_with_capacity(_tails(g), g.indices, g.data)
        t1 = time.perf_counter()
        status = mf.solve(inst.source, inst.sink)
        t2 = time.perf_counter()
        if status != mf.OPTIMAL:
            raise RuntimeError(f"SimpleMaxFlow status {status}")
        return dict(seconds=t2 - t1, build=t1 - t0, value=int(mf.optimal_flow()))
    return run


def igraph_runner(inst):
    g = inst.graph

    def run():
        t0 = time.perf_counter()
        ig = IGRAPH.Graph(n=g.shape[0], edges=np.column_stack([_tails(g), g.indices]).tolist(),
                          directed=True)
        caps = g.data.tolist()
        t1 = time.perf_counter()
        v = ig.maxflow_value(inst.source, inst.sink, capacity=caps)
        t2 = time.perf_counter()
        return dict(seconds=t2 - t1, build=t1 - t0, value=int(round(v)))
    return run


def pymaxflow_runner(inst):
    g, s, t = inst.graph, inst.source, inst.sink
    n = g.shape[0]
    tails, heads, caps = _tails(g), g.indices, g.data.astype(np.int64)

    def run():
        t0 = time.perf_counter()
        graph = PYMAXFLOW.Graph[int]()
        graph.add_nodes(n)
        inner = (tails != s) & (tails != t) & (heads != s) & (heads != t) & (tails != heads)
        graph.add_edges(tails[inner], heads[inner], caps[inner], np.zeros(int(inner.sum())))
        out_s = (tails == s) & (heads != s) & (heads != t)
        into_t = (heads == t) & (tails != s) & (tails != t)
        graph.add_grid_tedges(np.arange(n), np.bincount(heads[out_s], caps[out_s], n),
                              np.bincount(tails[into_t], caps[into_t], n))
        direct = int(caps[(tails == s) & (heads == t)].sum())
        t1 = time.perf_counter()
        v = graph.maxflow() + direct
        t2 = time.perf_counter()
        return dict(seconds=t2 - t1, build=t1 - t0, value=int(v))
    return run


def _child(run, repeat, long_run, conn):
    _die_with_parent()
    try:
        first = run()
        conn.send(("warmup", first))
        if first["seconds"] <= long_run:
            for _ in range(repeat):
                r = run()
                conn.send(("run", r))
                if r["seconds"] > long_run:
                    break
        conn.send(("done", None))
    except BaseException as exc:  # report anything to the parent, never hang it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_forked(run, args) -> dict:
    """Warm-up plus up to --repeat runs of `run` in a child killed after --scipy-timeout."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(run, args.repeat, args.long_run, send))
    child.start()
    send.close()
    warm, runs, note = None, [], None
    try:
        while True:
            if not recv.poll(args.scipy_timeout):
                note = f"timeout: a run took > {args.scipy_timeout:g} s"
                break
            tag, payload = recv.recv()
            if tag == "error":
                return dict(status="error", note=payload)
            if tag == "done":
                break
            if tag == "warmup":
                warm = payload
            else:
                runs.append(payload)
    except EOFError:
        return dict(status="error", note=f"child died (exit code {child.exitcode})")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    if not runs and warm is None:
        return dict(status="timeout", limit=args.scipy_timeout, note=note)
    runs = runs or [warm]
    times = [r["seconds"] for r in runs]
    mid = runs[int(np.argsort(times)[(len(times) - 1) // 2])]
    out = dict(status="ok", times=times, seconds=statistics.median(times), value=mid["value"],
               all_values=sorted({r["value"] for r in runs}), warmup_timed=warm is runs[0])
    if "build" in mid:
        out["build"] = mid["build"]
    if note:
        out["note"] = note
    return out


def scipy_fits(inst) -> str:
    """'' when SciPy's int32 arithmetic holds this instance, else why not."""
    g = inst.graph
    if g.nnz and int(g.data.max()) > INT32_MAX:
        return "a capacity exceeds int32"
    if int(g[[inst.source], :].sum()) > INT32_MAX:
        return "source capacity exceeds int32"
    return ""


# ----------------------------------------------------------------------------
# matchflow
# ----------------------------------------------------------------------------

def solve_flow():
    fn = getattr(matchflow, "solve_flow", None)
    if fn is None:
        raise SystemExit("bench_flow.py: matchflow.solve_flow is missing from this build "
                         f"(matchflow {matchflow.__version__} at {matchflow.__file__}); "
                         "the max-flow API must be installed first")
    return fn


def solver_list(args) -> list[dict]:
    solvers = [dict(label="pr", method="pr", device="cpu", kind="cpu"),
               dict(label="ppr", method="ppr", device="cpu", kind="cpu"),
               # A graph-cut method: on other families its search trees make it very
               # slow (4.5 s on ac_n4000, minutes on genrmf-long; auto never picks it there).
               dict(label="bk", method="bk", device="cpu", kind="cpu",
                    families=set(SEGMENTATION)),
               # One thread: PyMaxflow's own conditions (the one-thread target).
               dict(label="bk/t1", method="bk", device="cpu", kind="cpu", threads=1,
                    families=set(SEGMENTATION))]
    if _device.cuda_available():
        solvers.append(dict(label="gpu-pr", method="gpu-pr", device="cuda", kind="gpu"))
    solvers.append(dict(label="auto", method="auto", device="auto", kind="auto"))
    if args.methods:
        solvers = [s for s in solvers if s["label"] in args.methods]
    return solvers


def _as_dict(stats) -> dict:
    if stats is None:
        return {}
    if isinstance(stats, dict):
        d = stats
    elif dataclasses.is_dataclass(stats):
        d = dataclasses.asdict(stats)
    else:
        d = {k: v for k, v in vars(stats).items() if not k.startswith("_")}
    return {k: (float(v) if isinstance(v, (float, np.floating)) else
                int(v) if isinstance(v, (int, np.integer)) else str(v)) for k, v in d.items()}


def cut_problem(inst, r) -> str:
    """'' when the returned cut (if any) separates the terminals and its capacity is the
    flow value: the value's certificate, checked in --value-only runs too."""
    side = getattr(r, "source_side", None)
    if side is None:
        return ""
    g = inst.graph
    side = np.asarray(side, dtype=bool)
    if not side[inst.source] or side[inst.sink]:
        return "cut does not separate the terminals"
    crossing = side[_tails(g)] & ~side[g.indices]
    if int(g.data[crossing].astype(np.int64).sum()) != int(r.flow_value):
        return "cut capacity differs from the value"
    return ""


def flow_problem(inst, r) -> str:
    """'' when the returned flow (if any) respects capacities and conservation, and the
    cut (if any) certifies the value."""
    cut = cut_problem(inst, r)
    if cut:
        return cut
    g = inst.graph
    arc = getattr(r, "arc_flow", None)
    if arc is not None and np.shape(arc) == (g.nnz,):
        arc = np.asarray(arc, dtype=np.int64)
        if np.any(arc < 0) or np.any(arc > g.data):
            return "arc flow outside [0, capacity]"
        n = g.shape[0]
        net = (np.bincount(_tails(g), weights=arc, minlength=n)
               - np.bincount(g.indices, weights=arc, minlength=n))
    else:
        f = getattr(r, "flow", None)
        if f is None or not sp.issparse(f):
            return ""
        f = sp.csr_array(f)
        if (f - g).max() > 0:
            return "flow above capacity"
        # SciPy's convention is antisymmetric (net flow); a per-arc one is not
        net = (np.asarray(f.sum(axis=1)).ravel() if f.min() < 0 else
               np.asarray(f.sum(axis=1)).ravel() - np.asarray(f.sum(axis=0)).ravel())
    want = np.zeros_like(net)
    want[inst.source], want[inst.sink] = r.flow_value, -r.flow_value
    return "" if np.array_equal(net, want) else "flow not conserved or not the value"


def int32_graph(g):
    """`g` with int32 capacities (SciPy's type) where every one fits, else as
    it is (the generators' int64): --int32."""
    if g.nnz == 0 or g.data.max() <= np.iinfo(np.int32).max:
        return g.astype(np.int32)
    return g


def run_matchflow(inst, solver, args) -> dict:
    fn = solve_flow()
    graph = int32_graph(inst.graph) if args.int32 else inst.graph

    def call():
        t0 = time.perf_counter()
        r = fn(graph, inst.source, inst.sink, method=solver["method"],
               device=solver["device"], threads=solver.get("threads"),
               return_flow=not args.value_only)
        return time.perf_counter() - t0, r

    def keep(r) -> dict:  # the check, not the arrays (timed_runs)
        return dict(value=int(r.flow_value), problem=flow_problem(inst, r),
                    method=str(getattr(r, "method", solver["method"])),
                    device=str(getattr(r, "device", solver["device"])),
                    stats=_as_dict(getattr(r, "stats", None)))
    try:
        times, results, warm = timed_runs(call, args.repeat, args.long_run, keep=keep)
    except Exception as exc:  # a failing method is reported, the suite goes on
        return dict(kind=solver["kind"], status="error", note=f"{type(exc).__name__}: {exc}")
    mid = results[int(np.argsort(times)[(len(times) - 1) // 2])]
    stats = mid["stats"]
    out = dict(kind=solver["kind"], status="ok", times=times, seconds=statistics.median(times),
               warmup_timed=warm, value=mid["value"],
               all_values=sorted({r["value"] for r in results}),
               ran_method=mid["method"], ran_device=mid["device"], stats=stats,
               flow_problem="; ".join(sorted({r["problem"] for r in results} - {""})))
    if out["ran_device"].startswith("cuda"):
        out["on_gpu"] = stats.get("seconds_phase1", 0.0) + stats.get("seconds_phase2", 0.0)
    return out


# ----------------------------------------------------------------------------
# One instance
# ----------------------------------------------------------------------------

def bench_instance(family, inst, build_seconds, solvers, args, timed_out: set) -> dict:
    """Runs every method on one instance; `timed_out` holds (family, peer) pairs that
    already timed out on a smaller size of the family: skipped here (saves device time)."""
    g = inst.graph
    print(f"== {inst.name}: n {g.shape[0]}, arcs {g.nnz}, s {inst.source}, t {inst.sink}",
          flush=True)
    e = dict(family=family, name=inst.name, n=int(g.shape[0]), arcs=int(g.nnz),
             source=inst.source, sink=inst.sink, build_seconds=build_seconds, methods={})
    peers = [("scipy", scipy_runner, not args.no_scipy),
             ("ortools", ortools_runner, ORTOOLS is not None),
             ("igraph", igraph_runner, IGRAPH is not None and g.nnz <= args.igraph_max_arcs),
             ("pymaxflow", pymaxflow_runner, PYMAXFLOW is not None)]
    graph_file = Path(tempfile.mkstemp(suffix=".flow")[1]) if args.pbbs_binaries else None
    if graph_file:
        pbbs_peers.write_graph(inst, graph_file)
    for label, binary in args.pbbs_binaries.items():
        peers.append((label, lambda _, b=binary, lab=label: pbbs_peers.runner(
            lab, b, graph_file, args.peer_threads, args.scipy_timeout), True))
    for label, runner, wanted in peers:
        if not wanted:
            continue
        why = scipy_fits(inst) if label == "scipy" else ""
        if (family, label) in timed_out:
            why = "timed out on a smaller size"
        m = dict(status="skipped", note=why) if why else run_forked(runner(inst), args)
        if m["status"] == "timeout":
            timed_out.add((family, label))
        e["methods"][label] = dict(kind="peer", **m)
        print(f"   {label:<8} {_cell_text(e['methods'][label])}", flush=True)
    if graph_file:
        graph_file.unlink()
    for s in solvers:
        if family not in s.get("families", (family,)):
            e["methods"][s["label"]] = dict(kind=s["kind"], status="skipped",
                                            note=f"run on {', '.join(sorted(s['families']))} only")
            continue
        e["methods"][s["label"]] = run_matchflow(inst, s, args)
        print(f"   {s['label']:<8} {_cell_text(e['methods'][s['label']])}", flush=True)
    check(e)
    for label, m in e["methods"].items():
        if m.get("check", "ok") != "ok":
            print(f"   {label}: {m['check']}", flush=True)
    return e


def check(e: dict) -> None:
    """Set e['value'] (the reference) and each method's 'check'."""
    methods = e["methods"]
    ref, source = None, None
    for label in PEERS + ("pr",):
        m = methods.get(label)
        if m and m["status"] == "ok":
            ref, source = m["value"], label
            break
    e["value"], e["value_source"] = ref, source
    for m in methods.values():
        if m["status"] != "ok":
            continue
        wrong = []
        if ref is not None and m["all_values"] != [ref]:
            wrong.append(f"value {m['all_values']} != {source} {ref}")
        if m.get("flow_problem"):
            wrong.append(m["flow_problem"])
        m["check"] = "ok" if not wrong else "WRONG: " + "; ".join(wrong)


def _cell_text(m: dict) -> str:
    if m["status"] != "ok":
        return f"{m['status']} ({m.get('note', '')})"
    text = f"{m['seconds']:.4f} s (median of {len(m['times'])}) value {m['value']}"
    if "build" in m:
        text += f" [build {m['build']:.3f} s]"
    if "on_gpu" in m:
        text += f" [on-GPU {m['on_gpu']:.4f} s]"
    if m.get("kind") == "auto":
        text += f" [ran {m['ran_method']} on {m['ran_device']}]"
    return text


# ----------------------------------------------------------------------------
# Summaries, tables, plot
# ----------------------------------------------------------------------------

def _secs(e, label, on_gpu=False):
    m = e["methods"].get(label)
    if not m or m["status"] != "ok" or m.get("check", "ok") != "ok":
        return None
    return m.get("on_gpu") if on_gpu else m["seconds"]


def _search_secs(e, label):
    """A matchflow method's phase 1 (the maximum preflow and the cut, its search) in the
    median run: what PyMaxflow's `maxflow()` measures (its trees hold the cut)."""
    m = e["methods"].get(label)
    if _secs(e, label) is None:
        return None
    return m.get("stats", {}).get("seconds_phase1")


def _preflow_secs(e, label):
    """A CPU method's maximum preflow in the median run (phase 1 less the cut's own search):
    what pbbs's hi_pr and syncPar time ("PBBS-time"; they compute no cut)."""
    search = _search_secs(e, label)
    if search is None:
        return None
    return search - e["methods"][label]["stats"].get("seconds_cut", 0.0)


def _scipy_at_least(e):
    """SciPy's seconds, or its time limit where it timed out: a lower bound."""
    m = e["methods"].get("scipy")
    if m and m["status"] == "timeout":
        return m["limit"]
    return _secs(e, "scipy")


def _fastest(e, labels):
    """The least time of `labels` on instance e (right answers only), or None."""
    t = [x for x in (_secs(e, k) for k in labels) if x]
    return min(t) if t else None


def _best_peer(e):
    return _fastest(e, ("ortools", "igraph", "pymaxflow"))


def _fastest_cpu_peer(e):
    return _fastest(e, CPU_PEERS)


def ratios(results) -> dict:
    """Geometric means of speedups (> 1: the first one is faster)."""
    rows = results["instances"]
    pairs = {
        "gpu-pr vs pr": lambda e: (_secs(e, "pr"), _secs(e, "gpu-pr")),
        "gpu-pr vs best of OR-Tools/igraph": lambda e: (_best_peer(e), _secs(e, "gpu-pr")),
        "gpu-pr vs scipy": lambda e: (_secs(e, "scipy"), _secs(e, "gpu-pr")),
        "gpu-pr vs scipy, a timeout as its limit (at least)": lambda e: (
            _scipy_at_least(e), _secs(e, "gpu-pr")),
        "gpu-pr on-GPU vs pr": lambda e: (_secs(e, "pr"), _secs(e, "gpu-pr", True)),
        "gpu-pr on-GPU vs best of OR-Tools/igraph": lambda e: (_best_peer(e),
                                                               _secs(e, "gpu-pr", True)),
        "gpu-pr vs fastest CPU peer": lambda e: (_fastest_cpu_peer(e), _secs(e, "gpu-pr")),
        "bk vs pymaxflow": lambda e: (_secs(e, "pymaxflow"), _secs(e, "bk")),
        "bk search vs pymaxflow solve": lambda e: (_secs(e, "pymaxflow"),
                                                   _search_secs(e, "bk")),
        "bk/t1 search vs pymaxflow solve": lambda e: (_secs(e, "pymaxflow"),
                                                      _search_secs(e, "bk/t1")),
        "bk vs bk/t1 (search)": lambda e: (_search_secs(e, "bk/t1"), _search_secs(e, "bk")),
        "pr vs hi_pr": lambda e: (_secs(e, "hi_pr"), _secs(e, "pr")),
        "pr preflow vs hi_pr": lambda e: (_secs(e, "hi_pr"), _preflow_secs(e, "pr")),
        "ppr vs syncpar": lambda e: (_secs(e, "syncpar"), _secs(e, "ppr")),
        "ppr preflow vs syncpar": lambda e: (_secs(e, "syncpar"), _preflow_secs(e, "ppr")),
        "ppr vs pr (>= 10^6 arcs)": lambda e: ((_secs(e, "pr"), _secs(e, "ppr"))
                                               if e["arcs"] >= 10**6 else (None, None)),
        "pr vs best of OR-Tools/igraph": lambda e: (_best_peer(e), _secs(e, "pr")),
        "pr vs scipy": lambda e: (_secs(e, "scipy"), _secs(e, "pr")),
        "auto vs best of OR-Tools/igraph": lambda e: (_best_peer(e), _secs(e, "auto")),
    }
    out = {}
    for key, get in pairs.items():
        r = [num / den for num, den in map(get, rows) if num and den]
        out[key] = dict(geomean=_gmean(r), instances=len(r))
    return out


def labels_of(results) -> list[str]:
    seen = []
    for e in results["instances"]:
        seen += [k for k in e["methods"] if k not in seen]
    return seen


def markdown(results, plot_note: str) -> str:
    labels = labels_of(results)
    lines = header_lines("Maximum flow benchmark", results) + [
        "Seconds, median of the timed runs.  scipy/ortools/igraph: the solve "
        "(their graph construction not counted; ortools/igraph's in the JSON as `build`); "
        "matchflow: the whole `solve_flow` call.  gpu-pr: [on-GPU seconds = phase 1 + phase 2].  "
        "pr, ppr: [the maximum preflow: phase 1 less the cut's own search], what hi_pr's and "
        "syncPar's own times measure.  "
        "value: the reference, SciPy's unless another is named (else OR-Tools', igraph's, pr's).  "
        "WRONG: a value differing from the reference, a returned flow breaking capacity "
        "or conservation, or a returned cut whose capacity is not the value.",
        "",
        "| instance | n | arcs | value | " + " | ".join(labels) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(labels),
    ]
    for e in results["instances"]:
        cells = []
        for k in labels:
            m = e["methods"].get(k)
            if m is None:
                cells.append("")
            elif m["status"] != "ok":
                cells.append(m["status"] + (f" ({m['note']})" if m["status"] == "skipped"
                                            and m.get("note") else ""))
            else:
                c = f"{m['seconds']:.4g}"
                if "on_gpu" in m:
                    c += f" [{m['on_gpu']:.4g}]"
                elif k in PREFLOW_COLUMNS:
                    c += f" [{_preflow_secs(e, k):.4g}]"
                if m["kind"] == "auto":
                    c += f" {m['ran_method']}@{m['ran_device']}"
                if m.get("check", "ok") != "ok":
                    c += " WRONG"
                cells.append(c)
        value = _f(e["value"], "d") + ("" if e["value_source"] in (None, "scipy")
                                       else f" ({e['value_source']})")
        lines.append(f"| {e['name']} | {e['n']} | {e['arcs']} | {value} | "
                     + " | ".join(cells) + " |")
    lines += ["", "## Geometric means of speedups", "",
              "t_other / t_method over the instances where both ran and were right "
              "(> 1: the method is faster); \"a timeout as its limit\" also counts the instances "
              "where SciPy ran past --scipy-timeout, at that limit, so its geomean is a lower "
              "bound (instances skipped after a smaller size timed out are not counted).", "",
              "| ratio | geomean | instances |", "|---|---:|---:|"]
    for key, r in results["summary"]["ratios"].items():
        lines.append(f"| {key} | {_f(r['geomean'], '.3g')} | {r['instances']} |")
    wrong = [(e["name"], k, m["check"]) for e in results["instances"]
             for k, m in e["methods"].items() if m.get("check", "ok") != "ok"]
    lines += ["", "## Checks", ""]
    lines += ([f"- {n} / {k}: {c}" for n, k, c in wrong] if wrong else
              ["Every value equals the reference; every returned flow respects capacities "
               "and conservation; every returned cut separates the terminals and its capacity "
               "is the value."])
    lines += ["", plot_note, ""]
    return "\n".join(lines)


def plot(results, path: Path) -> str:
    """Performance profile: fraction of instances within x of the fastest."""
    labels = labels_of(results)
    prof = {k: [] for k in labels}
    for e in results["instances"]:
        t = {k: _secs(e, k) for k in labels}
        best = min([v for v in t.values() if v], default=None)
        if best:
            for k in labels:
                prof[k].append(t[k] / best if t[k] else math.inf)
    title = (f"Maximum flow, {len(results['instances'])} instances "
             f"({device_label(results['machine'])})")
    if not draw_profile(prof, path, title, "instance"):
        return "matplotlib is not importable here: no flow-profile.png"
    return f"![performance profile]({path.name})"


def write(results, out: Path, final: bool = False) -> None:
    results["summary"] = dict(ratios=ratios(results))
    out.mkdir(parents=True, exist_ok=True)
    if final:
        results["plot_note"] = plot(results, out / "flow-profile.png")
    tmp = out / "flow.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=_json_default))
    tmp.replace(out / "flow.json")
    (out / "flow.md").write_text(markdown(results, results.get(
        "plot_note", "(flow-profile.png is drawn at the end of the run)")))


def parse_args(argv=None):
    p = doc_parser(__doc__)
    p.add_argument("--out", default="benchmarks/results/flow-latest")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    p.add_argument("--max-arcs", type=float, default=None,
                   help="skip sizes with more (estimated) arcs than this")
    p.add_argument("--methods", nargs="+", default=None,
                   help="matchflow labels to run (pr ppr gpu-pr auto); default all usable")
    p.add_argument("--pairs", type=int, default=5,
                   help="s-t pairs run per undirected graph (of the 5 generated)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--long-run", type=float, default=10.0,
                   help="seconds; a run longer than this is not repeated")
    p.add_argument("--scipy-timeout", type=float, default=30.0,
                   help="seconds per run of SciPy, OR-Tools or igraph (forked child); one that "
                        "times out is skipped on the family's larger sizes")
    p.add_argument("--no-scipy", action="store_true")
    p.add_argument("--igraph-max-arcs", type=float, default=2e7,
                   help="skip igraph above this many arcs (its Python-list build is slow)")
    p.add_argument("--value-only", action="store_true",
                   help="return_flow=False (phase 1 only) for matchflow")
    p.add_argument("--int32", action="store_true",
                   help="hand matchflow int32 capacities (SciPy's type) where they fit")
    p.add_argument("--pbbs", type=Path, default=pbbs_peers.DEFAULT_ROOT,
                   help="a pbbs-maxflow checkout (hi_pr and syncpar columns; skipped when absent)")
    p.add_argument("--peer-threads", type=int, default=os.cpu_count(),
                   help="OpenMP threads of syncpar")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds; start no new instance after this")
    p.add_argument("--git-sha", default=None)
    p.add_argument("--merge", nargs="+", metavar="FLOW_JSON", default=None,
                   help="run nothing: merge these flow.json parts into --out")
    return p.parse_args(argv)


def merge(paths: list[str], out: Path) -> int:
    """One result set from runs of parts of the suite (e.g. one per device
    call, at one commit on one machine): instances concatenated, every
    part's command kept."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    shas = {part["machine"].get("git_sha") for part in parts}
    if len(shas) != 1:
        raise SystemExit(f"--merge: the parts come from different commits {sorted(shas)}")
    results = dict(parts[0])
    results["instances"] = [e for part in parts for e in part["instances"]]
    results["solvers"] = list(dict.fromkeys(s for part in parts for s in part["solvers"]))
    results["machine"] = dict(parts[0]["machine"], command=" ; ".join(
        part["machine"]["command"] for part in parts))
    results["settings"] = [part["settings"] for part in parts]
    results["total_seconds"] = sum(part.get("total_seconds", 0) for part in parts)
    stopped = [part["stopped_early"] for part in parts if "stopped_early" in part]
    results.pop("stopped_early", None)
    if stopped:
        results["stopped_early"] = "; ".join(stopped)
    write(results, out, final=True)
    print(f"merged {len(parts)} parts, {len(results['instances'])} instances into {out}")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.merge:
        return merge(args.merge, Path(args.out))
    solve_flow()                              # fail early, with a clear message
    out = Path(args.out)
    solvers = solver_list(args)
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()
                if k != "out"}
    args.pbbs_binaries = pbbs_peers.build(args.pbbs)
    mach = machine_info(args)
    mach["versions"].update(
        ortools=getattr(sys.modules.get("ortools"), "__version__", None) if ORTOOLS else None,
        igraph=getattr(IGRAPH, "__version__", None) if IGRAPH else None)
    results = dict(machine=mach, settings=settings, instances=[],
                   solvers=list(PEERS) + [s["label"] for s in solvers])
    mach["versions"]["pbbs-maxflow"] = str(args.pbbs) if args.pbbs_binaries else None
    print(f"methods: {', '.join(results['solvers'])}; ortools "
          f"{mach['versions']['ortools'] or 'absent'}, igraph "
          f"{mach['versions']['igraph'] or 'absent'}, pbbs-maxflow "
          f"{'built' if args.pbbs_binaries else 'absent'}", flush=True)
    warm = gen.genrmf(4, 4, seed=1)                # CUDA context, OpenMP pool
    for s in solvers:
        try:
            solve_flow()(warm.graph, warm.source, warm.sink, method=s["method"],
                         device=s["device"])
        except Exception as exc:
            print(f"[warm-up] {s['label']}: {type(exc).__name__}: {exc}", flush=True)
    start, timed_out = time.perf_counter(), set()
    for family, size, build in suite(args):
        if stop_if_over_budget(args, start, results, f"{family} {size}"):
            break
        built, build_seconds = timed_build(build)
        for inst in (built if isinstance(built, list) else [built])[:args.pairs]:
            if over_budget(args, start):
                break
            results["instances"].append(bench_instance(family, inst, build_seconds, solvers,
                                                       args, timed_out))
            write(results, out)                       # partial results survive a kill
        del built
    results["total_seconds"] = time.perf_counter() - start
    write(results, out, final=True)
    return report_end(results, "instances", out / "flow")


if __name__ == "__main__":
    sys.exit(main())

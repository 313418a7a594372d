"""Per-phase seconds of solve_flow ("pr", "ppr@THREADS", "gpu-pr") on the flow suite's generators,
and the solve alone of SciPy and OR-Tools (when importable) and pbbs-maxflow's preflow (hi_pr,
syncpar@THREADS: pbbs_peers.py, the sources in --pbbs), min of --repeat runs after a warm-up.

    python benchmarks/flow_phases.py --instances ac gl seg del rmat grid road \\
        --methods pr ppr@16 ortools --repeat 2

A method may name a global-relabel frequency factor (solve_flow's relabel_freq) after a slash,
e.g. gpu-pr/0.004 or ppr/2@16.  --int32: the capacities as SciPy holds them, int32, where
every one fits (the generators' are int64).  --env NAME=V1,V2,...: each matchflow method once
per value of the environment variable NAME (a same-call A/B of a tuning knob that the core
reads from the environment; values are split at commas, so a value cannot hold one); several
--env: once per combination; the host scratch cache is emptied before each (so a knob that
changes how blocks are allocated gets fresh ones).  "max" is the slowest timed run.

Instances (sizes of benchmarks/results/h100/flow-suite.md, one s-t pair each): ac / ac2 =
complete DAG n 1000 / 2000, gl / gw = GENRMF long a32 / wide a64, wl / ww = Washington RLG
long 512 x 1024 / wide 1024 x 1024, seg / seg2k = segmentation 1024^2 / 2048^2, seg8 = its
8-connected form at 724^2, seg3d = segmentation volume 96^3, del = Delaunay 2^20, rmat =
R-MAT 18, grid = 1024^2 grid, road = 1024^2 road-like, grid2k / road2k / ww2k / gl64 = the
suite's largest grid, road-like, Washington wide and GENRMF long graphs, match20 = matching
as flow on 2^20 + 2^20 vertices; rmat18e8 / rmat20e8 / seg8k / seg3d128 = bench_flow.py's
R-MAT 18 and 20 (first pair), 8-connected 1024^2 and 128^3 segmentations; grids / roads /
dels = the flow suite's two s-t pairs of the 1024^2 grid, road-like graph and Delaunay 2^20.
"other" is the whole call minus setup and both phases: validation, transfers, the flow matrix,
Python.
"""
import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pbbs_peers
import scipy.sparse as sp
from bench_flow import int32_graph

import matchflow
from matchflow.generators import flow as gen

INSTANCES = {
    "ac": lambda: [gen.acyclic_dense(1000, seed=0)],
    "ac2": lambda: [gen.acyclic_dense(2000, seed=0)],
    "gl": lambda: [gen.genrmf_long(32, seed=0)],
    "gw": lambda: [gen.genrmf_wide(64, seed=0)],
    "wl": lambda: [gen.washington_rlg_long(512, seed=0)],
    "ww": lambda: [gen.washington_rlg_wide(1024, seed=0)],
    "seg": lambda: [gen.segmentation_grid(1024, 1024, seed=0)],
    "seg2k": lambda: [gen.segmentation_grid(2048, 2048, seed=0)],
    "seg8": lambda: [gen.segmentation_grid(724, 724, seed=0, connectivity=8)],
    "seg3d": lambda: [gen.segmentation_volume(96, 96, 96, seed=0)],
    "del": lambda: gen.delaunay_flow(2**20, k=1, seed=0),
    "rmat": lambda: gen.rmat_flow(18, k=1, seed=0),
    "grid": lambda: gen.grid_flow(1024, 1024, k=1, seed=0),
    "grids": lambda: gen.grid_flow(1024, 1024, seed=0)[:2],
    "roads": lambda: gen.road_flow(1024, 1024, p_delete=0.35, seed=0)[:2],
    "dels": lambda: gen.delaunay_flow(2**20, seed=0)[:2],
    "road": lambda: gen.road_flow(1024, 1024, p_delete=0.35, k=1, seed=0),
    "grid2k": lambda: gen.grid_flow(2048, 2048, k=1, seed=0),
    "road2k": lambda: gen.road_flow(2048, 2048, p_delete=0.35, k=1, seed=0),
    "ww2k": lambda: [gen.washington_rlg_wide(2048, seed=0)],
    "gl64": lambda: [gen.genrmf_long(64, seed=0)],
    "match20": lambda: [gen.matching_flow(gen.matching.uniform_random(1 << 20, degree=3, seed=0))],
    # bench_flow.py's instances with --pairs 1 (its R-MAT edge factor is 8)
    "rmat18e8": lambda: gen.rmat_flow(18, edge_factor=8, seed=0)[:1],
    "rmat20e8": lambda: gen.rmat_flow(20, edge_factor=8, seed=0)[:1],
    "seg8k": lambda: [gen.segmentation_grid(1024, 1024, seed=0, connectivity=8)],
    "seg3d128": lambda: [gen.segmentation_volume(128, 128, 128, seed=0)],
}


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def pbbs_peer(method, inst, repeat, folder):
    """hi_pr or syncpar@THREADS (pbbs_peers.py; its own preflow time), min of `repeat` runs."""
    label, _, threads = method.partition("@")
    binary = pbbs_peers.build(Path(folder)).get(label)
    if binary is None:
        raise SystemExit(f"{label}: no pbbs-maxflow sources in {folder} (--pbbs)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.flow"
        pbbs_peers.write_graph(inst, path)
        run = pbbs_peers.runner(label, binary, path, int(threads or 1), timeout=60)
        runs = [run() for _ in range(repeat)]
    return min(r["seconds"] for r in runs), runs[0]["value"]


def peer(method, g, s, t, repeat):
    if method == "scipy":
        from scipy.sparse.csgraph import maximum_flow
        g32 = sp.csr_array((g.data.astype(np.int32), g.indices.astype(np.int32),
                            g.indptr.astype(np.int32)), shape=g.shape)
        return best(lambda: maximum_flow(g32, s, t).flow_value, repeat)
    from ortools.graph.python import max_flow
    coo = g.tocoo()

    def solve():
        mf = max_flow.SimpleMaxFlow()
        mf.add_arcs_with_capacity(coo.row.astype(np.int32), coo.col.astype(np.int32),
                                  coo.data.astype(np.int64))
        start = time.perf_counter()
        mf.solve(s, t)
        return mf.optimal_flow(), time.perf_counter() - start  # the solve alone

    runs = [solve() for _ in range(repeat + 1)][1:]
    return min(r[1] for r in runs), runs[0][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=list(INSTANCES))
    ap.add_argument("--methods", nargs="+", default=["pr", "ppr"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--value-only", action="store_true",
                    help="return_flow=False: phase 1 (value and cut) only")
    ap.add_argument("--pbbs", default=str(pbbs_peers.DEFAULT_ROOT),
                    help="pbbs-maxflow's sources, for the methods hi_pr and syncpar@THREADS")
    ap.add_argument("--int32", action="store_true",
                    help="hand matchflow the capacities as int32 (SciPy's type) where they fit")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=V1,V2",
                    help="run each matchflow method once per value of this variable; "
                         "given twice or more, once per combination")
    args = ap.parse_args()
    settings = [[]]
    for spec in args.env:
        name, _, values = spec.partition("=")
        settings = [done + [(name, v)] for done in settings for v in values.split(",")]
    print(f"# matchflow {matchflow.__version__} from {os.path.dirname(matchflow.__file__)}",
          flush=True)  # which build answered (gpu_run.sh's phases part alternates two)
    for key in args.instances:
        for inst in INSTANCES[key]():
            g, s, t = inst.graph, int(inst.source), int(inst.sink)
            g = int32_graph(g) if args.int32 else g
            for method in args.methods:
                head = f"{inst.name[:34]:34s} {g.nnz:9d} {method:8s}"
                if method.partition("@")[0] in pbbs_peers.CODES:
                    sec, value = pbbs_peer(method, inst, args.repeat, args.pbbs)
                    print(f"{head} total {sec:.4f} value {value}", flush=True)
                    continue
                if method in ("scipy", "ortools"):
                    sec, value = peer(method, g, s, t, args.repeat)
                    print(f"{head} total {sec:.4f} value {value}", flush=True)
                    continue
                for setting in settings:
                    os.environ.update(setting)
                    if args.env:  # each setting's blocks fresh, not another setting's
                        matchflow.free_host_cache()
                    label = "".join([head] + [f" {name}={value}" for name, value in setting])
                    print(f"{label} {phases(g, s, t, method, args.repeat, not args.value_only)}",
                          flush=True)


def phases(g, s, t, method, repeat, return_flow=True):
    name, _, threads = method.partition("@")
    name, _, freq = name.partition("/")
    runs = [matchflow.solve_flow(g, s, t, method=name,
                                 device="cuda" if name.startswith("gpu") else "cpu",
                                 threads=int(threads) if threads else None,
                                 relabel_freq=float(freq) if freq else None,
                                 return_flow=return_flow)
            for _ in range(repeat + 1)][1:]
    st = min((r.stats for r in runs), key=lambda x: x.seconds_total)
    totals = [r.stats.seconds_total for r in runs]
    other = st.seconds_total - st.seconds_setup - st.seconds_phase1 - st.seconds_phase2
    return (f"total {st.seconds_total:.4f} (median {statistics.median(totals):.4f} max "
            f"{max(totals):.4f}) setup {st.seconds_setup:.4f} transfer {st.seconds_transfer:.4f} "
            f"phase1 {st.seconds_phase1:.4f} phase2 {st.seconds_phase2:.4f} "
            f"other {other:.4f} value {runs[0].flow_value} pushes {st.pushes} "
            f"rounds {st.iterations} relabels {st.global_relabels} "
            f"in {st.seconds_global_relabel:.4f} s levels {st.bfs_levels} "
            f"cut {st.seconds_cut:.4f}")


if __name__ == "__main__":
    main()

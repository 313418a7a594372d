"""`matchflow bench SUITE [--quick]`: time every method this machine runs
against SciPy on generated instances of the papers' families, check every
answer against SciPy's, and write the results (JSON and a Markdown table,
with the device, the versions, the commit and the command) and, where
matplotlib is installed, the papers' figures: a performance profile and
speed-up bars.  The full benchmark harness with peers and large sizes is
`benchmarks/` in the source tree; this is the installed package's own."""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy
import scipy.sparse as sp

SUITES = ("matching", "assignment", "batched", "flow", "preprocess")


@dataclass
class Case:
    suite: str
    name: str
    reference: Callable[[], Any]                  # SciPy's answer
    runs: dict[str, Callable[..., Any]]           # label -> matchflow's answer (no arguments)


def _gpu() -> bool:
    from . import _device
    return _device.cuda_available()


def matching_cases(quick: bool) -> list[Case]:
    import scipy.sparse.csgraph as csgraph

    from . import generators
    from ._matching import CPU_METHODS, GPU_METHODS, maximum_matching
    n = 1 << (14 if quick else 18)
    graphs = {f"uniform 2^{n.bit_length() - 1}": generators.uniform_random(n, degree=3, seed=1),
              f"rmat {n.bit_length() - 3}": generators.rmat(n.bit_length() - 3, 8, seed=1)}
    methods = [(m, "cpu") for m in CPU_METHODS] + ([(m, "cuda") for m in GPU_METHODS]
                                                    if _gpu() else [])
    cases = []
    for name, g in graphs.items():
        def ref(g=g):
            return int(np.count_nonzero(csgraph.maximum_bipartite_matching(g) >= 0))
        runs = {f"{m}@{d}": (lambda g=g, m=m, d=d: maximum_matching(g, method=m, device=d)
                             .cardinality) for m, d in methods}
        cases.append(Case("matching", name, ref, runs))
    return cases


def assignment_cases(quick: bool) -> list[Case]:
    from scipy.optimize import linear_sum_assignment

    from . import _lsap
    cases = []
    for n in ((200, 400) if quick else (1000, 2000, 4000)):
        for spread in (1, 10):
            c = np.random.default_rng(n + spread).integers(0, spread * n, size=(n, n))

            def ref(c=c):
                r, k = linear_sum_assignment(c)
                return int(c[r, k].sum())

            def lsa(c=c):
                r, k = _lsap.linear_sum_assignment(c)
                return int(c[r, k].sum())
            runs = {"lsa-auto@cpu": lsa,
                    "omp-tree@cpu": lambda c=c: _lsap.solve_assignment(c, method="omp-tree").cost}
            if _gpu():
                runs["auto@cuda"] = lambda c=c: _lsap.solve_assignment(c, device="cuda").cost
            cases.append(Case("assignment", f"int [0, {spread}n] n={n}", ref, runs))
    return cases


def batched_cases(quick: bool) -> list[Case]:
    from scipy.optimize import linear_sum_assignment

    from ._batched import batch_linear_sum_assignment
    batch, n = (64, 32) if quick else (1024, 64)
    c = np.random.default_rng(5).random((batch, n, n))

    def ref():
        return float(sum(c[b][linear_sum_assignment(c[b])].sum() for b in range(batch)))

    def run(device):
        rows, cols = batch_linear_sum_assignment(c, device=device)
        return float(sum(c[b, rows[b], cols[b]].sum() for b in range(batch)))
    runs = {"auto@cpu": lambda: run("cpu")}
    if _gpu():
        runs["auto@cuda"] = lambda: run("cuda")
    return [Case("batched", f"{batch} x {n} x {n} float64", ref, runs)]


def flow_cases(quick: bool) -> list[Case]:
    from scipy.sparse.csgraph import maximum_flow

    from . import generators
    from ._flow import solve_flow
    side = 128 if quick else 512
    instances = [generators.segmentation_grid(side, side, seed=2),
                 generators.genrmf_wide(8 if quick else 16, seed=2),
                 generators.grid_flow(side, side, k=1, seed=2)[0]]
    methods = [("pr", "cpu"), ("ppr", "cpu")] + ([("gpu-pr", "cuda")] if _gpu() else [])
    cases = []
    for inst in instances:
        g = sp.csr_array(inst.graph, dtype=np.int32)

        def ref(g=g, inst=inst):
            return int(maximum_flow(g, inst.source, inst.sink).flow_value)
        runs = {f"{m}@{d}": (lambda inst=inst, m=m, d=d: int(solve_flow(
            inst.graph, inst.source, inst.sink, method=m, device=d, return_flow=False)
            .flow_value)) for m, d in methods}
        cases.append(Case("flow", inst.name, ref, runs))
    return cases


def preprocess_cases(quick: bool) -> list[Case]:
    from scipy.sparse.csgraph import structural_rank

    from . import generators
    from ._preprocess import dulmage_mendelsohn
    n = 1 << (14 if quick else 18)
    a = generators.uniform_random(n, degree=2.0, seed=3)
    runs = {"dmperm@cpu": lambda: dulmage_mendelsohn(a, device="cpu").structural_rank}
    if _gpu():
        runs["dmperm@cuda"] = lambda: dulmage_mendelsohn(a, device="cuda").structural_rank
    return [Case("preprocess", f"uniform 2^{n.bit_length() - 1}, 2 per row",
                 lambda: int(structural_rank(a)), runs)]


_MAKERS = {"matching": matching_cases, "assignment": assignment_cases,
           "batched": batched_cases, "flow": flow_cases, "preprocess": preprocess_cases}


def _timed(fn, repeat: int):
    times, answer = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        answer = fn()
        times.append(time.perf_counter() - t0)
    return answer, statistics.median(times)


def _progress(items, total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, total=total, unit="case", file=sys.stderr)


def _same(a, b) -> bool:
    return bool(np.isclose(a, b, rtol=1e-9)) if isinstance(a, float) else a == b


def run_cases(cases: list[Case], repeat: int) -> list[dict]:
    rows = []
    for case in _progress(cases, len(cases)):
        want, t_ref = _timed(case.reference, repeat)
        row = {"suite": case.suite, "case": case.name, "answer": want,
               "seconds": {"scipy": t_ref}, "ok": {}}
        for label, fn in case.runs.items():
            got, t = _timed(fn, repeat)
            row["seconds"][label] = t
            row["ok"][label] = _same(got, want)
        rows.append(row)
        if not sys.stderr.isatty():
            print(f"  {case.suite}: {case.name} done", file=sys.stderr)
    return rows


def _meta(args) -> dict:
    from . import __version__, _core, _device
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = os.environ.get("MATCHFLOW_GIT_SHA", "unknown")
    gpus = [_core.get_device_info(i)["name"] for i in range(_device.device_count())]
    return {"matchflow": __version__, "commit": commit, "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "cpu_cores": os.cpu_count(),
            "gpus": gpus, "command": "matchflow " + " ".join(args.argv)}


def write_results(out: Path, rows: list[dict], meta: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = ["# matchflow bench", "",
             f"matchflow {meta['matchflow']} ({meta['commit']}), Python {meta['python']}, "
             f"NumPy {meta['numpy']}, SciPy {meta['scipy']}; {meta['cpu_cores']} cores; GPUs: "
             f"{', '.join(meta['gpus']) or 'none'}", f"command: `{meta['command']}`", "",
             "Median seconds; speed-up against SciPy in brackets; WRONG where an answer "
             "differs from SciPy's.", ""]
    for suite in dict.fromkeys(r["suite"] for r in rows):
        part = [r for r in rows if r["suite"] == suite]
        labels = list(dict.fromkeys(k for r in part for k in r["seconds"]))
        lines += [f"## {suite}", "", "| case | " + " | ".join(labels) + " |",
                  "| --- |" + " ---: |" * len(labels)]
        for r in part:
            cells = []
            for k in labels:
                t = r["seconds"].get(k)
                if t is None:
                    cells.append("-")
                    continue
                speed = "" if k == "scipy" else f" ({r['seconds']['scipy'] / t:.1f}x)"
                bad = "" if r["ok"].get(k, True) else " WRONG"
                cells.append(f"{t:.4f}{speed}{bad}")
            lines.append(f"| {r['case']} | " + " | ".join(cells) + " |")
        lines.append("")
    (out / "results.md").write_text("\n".join(lines))


def figures(out: Path, rows: list[dict]) -> list[Path]:
    """A performance profile (fraction of cases each code solves within a
    factor tau of the fastest) and speed-up bars against SciPy; none without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    suites = list(dict.fromkeys(r["suite"] for r in rows))
    fig, axes = plt.subplots(1, len(suites), figsize=(3.2 * len(suites), 3.2), squeeze=False)
    taus = np.logspace(0, 2, 200)
    for ax, suite in zip(axes[0], suites):  # one profile per suite: its codes, its cases
        part = [r for r in rows if r["suite"] == suite]
        for k in dict.fromkeys(k for r in part for k in r["seconds"]):
            ratios = np.array([r["seconds"][k] / min(r["seconds"].values()) for r in part])
            ax.plot(taus, [np.mean(ratios <= t) for t in taus], label=k)
        ax.set_xscale("log")
        ax.set_title(suite, fontsize=9)
        ax.set_xlabel("tau (times the fastest)", fontsize=8)
        ax.legend(fontsize=6)
    axes[0][0].set_ylabel("fraction of cases")
    fig.tight_layout()
    profile = out / "profile.png"
    fig.savefig(profile, dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [f"{r['suite']}: {r['case']}" for r in rows]
    best = [max(r["seconds"]["scipy"] / t for k, t in r["seconds"].items() if k != "scipy")
            for r in rows]
    ax.barh(names, best)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("speed-up of the fastest matchflow method over SciPy")
    ax.tick_params(axis="y", labelsize=6)
    fig.tight_layout()
    bars = out / "speedup.png"
    fig.savefig(bars, dpi=120)
    plt.close(fig)
    return [profile, bars]


def run(args) -> int:
    suites = SUITES if args.suite == "all" else (args.suite,)
    repeat = args.repeat or (1 if args.quick else 3)
    cases = [c for s in suites for c in _MAKERS[s](args.quick)]
    rows = run_cases(cases, repeat)
    out = Path(args.out)
    write_results(out, rows, _meta(args))
    drawn = figures(out, rows)
    print((out / "results.md").read_text())
    print(f"written: {out / 'results.json'}, {out / 'results.md'}"
          + "".join(f", {p}" for p in drawn))
    wrong = sum(not ok for r in rows for ok in r["ok"].values())
    if wrong:
        print(f"{wrong} answers differ from SciPy's", file=sys.stderr)
    return 1 if wrong else 0


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="time every method against SciPy, write results",
                       description=__doc__)
    p.add_argument("suite", choices=SUITES + ("all",))
    p.add_argument("--quick", action="store_true", help="small instances: under a minute")
    p.add_argument("--repeat", type=int, help="runs per timing (default 3, --quick 1)")
    p.add_argument("--out", default="matchflow-bench", help="results folder")

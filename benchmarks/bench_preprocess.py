#!/usr/bin/env python
"""Benchmark: maximum transversal, Dulmage-Mendelsohn and block triangular form.

Times `matchflow.maximum_transversal`, `dulmage_mendelsohn` and
`block_triangular_form` on the matching suite (the generators and harness
of bench_matching.py) and on the largest matrices of the data folder, on
each requested device ("cpu", "cuda": the device of the maximum matching;
the decomposition itself always runs on the CPU).  BTF runs only where the
matrix is square and structurally nonsingular.  Every Dulmage-Mendelsohn
result is checked (permutations, structural rank equal across devices,
block upper triangular with the declared blocks).

Writes, under --out: results.json (machine, versions, git SHA, command,
per graph/device/function all run times and the DM phase seconds of the
median run) and results.md (tables, with the same header).  Timing: one
untimed warm-up, then up to --repeat timed runs, median reported; wall
clock around the public call (validation and conversion included).

Examples
--------
  python benchmarks/bench_preprocess.py --quick --out /tmp/pre-quick
  python benchmarks/bench_preprocess.py --log2 20 22 --devices cpu cuda \\
      --data ../shared/data --largest 6 --out benchmarks/results/h100/preprocess
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

import matchflow
from matchflow import _device

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_matching import (  # noqa: E402
    DEFAULT_FAMILIES,
    _f,
    doc_parser,
    family_builder,
    load_matrix,
    machine_info,
    median_index,
    timed_runs,
)

FUNCTIONS = ("maximum_transversal", "dulmage_mendelsohn", "block_triangular_form")


def data_matrices(root: Path | None, largest: int) -> list[tuple[str, Path]]:
    """The `largest` matrices of the data folder by stored entries (MANIFEST.json)."""
    if root is None or largest <= 0 or not (root / "MANIFEST.json").is_file():
        return []
    records = json.loads((root / "MANIFEST.json").read_text())
    records = [r for r in records if r["file"].endswith((".mtx", ".mtx.gz", ".txt.gz"))]
    records.sort(key=lambda r: -(r.get("nnz_expanded") or r.get("nnz_stored") or 0))
    return [(Path(r["file"]).name.split(".")[0], root / r["file"]) for r in records[:largest]]


def suite(args):
    """Yield (name, builder) pairs: generated families, then data matrices."""
    for family in args.families:
        for log2n in args.log2:
            entry = family_builder(family, log2n, args)
            if entry is not None:
                yield entry
    for name, path in data_matrices(Path(args.data) if args.data else None, args.largest):
        yield name, (lambda p=path: load_matrix(str(p)))


def check_dm(A, res) -> str:
    """'' when res is a valid block upper triangular DM form of A, else what is wrong."""
    m, n = A.shape
    if not (np.array_equal(np.sort(res.p), np.arange(m))
            and np.array_equal(np.sort(res.q), np.arange(n))):
        return "not permutations"
    B = A[res.p][:, res.q].tocoo()
    rows = np.searchsorted(res.r, B.row, side="right") - 1
    cols = np.searchsorted(res.s, B.col, side="right") - 1
    if np.any(rows > cols):
        return "not block upper triangular"
    return ""


def call(fn: str, A, device: str):
    f = getattr(matchflow, fn)
    t0 = time.perf_counter()
    out = f(A, device=device)
    return time.perf_counter() - t0, out


def bench_graph(name: str, A, gen_seconds: float, devices, args) -> dict:
    entry = dict(name=name, n_rows=A.shape[0], n_cols=A.shape[1], nnz=int(A.nnz),
                 gen_seconds=gen_seconds, runs={})
    for device in devices:
        for fn in FUNCTIONS:
            label = f"{fn}/{device}"
            if fn == "block_triangular_form" and not entry.get("nonsingular", False):
                entry["runs"][label] = dict(skipped="not square and structurally nonsingular")
                continue
            times, results, warm = timed_runs(lambda fn=fn, device=device: call(fn, A, device),
                                              args.repeat, args.long_run)
            k = median_index(times)
            run = dict(seconds=times[k], all_seconds=times, warmup_timed=warm)
            if fn != "maximum_transversal":
                res = results[k]
                run["stats"] = dict(res.stats)
                run["n_blocks"] = res.n_blocks
            if fn == "dulmage_mendelsohn":
                res = results[k]
                run["structural_rank"] = res.structural_rank
                run["check"] = check_dm(A, res) or "ok"
                entry.setdefault("structural_rank", res.structural_rank)
                if entry["structural_rank"] != res.structural_rank:
                    run["check"] = "structural rank differs across devices"
                entry["nonsingular"] = (A.shape[0] == A.shape[1] == res.structural_rank)
                entry["coarse"] = dict(rr=res.rr.tolist(), cc=res.cc.tolist())
            entry["runs"][label] = run
            print(f"  {label:34s} {run['seconds']:.4f} s {run.get('check', '')}", flush=True)
    return entry


def markdown(results) -> str:
    mach = results["machine"]
    lines = [
        "# Preprocessing: maximum transversal, Dulmage-Mendelsohn, block triangular form",
        "",
        "- suite: " + results["suite"],
        f"- commit: {mach['git_sha']}",
        f"- device: {mach['cpu']} ({mach['cpu_affinity']} cores); GPUs: "
        + (", ".join(mach["gpus"]) or "none"),
        "- versions: " + ", ".join(f"{k} {v}" for k, v in mach["versions"].items()),
        f"- command: `{mach['command']}`",
        f"- date: {mach['date']}",
        "",
        "Seconds, median of the timed runs, whole public call: MT maximum_transversal, "
        "DM dulmage_mendelsohn, BTF block_triangular_form (n/a: not square and "
        "structurally nonsingular).  DM phases: matching "
        "(on the device named), then on the CPU the coarse BFS, the square part's "
        "graph, its SCCs (with a GPU matching and a square part of at least "
        "GPU_SCC_MIN_VERTICES vertices: the pivot's component found on that GPU, "
        "contracted, then Tarjan; `pivot`: its size, - for Tarjan alone), the block "
        "ordering.",
        "",
    ]
    devices = results["devices"]
    head = ["graph", "rows", "cols", "nnz", "sprank", "blocks"]
    short = dict(maximum_transversal="MT", dulmage_mendelsohn="DM", block_triangular_form="BTF")
    head += [f"{short[fn]}/{d}" for d in devices for fn in FUNCTIONS]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in results["graphs"]:
        dm = g["runs"].get(f"dulmage_mendelsohn/{devices[0]}", {})
        row = [g["name"], str(g["n_rows"]), str(g["n_cols"]), str(g["nnz"]),
               str(g.get("structural_rank", "-")), str(dm.get("n_blocks", "-"))]
        for d in devices:
            for fn in FUNCTIONS:
                run = g["runs"].get(f"{fn}/{d}", {})
                cell = _f(run.get("seconds")) if "seconds" in run else "n/a"
                if run.get("check", "ok") != "ok":
                    cell += " WRONG"
                row.append(cell)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Dulmage-Mendelsohn phases (seconds, median run)", ""]
    phases = ["seconds_matching", "seconds_coarse", "seconds_graph", "seconds_scc",
              "seconds_fine", "seconds_total"]
    lines += ["| graph | device | method | " + " | ".join(p[8:] for p in phases)
              + " | pivot |", "|" + "---|" * (len(phases) + 4)]
    for g in results["graphs"]:
        for d in devices:
            st = g["runs"].get(f"dulmage_mendelsohn/{d}", {}).get("stats")
            if st:
                pivot = st.get("scc_pivot_size", -1)
                lines.append(f"| {g['name']} | {st['device']} | {st['method']} | "
                             + " | ".join(_f(st.get(p)) for p in phases)
                             + f" | {pivot if pivot >= 0 else '-'} |")
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    p = doc_parser(__doc__)
    p.add_argument("--out", default="benchmarks/results/latest-preprocess")
    p.add_argument("--quick", action="store_true", help="2^14 uniform and R-MAT only")
    p.add_argument("--families", nargs="*", default=None,
                   help=f"generated families (default {' '.join(DEFAULT_FAMILIES)})")
    p.add_argument("--log2", nargs="+", type=int, default=[20],
                   help="rows of the generated graphs, as powers of two")
    p.add_argument("--devices", nargs="+", default=None,
                   help="matching devices: cpu, cuda (default: both where available)")
    p.add_argument("--data", default=None, help="data folder with MANIFEST.json")
    p.add_argument("--largest", type=int, default=6, help="largest data matrices to run")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--long-run", type=float, default=10.0,
                   help="runs longer than this are not repeated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--degree", type=float, default=3.0)
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--rgg-degree", type=float, default=8.0)
    p.add_argument("--grid-delete", type=float, default=0.1)
    p.add_argument("--layered-levels", type=int, default=16)
    p.add_argument("--delaunay-max-log2", type=int, default=20)
    p.add_argument("--git-sha", default=None)
    args = p.parse_args(argv)
    if args.quick:
        args.families, args.log2, args.repeat = ["uniform", "rmat"], [14], 1
    if args.families is None:
        args.families = list(DEFAULT_FAMILIES)
    if args.devices is None:
        args.devices = ["cpu"] + (["cuda"] if _device.cuda_available() else [])
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    devices = [d for d in args.devices if d == "cpu" or _device.cuda_available()]
    for d in set(args.devices) - set(devices):
        print(f"[skip] device {d}: no usable CUDA device", flush=True)
    results = dict(
        suite=(f"families {' '.join(args.families)} at 2^{{{','.join(map(str, args.log2))}}} "
               f"rows; {args.largest} largest data matrices" if args.data else
               f"families {' '.join(args.families)} at 2^{{{','.join(map(str, args.log2))}}} rows"),
        machine=machine_info(args), devices=devices, graphs=[])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, build in suite(args):
        t0 = time.perf_counter()
        A = build()
        gen = time.perf_counter() - t0
        print(f"{name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} entries", flush=True)
        results["graphs"].append(bench_graph(name, A, gen, devices, args))
        (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "results.md").write_text(markdown(results))
    print(f"wrote {out / 'results.md'} and results.json")
    wrong = [g["name"] for g in results["graphs"]
             for r in g["runs"].values() if r.get("check", "ok") != "ok"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

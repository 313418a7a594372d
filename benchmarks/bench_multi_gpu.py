"""Multi-GPU assignment benchmark: one GPU against several (paper 001 §5).

Dense int32 costs uniform in [0, n] and [0, 10n], from host memory, through
`solve_assignment` (the whole call: upload, solve, answer back) with each
of --methods (paper 001's variants: "gpu-tree" splits the columns,
"gpu-classic" the rows) on one GPU and on every GPU (device=[...]),
alternating, median of --repeat; the answers' costs must agree.  Sizes that
do not fit one GPU run on the GPUs together only (--big).

    python benchmarks/bench_multi_gpu.py --out DIR [--sizes 20000 40000 80000]
        [--big 200000] [--repeat 3] [--ranges 1 10] [--processes 40000]
        [--methods gpu-tree gpu-classic] [--classic-max-n 40000]

Writes DIR/multi-gpu.json and DIR/multi-gpu.md (commit, devices, versions,
command).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import matchflow
from matchflow import _lsap_multi, solve_assignment


def random_costs(n: int, high: int, seed: int) -> np.ndarray:
    """n x n int32 uniform in [0, high], filled by row chunks on every core
    (NumPy's generators release the GIL for bulk fills)."""
    c = np.empty((n, n), dtype=np.int32)
    chunk = max(1, (1 << 26) // n)
    seeds = np.random.SeedSequence(seed).spawn((n + chunk - 1) // chunk)

    def fill(k):
        rng = np.random.default_rng(seeds[k])
        rows = min(chunk, n - k * chunk)
        c[k * chunk:(k + 1) * chunk] = rng.integers(0, high + 1, size=(rows, n), dtype=np.int32)
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(fill, range(len(seeds))))
    return c


def timed(c, device, method="gpu-tree"):
    t0 = time.perf_counter()
    if isinstance(device, list) and len(device) == 1:  # the split kernel with one part
        r = _lsap_multi.solve_host(c, False, method, [int(device[0][5:])], exact_ints=True)
    else:
        r = solve_assignment(c, method=method, device=device)
    return time.perf_counter() - t0, r


def commit() -> str:
    sha = os.environ.get("MATCHFLOW_GIT_SHA")
    if sha:
        return sha
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_case(n, factor, gpus, repeat, single: bool, rows: list, seed: int, diagnose=False,
             methods=("gpu-tree",)):
    high = factor * n
    t0 = time.perf_counter()
    c = random_costs(n, high, seed)
    print(f"n={n} [0, {factor}n]: generated in {time.perf_counter() - t0:.1f} s", flush=True)
    for method in methods:
        run_method(c, n, factor, gpus, repeat, single, rows, diagnose, method)
    del c


def run_method(c, n, factor, gpus, repeat, single, rows, diagnose, method):
    multi = [f"cuda:{g}" for g in gpus]
    variants = [("one", "cuda:0"), ("multi", multi)]
    if diagnose:  # the split kernel with one part, and two parts on one GPU
        variants += [("split1", ["cuda:0"]), ("split2x1", ["cuda:0", "cuda:0"])]
    if not single:
        variants = variants[1:2]
    runs = {label: [] for label, _ in variants}
    costs = set()
    for _ in range(repeat):
        for label, device in variants:
            whole, r = timed(c, device, method)
            st = r.stats
            runs[label].append((whole, st.seconds_solve, st.seconds_transfer))
            costs.add(r.cost)
            steps = max(st.search_steps, 1)
            print(f"  {method} {label:8s} whole {whole:7.3f} s  solve {st.seconds_solve:7.3f} s  "
                  f"upload+back {st.seconds_transfer:6.3f} s  cost {r.cost}  it {st.iterations} "
                  f"dual {st.dual_updates} steps {st.search_steps} "
                  f"({1e6 * st.seconds_solve / steps:.2f} us/step)", flush=True)
    if len(costs) != 1:
        raise SystemExit(f"n={n} [0, {factor}n]: the answers' costs differ: {sorted(costs)}")
    row = {"n": n, "range": f"[0, {factor}n]", "method": method, "cost": costs.pop(),
           "gpus": multi}
    for label, times in runs.items():
        if times and label in ("one", "multi"):
            row[label] = {"whole_s": statistics.median(t[0] for t in times),
                          "solve_s": statistics.median(t[1] for t in times),
                          "transfer_s": statistics.median(t[2] for t in times),
                          "runs": times}
    if "one" in row and "multi" in row:
        row["speedup_whole"] = row["one"]["whole_s"] / row["multi"]["whole_s"]
        row["speedup_solve"] = row["one"]["solve_s"] / row["multi"]["solve_s"]
    rows.append(row)


def run_processes(n: int, factor: int, gpus, repeat: int, rows: list, seed: int):
    """The one-process form against the one-process-per-GPU form
    (`mpirun -n len(gpus) python -m matchflow.distributed`) on the same
    matrix, saved as .npy and read through np.memmap by both; whole calls
    (the processes' start-up and imports not counted), alternating."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"matchflow-multi-{n}.npy"
    np.save(path, random_costs(n, factor * n, seed))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "-n", str(len(gpus)), "--oversubscribe", "--bind-to", "none",
           sys.executable, "-m", "matchflow.distributed", str(path)]
    times = {"process": [], "processes": []}
    for _ in range(repeat):
        m = np.load(path, mmap_mode="r")
        whole, r = timed(m, [f"cuda:{g}" for g in gpus])
        times["process"].append(whole)
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        line = [x for x in done.stdout.splitlines() if x.startswith("cost ")]
        if done.returncode != 0 or not line:
            raise SystemExit(f"mpirun failed:\n{done.stdout}\n{done.stderr}")
        fields = line[0].split()
        if int(fields[1]) != r.cost:
            raise SystemExit(f"costs differ: one process {r.cost}, processes {fields[1]}")
        times["processes"].append(float(fields[4]))
        print(f"  one process {whole:.3f} s   {len(gpus)} processes {fields[4]} s", flush=True)
    path.unlink()
    rows.append({"n": n, "range": f"[0, {factor}n]", "processes": len(gpus),
                 "one_process_whole_s": statistics.median(times["process"]),
                 "processes_whole_s": statistics.median(times["processes"]), "runs": times})


def write(out: Path, rows: list, meta: dict):
    out.mkdir(parents=True, exist_ok=True)
    (out / "multi-gpu.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [f"# Multi-GPU assignment: one GPU against {len(meta['gpus'])}",
             "", f"commit {meta['commit']}; {meta['device']}; matchflow {meta['version']}, "
             f"numpy {meta['numpy']}, Python {meta['python']}",
             f"command: `{meta['command']}`", "",
             "int32 costs from host memory, `solve_assignment(method=...)` (gpu-tree: columns "
             "split; gpu-classic: rows split); medians of "
             f"{meta['repeat']} runs (alternating); seconds.", "",
             "| n | costs | method | one GPU whole | one GPU solve | GPUs whole | GPUs solve | "
             "speed-up whole | speed-up solve |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    forms = [r for r in rows if "processes" in r]
    rows = [r for r in rows if "processes" not in r]
    for r in rows:
        one, multi = r.get("one"), r["multi"]
        f = lambda x: f"{x:.3f}"  # noqa: E731
        first = f(one["whole_s"]) if one else "does not fit"
        lines.append(f"| {r['n']} | {r['range']} | {r.get('method', 'gpu-tree')} | {first} | "
                     f"{f(one['solve_s']) if one else '-'} | {f(multi['whole_s'])} | "
                     f"{f(multi['solve_s'])} | "
                     f"{f(r['speedup_whole']) + 'x' if one else '-'} | "
                     f"{f(r['speedup_solve']) + 'x' if one else '-'} |")
    if forms:
        lines += ["", "One process driving every GPU against one process per GPU "
                  "(`mpirun -n P python -m matchflow.distributed FILE.npy`), same .npy "
                  "through np.memmap, whole call (process start-up not counted):", "",
                  "| n | costs | one process | one per GPU | ratio |",
                  "| ---: | --- | ---: | ---: | ---: |"]
        for r in forms:
            lines.append(f"| {r['n']} | {r['range']} | {r['one_process_whole_s']:.3f} | "
                         f"{r['processes_whole_s']:.3f} | "
                         f"{r['processes_whole_s'] / r['one_process_whole_s']:.2f} |")
    (out / "multi-gpu.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=[20000, 40000, 80000])
    ap.add_argument("--big", type=int, nargs="*", default=[],
                    help="sizes run on the GPUs together only (beyond one GPU)")
    ap.add_argument("--ranges", type=int, nargs="*", default=[1, 10], help="costs in [0, k n]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-repeat", type=int, default=1)
    ap.add_argument("--processes", type=int, nargs="*", default=[],
                    help="sizes for the one-process against one-process-per-GPU comparison")
    ap.add_argument("--methods", nargs="*", default=["gpu-tree", "gpu-classic"],
                    choices=["gpu-tree", "gpu-classic"])
    ap.add_argument("--classic-max-n", type=int, default=40000,
                    help="gpu-classic (the row split) only up to this n: it is the slower variant")
    ap.add_argument("--diagnose", action="store_true",
                    help="also the split kernel with one part and with two parts on one GPU")
    args = ap.parse_args(argv)
    gpus = list(range(matchflow._device.device_count()))
    infos = [matchflow._core.get_device_info(g)["name"] for g in gpus]
    meta = {"commit": commit(), "device": f"{len(gpus)} x {infos[0] if infos else '-'}",
            "gpus": gpus, "version": matchflow.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "repeat": args.repeat,
            "command": "python " + " ".join(["benchmarks/bench_multi_gpu.py"] + sys.argv[1:])}
    rows: list = []
    for n in args.sizes:
        for k in args.ranges:
            methods = [m for m in args.methods if m != "gpu-classic" or n <= args.classic_max_n]
            run_case(n, k, gpus, args.repeat, True, rows, seed=n + k, diagnose=args.diagnose,
                     methods=methods)
            write(args.out, rows, meta)
    for n in args.processes:
        run_processes(n, 10, gpus, args.repeat, rows, seed=n)
        write(args.out, rows, meta)
    for n in args.big:
        for k in args.ranges:
            run_case(n, k, gpus, args.big_repeat, False, rows, seed=n + k,
                     methods=[m for m in args.methods if m == "gpu-tree"])
            write(args.out, rows, meta)


if __name__ == "__main__":
    main()

"""Batched linear sum assignment benchmark: gpu-sap, omp-sap, a loop of SciPy calls.

Cases (seeded, uniform costs in [0, 1)): the issue's targets 208 x 300 x 300,
1024 x 64 x 64 and 208 x 300 x 100 in float32, plus float64 and int64
variants.  Columns:
  gpu          matchflow gpu-sap, whole call from a NumPy stack (copies included;
               the upload pipelined with the solve)
  gpu 1-piece  the same with pipeline=False: the whole upload, then the solve
  gpu solve    the 1-piece call's kernel time, without the copies (what a
               device-array input would cost)
  cpu          matchflow omp-sap on all threads (--threads)
  scipy loop   scipy.optimize.linear_sum_assignment on each problem, in a loop
  gpu torch    matchflow gpu-sap, whole call from a PyTorch CUDA tensor already on the
               device to the result tensors on it, synchronised (when PyTorch is importable)
  torch-la     torch_linear_assignment.batch_linear_assignment on the same CUDA tensor,
               synchronised (optional peer; when importable; its backend, Triton or its
               SciPy fallback, is recorded in the header)
Times are medians of --repeat runs after one warm-up.  Every answer is
checked: each problem's cost must equal SciPy's (within 1e-9 of the
magnitude; integers exactly).

    python benchmarks/bench_batched.py --out DIR [--cases ...] [--repeat 5] [--threads N]
           [--block-threads B]

gpu-sap's variant (MATCHFLOW_GPU_SAP_CARVEOUT; see
matchflow._batched.solve_batch) is set in the environment and recorded
in the header.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow
from matchflow._batched import solve_batch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_matching import git_sha, machine_info  # noqa: E402

try:  # optional: device-array input
    import torch
except ImportError:
    torch = None
try:  # optional peer
    from torch_linear_assignment import batch_linear_assignment as torch_la
except ImportError:
    torch_la = None

CASES = {  # name: (batch, n_rows, n_cols, dtype)
    "208x300x300 f32": (208, 300, 300, np.float32),
    "1024x64x64 f32": (1024, 64, 64, np.float32),
    "208x300x100 f32": (208, 300, 100, np.float32),
    "208x100x300 f32": (208, 100, 300, np.float32),
    "208x300x300 f64": (208, 300, 300, np.float64),
    "1024x64x64 f64": (1024, 64, 64, np.float64),
    "1024x64x64 i64": (1024, 64, 64, np.int64),
    "10000x16x16 f32": (10000, 16, 16, np.float32),
}


def make(batch, n, m, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(0, 10 * max(n, m), (batch, n, m)).astype(dtype)
    return rng.random((batch, n, m)).astype(dtype)


def costs_of(c, rows, cols):
    b = np.arange(c.shape[0])[:, None]
    return c[b, rows, cols].astype(np.float64).sum(axis=1)


def timed(fn, repeat):
    fn()  # warm-up (and the answer that is checked)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def run_case(name, args):
    batch, n, m, dtype = CASES[name]
    c = make(batch, n, m, dtype)
    row = {"case": name, "batch": batch, "n_rows": n, "n_cols": m, "dtype": np.dtype(dtype).name}

    t, ref = timed(lambda: [scipy_lsa(c[b]) for b in range(batch)], max(1, args.repeat // 2))
    row["scipy_loop_s"] = t
    want = np.array([c[b][r, k].astype(np.float64).sum() for b, (r, k) in enumerate(ref)])
    tol = 1e-9 * max(n, m) * float(np.abs(c).max())

    def check(label, got):
        bad = np.flatnonzero(np.abs(got - want) > tol)
        if bad.size:
            raise AssertionError(f"{name}: {label} differs from SciPy on problems {bad[:5]}")

    t, (rows, cols, _) = timed(lambda: solve_batch(c, method="omp-sap", device="cpu",
                                                   threads=args.threads), args.repeat)
    check("omp-sap", costs_of(c, rows, cols))
    row["cpu_s"] = t
    if matchflow.cuda_available():
        solves = []

        def gpu(pipeline):
            out = solve_batch(c, method="gpu-sap", device="cuda",
                              block_threads=args.block_threads, pipeline=pipeline)
            solves.append(out[2]["seconds_solve"])
            return out
        t, (rows, cols, info) = timed(lambda: gpu(True), args.repeat)
        check("gpu-sap", costs_of(c, rows, cols))
        # The kernel alone: uploaded in one piece first (pipelined, the
        # kernels overlap the copies and seconds_solve is only their tail).
        solves.clear()
        t_whole, (rows, cols, _) = timed(lambda: gpu(False), args.repeat)
        check("gpu-sap unpipelined", costs_of(c, rows, cols))
        row.update(gpu_s=t, gpu_unpipelined_s=t_whole, gpu_solve_s=float(np.median(solves[1:])),
                   gpu_shared_costs=info["shared_costs"], gpu_block_threads=info["block_threads"])
    if torch is not None and torch.cuda.is_available() and matchflow.cuda_available():
        tc = torch.from_numpy(c).cuda()

        def on_device():
            out = matchflow.batch_linear_sum_assignment(tc, method="gpu-sap")
            torch.cuda.synchronize()
            return out
        t, (rows, cols) = timed(on_device, args.repeat)
        check("gpu-sap (torch)", costs_of(c, rows.cpu().numpy(), cols.cpu().numpy()))
        row["gpu_torch_s"] = t
    if torch_la is not None and torch.cuda.is_available() and n <= m and dtype != np.int64:
        tc = torch.from_numpy(c).cuda()

        def peer():
            out = torch_la(tc)
            torch.cuda.synchronize()
            return out
        t, assigned = timed(peer, args.repeat)
        cols = assigned.cpu().numpy()
        check("torch-la", costs_of(c, np.broadcast_to(np.arange(n), cols.shape), cols))
        row["torch_la_s"] = t
    return row


COLUMNS = [("gpu_s", "gpu"), ("gpu_unpipelined_s", "gpu 1-piece"), ("gpu_solve_s", "gpu solve"),
           ("gpu_torch_s", "gpu torch"), ("cpu_s", "cpu"),
           ("scipy_loop_s", "scipy loop"), ("torch_la_s", "torch-la")]


def write(rows, header, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    (out / "batched.json").write_text(json.dumps({"header": header, "rows": rows}, indent=1))
    variant = " ".join(f"{k}={v}" for k, v in header["variant"].items())
    lines = [f"# Batched assignment ({header['machine'].get('gpus') or 'no GPU'}, "
             f"{header['threads']} CPU threads)", "",
             f"`{variant + ' ' if variant else ''}{header['command']}` at {header['git']}", "",
             "| case | " + " | ".join(label for _, label in COLUMNS)
             + " | scipy / cpu | scipy / gpu | torch-la / gpu torch |",
             "|---" * (len(COLUMNS) + 4) + "|"]
    for r in rows:
        def ms(key):
            return f"{1e3 * r[key]:.3f} ms" if key in r else "-"

        def ratio(a, b):
            return f"{r[a] / r[b]:.1f}x" if a in r and b in r else "-"
        lines.append(f"| {r['case']} | " + " | ".join(ms(k) for k, _ in COLUMNS)
                     + f" | {ratio('scipy_loop_s', 'cpu_s')} | {ratio('scipy_loop_s', 'gpu_s')}"
                     + f" | {ratio('torch_la_s', 'gpu_torch_s')} |")
    (out / "batched.md").write_text("\n".join(lines) + "\n")


def torch_la_backend():
    """torch-linear-assignment's version and the backend it takes for a CUDA
    float32 stack here (its 0.1 line: Triton, or a SciPy fallback on the
    CPU), or None when it is not importable."""
    if torch_la is None:
        return None
    import importlib.metadata
    version = importlib.metadata.version("torch-linear-assignment")
    try:
        from torch_linear_assignment import assignment
        probe = torch.zeros((1, 2, 2), device="cuda")
        backend = "triton" if assignment._cuda_uses_triton(probe) else "scipy-fallback"
    except (ImportError, AttributeError, RuntimeError):
        backend = "unknown"
    return f"{version} ({backend})"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("bench-batched-out"))
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--block-threads", type=int, default=0,
                   help="gpu-sap threads per block (multiple of 32 up to 512; 0: by size)")
    p.add_argument("--time-budget", type=float, default=None,
                   help="start no new case after this many seconds")
    p.add_argument("--git-sha", default=None)
    args = p.parse_args(argv)
    header = {"machine": machine_info(args), "git": git_sha(args), "threads": args.threads,
              "block_threads": args.block_threads,
              "variant": {k: v for k, v in os.environ.items()
                          if k.startswith("MATCHFLOW_GPU_SAP_")},
              "command": shlex.join(sys.argv), "torch_linear_assignment": torch_la_backend()}
    start, rows = time.perf_counter(), []
    for name in args.cases:
        if args.time_budget and time.perf_counter() - start > args.time_budget:
            print(f"time budget spent: {name} and later cases skipped")
            break
        rows.append(run_case(name, args))
        print(json.dumps(rows[-1]), flush=True)
        write(rows, header, args.out)
    write(rows, header, args.out)


if __name__ == "__main__":
    main()

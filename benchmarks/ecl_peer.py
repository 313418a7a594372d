"""ECL-MM as a column of the GPU matching benchmark.

github burtscher/ECL-MM (Mongandampulath Akathoott and Burtscher, "A bidirectional GPU
algorithm for computing maximum matchings in bipartite graphs", IPDPS 2025): a CUDA
program that reads a square bipartite graph in ECL's binary CSR format (rows are
vertices 0..n-1, columns n..2n-1, every edge stored both ways), copies it to the GPU and
reports `totalRunTime` (its initial matching plus its augmenting-path phase, the graph
already on the GPU) and `sizeof_finalMatching`.

The sources are never committed or imported: fetch a snapshot into the git-ignored
`.peers/ECL-MM` (e.g. `git clone https://github.com/burtscher/ECL-MM .peers/ECL-MM`),
carry it to the GPU machine, and `bench_matching.py` builds it there with nvcc -O3 for
the machine's architecture (CUDA_ARCH, default 90).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DEFAULT_ROOT = Path(__file__).resolve().parent.parent / ".peers" / "ECL-MM"
_TIME = re.compile(r"^totalRunTime:\s*([0-9.eE+-]+)\s*s", re.M)
_SIZE = re.compile(r"^sizeof_finalMatching:\s*(\d+)", re.M)


def build(root: Path) -> Path | None:
    """Builds ECL-MM under `root` (a checkout); its binary, or None when `root` is absent.
    A failing build raises with nvcc's output."""
    source = root / "source" / "ECL-MM_10.cu"
    if not source.is_file():
        return None
    binary = root / "ecl-mm"
    # CUDA 13 dropped cudaDeviceProp's clockRate and memoryClockRate, which ECL-MM prints
    # in its banner only: the build compiles a copy that prints 0 for them.
    patched = root / "source" / "ecl-mm-build.cu"
    text = source.read_text()
    for field in ("deviceProp.clockRate", "deviceProp.memoryClockRate"):
        text = text.replace(field, "0")
    patched.write_text(text)
    arch = os.environ.get("CUDA_ARCH", "90")
    done = subprocess.run(["nvcc", "-O3", f"-arch=sm_{arch}", "-Xcompiler", "-fopenmp",
                           str(patched), "-o", str(binary)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building ECL-MM failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return binary


def fits(graph: sp.csr_array) -> str:
    """'' when ECL-MM can take `graph`, else why not (it takes square graphs, int32)."""
    n_rows, n_cols = graph.shape
    if n_rows != n_cols:
        return "ECL-MM takes square graphs only"
    if 2 * graph.nnz >= 2**31:
        return "more edges than ECL-MM's int32 indices hold"
    return ""


def write_graph(graph: sp.csr_array, path: Path) -> None:
    """`graph` (n x n) as ECL's bipartite graph: int32 node and edge counts, the CSR
    offsets over 2n vertices, the neighbour lists, no weights."""
    n = graph.shape[0]
    rows = sp.csr_array(graph, dtype=np.int8)
    rows.sum_duplicates()
    both = sp.block_array([[None, rows], [rows.T, None]], format="csr")
    both.sort_indices()
    with open(path, "wb") as f:
        f.write(np.array([2 * n, both.nnz], dtype="<i4").tobytes())
        f.write(np.asarray(both.indptr, dtype="<i4").tobytes())
        f.write(np.asarray(both.indices, dtype="<i4").tobytes())


def run(binary: Path, graph_file: Path, timeout: float) -> dict:
    """One run: ECL-MM's reported seconds and the cardinality it found."""
    done = subprocess.run([str(binary), str(graph_file)], capture_output=True, text=True,
                          timeout=timeout)
    seconds, size = _TIME.search(done.stdout), _SIZE.search(done.stdout)
    if done.returncode != 0 or not seconds or not size:
        raise RuntimeError(f"ECL-MM exited {done.returncode}: "
                           f"{(done.stdout + done.stderr)[-500:]}")
    return dict(seconds=float(seconds.group(1)), cardinality=int(size.group(1)))

"""pbbs-maxflow's hi_pr and syncPar as columns of the flow benchmark.

github niklasb/pbbs-maxflow (Baumstark, Blelloch and Shun, "Efficient implementation of
a synchronous parallel push-relabel algorithm", ESA 2015): `hiprSeqGoldberg` is
Cherkassky and Goldberg's HI-PR in that framework, `syncPar` the paper's parallel
push-relabel (OpenMP).  Both compute a maximum preflow and report its value (the
maximum flow's) and the time of that phase ("PBBS-time"), reading the instance from
their binary "FLOWFLOW" format first (not timed).

The sources are never committed or imported: fetch a snapshot into the git-ignored
`.peers/pbbs-maxflow` (e.g. `git clone https://github.com/niklasb/pbbs-maxflow
.peers/pbbs-maxflow`, or the `fetch` tool's snapshot exported there), carry it to the
GPU machine, and `bench_flow.py` builds both here with g++ -O3 and 64-bit integers.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np

CODES = {"hi_pr": "hiprSeqGoldberg", "syncpar": "syncPar"}
DEFAULT_ROOT = Path(__file__).resolve().parent.parent / ".peers" / "pbbs-maxflow"
# LONG: 64-bit vertices and capacities; <array>: syncPar uses it without including it
_FLAGS = "-mcx16 -O3 -DMCX16 -DLONG -std=c++11 -include array"
_VALUE = {"hi_pr": re.compile(r"^\s*flow\s+(-?\d+)\s*$", re.M),
          "syncpar": re.compile(r"^\s*sink excess\s+(-?[\d.]+)\s*$", re.M)}
_TIME = re.compile(r"PBBS-time:\s*([0-9.eE+-]+)")


def build(root: Path) -> dict[str, Path]:
    """Builds both programs under `root` (a pbbs-maxflow checkout); label -> binary.
    An empty dict when `root` is absent; a failing build raises with make's output."""
    flows = root / "benchmarks" / "maxFlow"
    if not flows.is_dir():
        return {}
    binaries = {}
    for label, folder in CODES.items():
        flags = [f"PCFLAGS={_FLAGS}"]
        if label == "syncpar":
            flags = ["OPENMP=1", f"PCFLAGS=-fopenmp -DOPENMP {_FLAGS}",
                     "PLFLAGS=-fopenmp -lpthread"]
        done = subprocess.run(["make", "-s", "maxFlow", "LONG=1", *flags], cwd=flows / folder,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building {label} in {flows / folder} failed:\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        binaries[label] = flows / folder / "maxFlow"
    return binaries


def write_graph(inst, path: Path) -> None:
    """The instance in pbbs's FLOWFLOW format: n, m, source, sink, the CSR offsets, then
    (head, capacity) per arc; every number int64, little-endian."""
    g = inst.graph
    arcs = np.empty((g.nnz, 2), dtype="<i8")
    arcs[:, 0], arcs[:, 1] = g.indices, g.data
    with open(path, "wb") as f:
        f.write(b"FLOWFLOW")
        f.write(np.array([g.shape[0], g.nnz, inst.source, inst.sink], dtype="<i8").tobytes())
        f.write(np.asarray(g.indptr[:-1], dtype="<i8").tobytes())
        f.write(arcs.tobytes())


def runner(label: str, binary: Path, graph: Path, threads: int, timeout: float):
    """One run of `binary` on `graph`: its preflow time and value (bench_flow's shape)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))

    def run():
        done = subprocess.run([str(binary), str(graph)], capture_output=True, text=True,
                              env=env, timeout=timeout)
        # syncPar prints its statistics at several points: the last are the final ones
        seconds, values = _TIME.search(done.stdout), _VALUE[label].findall(done.stdout)
        if done.returncode != 0 or not seconds or not values:
            raise RuntimeError(f"{label} exited {done.returncode}: "
                               f"{(done.stdout + done.stderr)[-500:]}")
        return dict(seconds=float(seconds.group(1)), value=int(round(float(values[-1]))))
    return run

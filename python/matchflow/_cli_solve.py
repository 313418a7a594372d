"""`matchflow solve FILE`: read a problem file, solve it, print a summary and
optionally write the answer.

Files and the problem guessed from them (``--problem`` overrides):

=====================================  ================================
file                                   problem
=====================================  ================================
DIMACS ``p max`` (``.max``)            flow
DIMACS ``p asn`` (``.asn``)            sparse-assignment
Matrix Market, dense (``array``)       assignment
Matrix Market, sparse (``coordinate``)  matching (``rank``, ``dm``, ``btf``,
                                       ``sparse-assignment`` on request)
SNAP edge list (``.txt``)              matching
OR-Library ``assign`` (``.txt``)       assignment
NumPy ``.npy`` (2-D)                   assignment (memory-mapped)
=====================================  ================================

Output (``--output OUT``):

* matching: one ``ROW COL`` line (0-based) per matched pair; rank: the same;
* assignment, sparse-assignment: ``ROW COL`` lines (0-based); for DIMACS input
  the DIMACS solution lines instead: ``s COST`` then ``f ROW_ID COL_ID COST``
  with the file's own ids;
* flow: DIMACS solution lines ``s VALUE``, then ``f U V FLOW`` (1-based) for
  every arc with positive flow, then ``c cut U V`` for every arc of the
  minimum cut;
* dm, btf: the permutations and block boundaries, one ``NAME: v v ...`` line
  each (``OUT.npz``: a NumPy archive of the same arrays).
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import io

PROBLEMS = ("matching", "rank", "dm", "btf", "sparse-assignment", "assignment", "flow")


@dataclasses.dataclass
class Loaded:
    kind: str        # "dense", "sparse", "dimacs-max", "dimacs-asn"
    data: Any        # ndarray, csr_array, io.FlowProblem or io.AssignmentProblem
    guess: str       # the problem this file suggests
    why: str         # how that was guessed


def _sniff(path: Path) -> bytes:
    """The first line that is not a comment or blank."""
    with io._open(path) as fh:
        for line in fh:
            text = line.strip()
            if text and not text.startswith((b"c ", b"c\t", b"#")) and text != b"c":
                return text
    return b""


def load(path: Path) -> Loaded:
    name = path.name.removesuffix(".gz")
    first = _sniff(path) if not name.endswith(".npy") else b""
    if name.endswith(".npy"):
        data = np.load(path, mmap_mode="r")
        if data.ndim != 2:
            raise ValueError(f"{path}: a .npy cost matrix is 2-D; got {data.ndim} dimensions")
        return Loaded("dense", data, "assignment", "a dense .npy matrix")
    if first.startswith(b"p max") or name.endswith(".max"):
        return Loaded("dimacs-max", io.read_dimacs(path), "flow", "a DIMACS 'p max' file")
    if first.startswith(b"p asn") or name.endswith(".asn"):
        return Loaded("dimacs-asn", io.read_dimacs_assignment(path), "sparse-assignment",
                      "a DIMACS 'p asn' file")
    if first.startswith(b"%%MatrixMarket") or name.endswith(".mtx"):
        m = io.read_matrix(path)
        if isinstance(m, np.ndarray):
            return Loaded("dense", m, "assignment", "a dense Matrix Market matrix")
        return Loaded("sparse", m, "matching", "a sparse Matrix Market matrix (--problem "
                      "rank, dm, btf or sparse-assignment for the others)")
    if name.endswith(".txt") and len(first.split()) == 1:
        return Loaded("dense", io.read_orlib_assignment(path), "assignment",
                      "an OR-Library assign file")
    if name.endswith(".txt"):
        return Loaded("sparse", io.read_graph(path), "matching", "a SNAP edge list")
    raise ValueError(f"{path}: unknown file kind (expected Matrix Market .mtx, DIMACS .max or "
                     ".asn, a SNAP .txt edge list or a .npy matrix)")


_ACCEPTS = {  # problem -> the file kinds it reads
    "matching": ("sparse", "dimacs-asn"), "rank": ("sparse", "dimacs-asn"),
    "dm": ("sparse", "dimacs-asn"), "btf": ("sparse", "dimacs-asn"),
    "sparse-assignment": ("sparse", "dimacs-asn"), "assignment": ("dense",),
    "flow": ("dimacs-max",)}


def _sparse(loaded: Loaded) -> sp.csr_array:
    return loaded.data.costs if loaded.kind == "dimacs-asn" else loaded.data


def _options(args) -> dict:
    return {"method": args.method or "auto", "device": args.device or "auto"}


def solve(problem: str, loaded: Loaded, args) -> tuple[str, Any]:
    """(answer line, result object) of `problem` on the loaded file."""
    import matchflow as mf
    opts = _options(args)
    if problem in ("matching", "rank"):
        m = mf.maximum_matching(_sparse(loaded), **opts)
        word = "structural rank" if problem == "rank" else "matched pairs"
        return f"{word}: {m.cardinality}", m
    if problem == "dm":
        dm = mf.dulmage_mendelsohn(_sparse(loaded), **opts)
        return f"structural rank {dm.structural_rank}, {len(dm.r) - 1} fine blocks", dm
    if problem == "btf":
        btf = mf.block_triangular_form(_sparse(loaded), **opts)
        return f"{len(btf.r) - 1} diagonal blocks", btf
    if problem in ("sparse-assignment", "assignment"):
        a = (mf.solve_sparse_assignment(_sparse(loaded), args.maximize, **opts)
             if problem == "sparse-assignment"
             else mf.solve_assignment(loaded.data, args.maximize, **opts))
        return f"cost: {a.cost} ({len(a.row_ind)} pairs)", a
    f = mf.solve_flow(loaded.data.graph, loaded.data.source, loaded.data.sink, **opts)
    return f"maximum flow: {f.flow_value} (minimum cut: {len(f.cut_edges()[0])} arcs)", f


def _phases(result) -> str:
    stats = getattr(result, "stats", None)
    if not dataclasses.is_dataclass(stats):
        return ""
    times = [(f.name.removeprefix("seconds_"), getattr(stats, f.name))
             for f in dataclasses.fields(stats) if f.name.startswith("seconds_")]
    return ", ".join(f"{name} {value:.4f} s" for name, value in times if value)


def write(out: Path, problem: str, loaded: Loaded, result) -> None:
    """The answer in the module docstring's formats."""
    if problem in ("dm", "btf"):
        arrays = {f.name: np.asarray(getattr(result, f.name))
                  for f in dataclasses.fields(result) if f.name != "stats"}
        if out.suffix == ".npz":
            np.savez(out, **arrays)  # type: ignore[arg-type]
        else:
            out.write_text("".join(f"{k}: {' '.join(map(str, v.tolist()))}\n"
                                   for k, v in arrays.items()))
        return
    lines = []
    if problem in ("matching", "rank"):
        rows = np.flatnonzero(result.col4row >= 0)
        lines = [f"{i} {j}" for i, j in zip(rows.tolist(), result.col4row[rows].tolist())]
    elif problem == "flow":
        lines = _flow_lines(loaded, result)
    elif loaded.kind == "dimacs-asn":
        p = loaded.data
        costs = p.costs.tocsr()
        lines = [f"s {_number(result.cost)}"]
        for i, j in zip(result.row_ind.tolist(), result.col_ind.tolist()):
            lines.append(f"f {p.row_ids[i]} {p.col_ids[j]} {_number(costs[i, j])}")
    else:
        lines = [f"{i} {j}" for i, j in zip(result.row_ind.tolist(), result.col_ind.tolist())]
    out.write_text("\n".join(lines) + "\n")


def _number(x) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _flow_lines(loaded: Loaded, result) -> list[str]:
    flow = sp.coo_array(result.flow)
    keep = flow.data > 0
    lines = [f"s {result.flow_value}"]
    lines += [f"f {u + 1} {v + 1} {f}" for u, v, f in
              zip(flow.row[keep].tolist(), flow.col[keep].tolist(), flow.data[keep].tolist())]
    tails, heads = result.cut_edges()
    lines += [f"c cut {u + 1} {v + 1}" for u, v in zip(tails.tolist(), heads.tolist())]
    return lines


def run(args) -> int:
    path = Path(args.file)
    t0 = time.perf_counter()
    loaded = load(path)
    read_seconds = time.perf_counter() - t0
    problem = args.problem or loaded.guess
    print(f"{path.name}: {loaded.why}; problem: {problem}"
          + ("" if args.problem else " (guessed; --problem to choose)"))
    if loaded.kind not in _ACCEPTS[problem]:
        raise ValueError(f"--problem {problem} does not read {loaded.why}")
    t0 = time.perf_counter()
    answer, result = solve(problem, loaded, args)
    seconds = time.perf_counter() - t0
    print(answer)
    ran = (f"method {result.method} on {result.device}; " if hasattr(result, "method") else "")
    print(f"{ran}read {read_seconds:.4f} s, solve call {seconds:.4f} s")
    phases = _phases(result)
    if phases:
        print(f"phases: {phases}")
    if args.output:
        write(Path(args.output), problem, loaded, result)
        print(f"answer written to {args.output}")
    return 0


def add_parser(sub) -> None:
    import argparse
    p = sub.add_parser("solve", help="solve a problem file (Matrix Market, DIMACS, .npy)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file")
    p.add_argument("--problem", choices=PROBLEMS, help="what to solve (default: guessed)")
    p.add_argument("--method", help="the function's method= (default: auto)")
    p.add_argument("--device", help="the function's device= (default: auto)")
    p.add_argument("--maximize", action="store_true", help="assignments: maximise")
    p.add_argument("--output", help="write the answer here (formats: matchflow solve --help)")

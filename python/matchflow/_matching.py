"""Maximum cardinality bipartite matching: SciPy drop-ins and the rich entry point."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from . import _core, _device
from . import _device_arrays as _darr
from ._validation import (Bipartite, _least_matching_bytes, as_bipartite, check_allocation,
                          check_choice, check_threads, check_vertex_ids, team_size)

_METHOD_CODES = _core.MATCHING_METHODS
CPU_METHODS = ("pr", "pdbfs", "msbfs-graft")
GPU_METHODS = ("gpu-pr", "gpu-apfb", "gpu-apsb")
METHODS = ("auto",) + CPU_METHODS + GPU_METHODS
_INIT_CODES = _core.MATCHING_INITS
_BFS_CODES = {"gpubfs": 0, "gpubfs-wr": 1}
_LAYOUT_CODES = {"ct": 0, "mt": 1}

# Below this many edges "auto" keeps a graph on the CPU: the GPU overtakes
# the CPU between 100k and 500k edges by family (benchmarks/NOTES.md, "The
# `auto` thresholds").
GPU_MIN_EDGES = 200_000


@dataclass(frozen=True)
class MatchingStats:
    """What one run did.  Fields a method does not use are 0."""

    seconds_total: float = 0.0      #: wall time of the whole call, conversion included
    seconds_init: float = 0.0       #: initial (cheap) matching
    seconds_solve: float = 0.0      #: the algorithm proper
    seconds_transfer: float = 0.0   #: host <-> device copies
    seconds_transpose: float = 0.0  #: building the column -> row pattern (when needed)
    seconds_setup: float = 0.0      #: GPU: device selection, allocations, CUDA graph build
    seconds_per_launch: float = 0.0  #: GPU: measured cost of one empty kernel launch
    init_cardinality: int = 0       #: size of the initial matching
    iterations: int = 0             #: main-loop iterations / phases
    global_relabels: int = 0
    pushes: int = 0
    augmentations: int = 0
    bfs_levels: int = 0
    kernel_launches: int = 0


@dataclass(frozen=True)
class MatchingResult:
    """A maximum cardinality matching and how it was found.

    Attributes
    ----------
    col4row : ndarray of int32, shape (n_rows,)
        Column matched to each row, or -1.
    row4col : ndarray of int32, shape (n_cols,)
        Row matched to each column, or -1.
    cardinality : int
        Number of matched pairs (the structural rank of the pattern).
    method, device : str
        The algorithm and the device that ran it ("cpu" or "cuda:N").
    stats : MatchingStats
    """

    col4row: np.ndarray
    row4col: np.ndarray
    cardinality: int
    method: str
    device: str
    stats: MatchingStats = field(default_factory=MatchingStats)


# CPU "auto": MS-BFS-Graft (greedy init) when there are threads to use and
# the graph is not small, else sequential push-relabel (Karp-Sipser init).
# MS-BFS-Graft beat SciPy on every graph; P-DBFS was faster on uniform and
# R-MAT but slower than SciPy on naturally ordered meshes, so it is not the
# default (benchmarks/NOTES.md, "Matching on the CPU").  The thresholds are
# not tuned: below ~200k edges every method takes milliseconds.
AUTO_PARALLEL_EDGES = 200_000
AUTO_PARALLEL_THREADS = 4


# GPU "auto": G-PR on graphs under 4 edges per vertex, APFB above: G-PR was
# faster on uniform random and the natural grid, APFB on R-MAT, Delaunay and
# RGG (benchmarks/NOTES.md, "The `auto` thresholds", with the misses).
GPU_AUTO_APFB_DEGREE = 4.0

# ... and APFB below it too where the degrees are skewed: a sample of the row
# offsets finds at least SKEW_EMPTY_SHARE of the rows empty, SKEW_EMPTY_EXCESS
# times the share a uniform random graph of that density has (e^-degree).
# Power-law graphs, 3.5 edges a row and a third of the rows empty: gpu-apfb
# 3.4 ms against gpu-pr's 4.9 (NOTES.md, "APFB's search side and hubs").
SKEW_SAMPLE_ROWS = 4096
SKEW_EMPTY_SHARE = 0.1
SKEW_EMPTY_EXCESS = 4.0


class _Sized(Protocol):
    """What `auto` decides on: a host, raw or GPU CSR's sizes."""

    @property
    def n_rows(self) -> int: ...
    @property
    def n_cols(self) -> int: ...
    @property
    def nnz(self) -> int: ...


def _empty_sampled_rows(graph: _Sized) -> tuple[int, int] | None:
    """(empty, sampled): how many of rows 0, step, 2 step, ... of the stored
    orientation, step = ceil(rows / SKEW_SAMPLE_ROWS), are empty, and how many
    those are.  Counted in place in host memory, or, for a graph in GPU
    memory, on its stream by the core (count_empty_sampled_rows).  None when
    there is no row."""
    rows = graph.n_rows
    if rows == 0:
        return None
    step = -(-rows // SKEW_SAMPLE_ROWS)
    sampled = -(-rows // step)
    if isinstance(graph, _darr.DeviceCSR):
        ptr = graph.indptr
        return _core.empty_sampled_rows(ptr.ptr, ptr.dtype.itemsize, rows, step, graph.device,
                                        ptr.stream), sampled
    if isinstance(graph, Bipartite):
        offsets = graph.row_ptr
    elif isinstance(graph, _RawCSR):
        offsets = graph.indptr
    else:
        return None
    return int(np.count_nonzero(offsets[0:rows:step] == offsets[1:rows + 1:step])), sampled


def _skewed_degrees(graph: _Sized) -> bool:
    """Whether evenly spaced rows of the stored orientation are empty far more
    often than in a uniform random graph of the same density."""
    sample = _empty_sampled_rows(graph)
    if sample is None:
        return False
    empty = sample[0] / sample[1]
    uniform = math.exp(-graph.nnz / graph.n_rows)
    return empty >= SKEW_EMPTY_SHARE and empty >= SKEW_EMPTY_EXCESS * uniform


# Where the degrees are skewed, the GPU methods are told so
# (matching_options::skewed_degrees), and
# - APFB with GPUBFS-WR grafts (keeps its live BFS trees across phases): on
#   R-MAT and power-law graphs of 2^20-2^22 vertices its solve took 9-22%
#   less time, on uniform random ones 7-30% more (later phases there take
#   longer paths): NOTES.md, "APFB's tree grafting";
# - the GPU's cheap start ranks rows by degree, so that rows of one entry
#   keep their column: gpu-apfb's time on the GPU there -16% to -29%, where
#   naturally ordered meshes and RGGs lost their start's short chains
#   (NOTES.md, "The device start").
def _skewed(graph: _Sized, method: str) -> bool:
    """Whether the core hears that `graph`'s degrees are skewed (GPU methods)."""
    return method.startswith("gpu") and _skewed_degrees(graph)


def _gpu_auto_method(graph: _Sized, skewed: bool) -> str:
    degree = graph.nnz / max(graph.n_rows, graph.n_cols, 1)
    return "gpu-apfb" if degree >= GPU_AUTO_APFB_DEGREE or skewed else "gpu-pr"


def _auto_method(graph: _Sized, device: str, threads: int = 0) -> str:
    if device == "cuda":
        return _gpu_auto_method(graph, _skewed_degrees(graph))
    team = team_size(threads)
    if graph.nnz >= AUTO_PARALLEL_EDGES and team >= AUTO_PARALLEL_THREADS:
        return "msbfs-graft"
    return "pr"


def _default_init(method: str) -> str:
    """Initial matching by measurement (benchmarks/NOTES.md, "Matching on
    the CPU"): Karp-Sipser for "pr" and "pdbfs" (over the rows in parallel
    for P-DBFS: no transpose); the greedy one for "msbfs-graft", whose whole
    solve the sequential Karp-Sipser pass outweighs.  GPU methods keep the
    papers' cheap one (on skewed degrees with rows of fewer entries first:
    _skewed)."""
    return "karp-sipser" if method in ("pr", "pdbfs") else "cheap"


def _resolve(graph: _Sized, method: str, device, threads: int = 0) -> tuple[str, str, int]:
    """Pick (method, backend, ordinal) from the user's method= and device=."""
    check_choice(method, "method", METHODS)
    method, backend, ordinal = _device.resolve_method(
        method, device, CPU_METHODS, GPU_METHODS, large_enough=graph.nnz >= GPU_MIN_EDGES)
    if method == "auto":
        method = _auto_method(graph, backend, threads)
    return method, backend, ordinal


@dataclass(frozen=True)
class _Tuning:
    """Validated tuning keywords of `maximum_matching`, as the core wants them."""

    threads: int = 0
    init: str | None = None
    relabel_k: float = -1.0
    bfs: int = _BFS_CODES["gpubfs-wr"]
    layout: int = _LAYOUT_CODES["ct"]
    paper_structure: bool = False


def _tuning(threads=None, init=None, relabel_k=None, bfs="gpubfs-wr", layout="ct",
            variant="tuned") -> _Tuning:
    if init is not None:
        check_choice(init, "init", tuple(_INIT_CODES))
    check_choice(bfs, "bfs", tuple(_BFS_CODES))
    check_choice(layout, "layout", tuple(_LAYOUT_CODES))
    check_choice(variant, "variant", ("tuned", "paper"))
    if relabel_k is not None and not (np.isfinite(relabel_k) and relabel_k > 0):
        raise ValueError(f"relabel_k must be a positive number; got {relabel_k!r}")
    return _Tuning(check_threads(threads), init, -1.0 if relabel_k is None else float(relabel_k),
                   _BFS_CODES[bfs], _LAYOUT_CODES[layout], variant == "paper")


def _solve(graph: Bipartite, method: str, ordinal: int, t: _Tuning):
    init = t.init or _default_init(method)
    return _core.matching(graph.row_ptr, graph.row_adj, graph.n_cols,
                          _METHOD_CODES[method], _INIT_CODES[init], t.threads, t.relabel_k,
                          t.bfs, _skewed(graph, method), t.layout, ordinal,
                          t.paper_structure)


def maximum_matching(graph, *, method: str = "auto", device: str = "auto",
                     threads: int | None = None, init: str | None = None,
                     relabel_k: float | None = None, bfs: str = "gpubfs-wr",
                     layout: str = "ct", variant: str = "tuned") -> MatchingResult:
    """Maximum cardinality matching of a bipartite graph, with its statistics.

    Parameters
    ----------
    graph : scipy.sparse matrix or array, or a graph in GPU memory
        The bipartite graph, shape (n_rows, n_cols): every stored entry
        (explicit zeros included) is an edge between its row and its column.
        Any sparse format; duplicate entries and unsorted indices are fine.
        In GPU memory: a cupyx.scipy.sparse CSR/CSC matrix, a torch sparse
        CSR/CSC tensor, or an ``(indptr, indices, shape)`` triple of CuPy
        arrays or torch tensors (int32 or int64, used as they are).  It is
        solved on its own device by a GPU method, ordered on the caller's
        current stream, its structure checked there; `col4row` / `row4col`
        come back as arrays of the same kind on that device.
    method : {"auto", "pr", "pdbfs", "msbfs-graft", "gpu-pr", "gpu-apfb", "gpu-apsb"}
        "pr": sequential push-relabel; "pdbfs": OpenMP parallel disjoint BFS;
        "msbfs-graft": OpenMP multi-source BFS with tree grafting (Azad,
        Buluc, Pothen 2017);
        "gpu-pr": G-PR; "gpu-apfb" / "gpu-apsb": GPU augmenting paths
        (APFB / APsB).  "auto" picks the fastest measured method for the
        device.
    device : {"auto", "cpu", "cuda", "cuda:N"}
        "auto" uses a GPU when one is usable and the graph is large enough
        to gain from it.  Asking for a GPU that is not there raises
        RuntimeError.
    threads : int, optional
        OpenMP threads for CPU methods (default: OMP_NUM_THREADS or all cores).
    init : {"karp-sipser", "cheap", "none"}, optional
        Initial matching the method starts from.  Default: "karp-sipser"
        for "pr" and "pdbfs", "cheap" (greedy, run in parallel for the
        OpenMP methods) for the others: the fastest measured.  On a GPU,
        "cheap" takes the rows in id order, or, on a graph of skewed
        degrees, rows of fewer entries first.
    relabel_k : float, optional
        Global-relabel frequency: every k*(m+n) pushes for "pr" (default
        0.5), every k*maxLevel iterations for "gpu-pr" (default 0.7).
    bfs : {"gpubfs-wr", "gpubfs"}
        BFS kernel of "gpu-apfb" / "gpu-apsb" (paper 004).  "gpu-apfb" with
        "gpubfs-wr" on a graph of skewed degrees also grafts: its BFS
        trees that found no path outlive their phase.
    layout : {"ct", "mt"}
        Thread layout of "gpu-apfb" / "gpu-apsb": CT, a fixed grid with
        several vertices per thread, or MT, one thread per vertex.
    variant : {"tuned", "paper"}
        "gpu-pr" only: "paper" runs paper 000's kernel structure (atomic-free
        scan BFS, one INIT + PUSH launch pair per iteration) instead of the
        Hopper-tuned one, for reproducible comparisons.

    Returns
    -------
    MatchingResult

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> import matchflow
    >>> g = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]]))
    >>> r = matchflow.maximum_matching(g, method="pr")
    >>> r.cardinality, r.col4row.tolist(), r.row4col.tolist()
    (2, [1, 0, -1], [1, 0, -1])
    """
    start = time.perf_counter()
    tuning = _tuning(threads, init, relabel_k, bfs, layout, variant)
    if _darr.is_device_sparse(graph):
        return _match_on_device(_darr.sparse_pattern(graph), start, method, device, tuning)
    return _match_host(graph, start, method, device, tuning)


@dataclass(frozen=True)
class _RawCSR:
    """A host CSR or CSC as SciPy holds it (int32 / int64 arrays, after
    SciPy's O(1) checks), read as CSR: a CSC is the CSR of its transpose.
    The GPU methods take it as it is and check it on the device."""

    n_rows: int
    n_cols: int
    indptr: np.ndarray
    indices: np.ndarray
    transposed: bool

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])


_RAW_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _raw_csr(graph) -> _RawCSR | None:
    """`graph` as a _RawCSR when it is a CSR/CSC whose index arrays the
    device reads as they are (native int32 / int64), else None."""
    if not sp.issparse(graph) or graph.format not in ("csr", "csc") or len(graph.shape) != 2:
        return None
    if graph.indptr.dtype not in _RAW_TYPES or graph.indices.dtype not in _RAW_TYPES:
        return None
    n_rows, n_cols = (int(d) for d in graph.shape)  # as_bipartite's O(1) checks, in its order
    check_vertex_ids(max(n_rows, n_cols), "rows or columns")
    check_allocation(_least_matching_bytes(graph), f"a matching of a {n_rows} x {n_cols} graph")
    graph.check_format(full_check=False)  # SciPy's O(1) checks; trims unused storage
    ptr, ids = np.ascontiguousarray(graph.indptr), np.ascontiguousarray(graph.indices)
    if graph.format == "csc":
        return _RawCSR(n_cols, n_rows, ptr, ids, True)
    return _RawCSR(n_rows, n_cols, ptr, ids, False)


def _solve_raw(g: _RawCSR, method: str, ordinal: int, t: _Tuning):
    """A GPU method on a host _RawCSR: (col4row, row4col, stats) in the
    caller's orientation.  No host pass over the arrays: int32 offsets
    travel as int32, and the structure is checked on the device.  The mates
    come back into page-locked memory where the core has it (one DMA)."""
    mates = _core.result_array(g.n_rows, np.int32), _core.result_array(g.n_cols, np.int32)
    stats = _core.matching_raw(
        g.indptr.ctypes.data, g.indptr.itemsize, g.indices.ctypes.data, g.indices.itemsize,
        g.nnz, g.n_rows, g.n_cols, False, _METHOD_CODES[method],
        _INIT_CODES[t.init or "cheap"], t.relabel_k, t.bfs, _skewed(g, method), t.layout,
        ordinal, t.paper_structure, 0, mates[0].ctypes.data, mates[1].ctypes.data)
    col4row, row4col = mates[::-1] if g.transposed else mates
    return col4row, row4col, stats


def _match_host(graph, start: float, method: str, device, tuning: _Tuning,
                sparse_message: str = "graph must be sparse") -> MatchingResult:
    """`_match` for host input.  A CSR/CSC that goes to a GPU method with the
    device start goes as SciPy holds it (_solve_raw); everything else is
    checked and converted on the host first (as_bipartite)."""
    raw = _raw_csr(graph) if tuning.init != "karp-sipser" else None
    if raw is not None:
        method_, backend, ordinal = _resolve(raw, method, device, tuning.threads)
        if backend == "cuda":
            return _device.with_cpu_fallback(
                device, backend,
                lambda: _result(_solve_raw(raw, method_, ordinal, tuning), method_, backend,
                                ordinal, start),
                lambda: _match(as_bipartite(graph), start, "auto", "cpu", tuning),
                stacklevel=3)
    return _match(as_bipartite(graph, sparse_message=sparse_message), start, method, device,
                  tuning)


def _check_device_method(g: _darr.DeviceCSR, method: str, device, tuning: _Tuning) -> None:
    """Raises unless `method`, `device` and `tuning` can solve a graph in GPU
    memory (it is solved where it is)."""
    check_choice(method, "method", METHODS)
    _darr.check_device_choice(device, g.device, "graph")
    if method in CPU_METHODS:
        raise ValueError(f"method {method!r} runs on the CPU, and the graph lives on "
                         f"cuda:{g.device}; use a GPU method ({', '.join(GPU_METHODS)}) or "
                         f"'auto'")
    _device.resolve(f"cuda:{g.device}", large_enough=True)  # RuntimeError without CUDA
    if tuning.init == "karp-sipser":
        raise ValueError("init='karp-sipser' runs on the host; a graph in GPU memory "
                         "starts from 'cheap' or 'none'")


def _match_on_device(g: _darr.DeviceCSR, start: float, method: str, device,
                     tuning: _Tuning) -> MatchingResult:
    """`_match` for a CSR in GPU memory: solved there on the caller's stream,
    the mates returned as arrays of the caller's kind on its device (their
    copies not waited for; the cardinality is counted by the core).  The skew
    sample (the core counts its empty rows on that stream) waits for the work
    queued there before the solve."""
    _check_device_method(g, method, device, tuning)
    skewed = _skewed_degrees(g)  # one read of the sample, for `auto` and the core
    method = _gpu_auto_method(g, skewed) if method == "auto" else method
    mates = [_darr.empty(g.kind, g.device, (k,), np.int32) for k in (g.n_rows, g.n_cols)]
    stats = _core.matching_raw(
        g.indptr.ptr, g.indptr.dtype.itemsize, g.indices.ptr, g.indices.dtype.itemsize,
        g.nnz, g.n_rows, g.n_cols, True, _METHOD_CODES[method],
        _INIT_CODES[tuning.init or "cheap"],
        tuning.relabel_k, tuning.bfs, skewed, tuning.layout, g.device,
        tuning.paper_structure,
        g.indptr.stream, _darr.pointer(mates[0]), _darr.pointer(mates[1]))
    col4row, row4col = mates[::-1] if g.transposed else mates
    cardinality = _cardinality(stats, col4row)
    stats["seconds_total"] = time.perf_counter() - start
    return MatchingResult(
        col4row=col4row, row4col=row4col, cardinality=cardinality,
        method=method, device=f"cuda:{g.device}", stats=MatchingStats(**stats))


def _cardinality(stats: dict, col4row) -> int:
    """The matching's size, taken out of the core's `stats`: the GPU methods
    count it on the device (no pass over the mates here); for the others
    (-1) it is counted on the host."""
    counted = stats.pop("cardinality")
    return int(counted) if counted >= 0 else int(np.count_nonzero(col4row >= 0))


def _match(g: Bipartite, start: float, method: str, device, tuning: _Tuning) -> MatchingResult:
    method, backend, ordinal = _resolve(g, method, device, tuning.threads)
    cpu_method = _auto_method(g, "cpu", tuning.threads)
    return _device.with_cpu_fallback(
        device, backend,
        lambda: _result(_solve(g, method, ordinal, tuning), method, backend, ordinal, start),
        lambda: _result(_solve(g, cpu_method, 0, tuning), cpu_method, "cpu", 0, start),
        stacklevel=3)


def _result(solved, method: str, backend: str, ordinal: int, start: float) -> MatchingResult:
    """A MatchingResult from a solve's (col4row, row4col, stats)."""
    col4row, row4col, stats = solved
    stats["seconds_total"] = time.perf_counter() - start
    return MatchingResult(
        col4row=col4row, row4col=row4col, cardinality=_cardinality(stats, col4row),
        method=method, device=_device.device_name(backend, ordinal),
        stats=MatchingStats(**stats))


def maximum_bipartite_matching(graph, perm_type: str = "row", *, method: str = "auto",
                               device: str = "auto") -> np.ndarray:
    """Maximum cardinality matching; a drop-in for SciPy's function of this name.

    Parameters
    ----------
    graph : scipy.sparse matrix or array, shape (n_rows, n_cols)
        Every stored entry, explicit zeros included, is an edge.  A graph in
        GPU memory (see `maximum_matching`) is solved there, and the result
        is an array of its kind on its device, ordered on the caller's
        current stream (no synchronisation).
    perm_type : {"row", "column"}
        "row": return, for each column, the row matched to it; "column":
        for each row, the column matched to it.  Unmatched vertices get -1.
    method, device : str
        See `maximum_matching`.

    Returns
    -------
    ndarray of int32 (or a CuPy array / torch tensor for such an input)
        Length n_cols for "row", n_rows for "column".

    Raises
    ------
    TypeError
        If `graph` is not sparse (as SciPy).
    ValueError
        For an unknown `perm_type`, `method` or `device` string, or a
        malformed sparse structure.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from matchflow import maximum_bipartite_matching
    >>> g = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0]]))  # row 1 must take column 0
    >>> maximum_bipartite_matching(g, perm_type="column", method="pr").tolist()
    [1, 0]
    """
    check_choice(perm_type, "perm_type", ("row", "column"))
    if _darr.is_device_sparse(graph):
        result = _match_on_device(_darr.sparse_pattern(graph), time.perf_counter(), method,
                                  device, _Tuning())
    else:
        result = _match_host(graph, time.perf_counter(), method, device, _Tuning())
    return result.row4col if perm_type == "row" else result.col4row


def structural_rank(graph) -> int:
    """Structural rank: the size of a maximum matching of the sparsity pattern.

    A drop-in for `scipy.sparse.csgraph.structural_rank`.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import structural_rank
    >>> structural_rank(sp.csr_array([[1, 0, 0], [1, 0, 0], [0, 1, 1]]))
    2
    """
    if _darr.is_device_sparse(graph):
        return _match_on_device(_darr.sparse_pattern(graph), time.perf_counter(), "auto",
                                "auto", _Tuning()).cardinality
    return _match_host(graph, time.perf_counter(), "auto", "auto", _Tuning(),
                       sparse_message="Input must be sparse").cardinality

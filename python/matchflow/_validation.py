"""Input checks and conversion, done once at the Python boundary.

Below this layer the bindings and the CUDA code check nothing, and the C++
core checks only what is cheaper where the data is read, with SciPy's
messages: the structure of compressed index arrays (`validate.cpp`, one
parallel pass that `_checked_compressed` calls from here) and, in its first
pass over the costs, the small-matrix assignment solver's NaN, infinities,
inexact integers and infeasibility (`shortest_augmenting_path.cpp`, whose
refusal sends the call down the full path that checks here).  Everything
else the core assumes, and states as debug assertions (MATCHFLOW_ASSERT,
`cpp/include/matchflow/detail/assert.hpp`).
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _core

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max

# OpenMP teams larger than this are refused: libgomp aborts the process when
# it cannot create the threads asked for, and no algorithm here gains from
# more threads than cores.
MAX_THREADS = 1024


@dataclass(frozen=True)
class Bipartite:
    """A validated sparse pattern: CSR with int64 offsets and int32 ids.

    The column orientation is built by the core, and only when an algorithm
    needs it.
    """

    n_rows: int
    n_cols: int
    row_ptr: np.ndarray  # row -> columns
    row_adj: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.row_adj.shape[0])


def _checked_compressed(matrix) -> tuple[np.ndarray, np.ndarray]:
    """A CSR or CSC matrix's index arrays as (int64 offsets, int32 ids), checked.

    SciPy's O(1) checks and messages first (lengths, ptr[0] == 0; trims
    unused storage), then the O(nnz) pass in parallel in the core, with
    SciPy's messages: SciPy's own full_check takes three sequential NumPy
    passes (16 ms of a 27 ms GPU call on R-MAT scale 20).
    """
    matrix.check_format(full_check=False)
    ptr = matrix.indptr
    if ptr.dtype == np.int32:
        ptr = _core.widened_offsets(np.ascontiguousarray(ptr))  # on the team, page faults too
    else:
        ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    ids = matrix.indices
    if ids.dtype != np.int32 and ids.dtype != np.int64:
        ids = ids.astype(np.int64)
    ids = np.ascontiguousarray(ids)
    n_minor = matrix.shape[1] if matrix.format == "csr" else matrix.shape[0]
    _core.validate_compressed(ptr, ids, n_minor)
    return ptr, ids.astype(np.int32, copy=False)  # ids < n_minor < 2**31 now


def _check_structure(graph) -> None:
    """Reject index arrays that would make SciPy's own conversions misbehave."""
    fmt = graph.format
    if fmt == "csc":
        _checked_compressed(graph)
    elif fmt == "bsr":
        graph.check_format(full_check=True)
    elif fmt == "coo":
        n_rows, n_cols = graph.shape
        coords = graph.coords if hasattr(graph, "coords") else (graph.row, graph.col)
        if len(coords) != 2:
            raise ValueError("graph must be two-dimensional")
        for ids, bound, what in ((coords[0], n_rows, "row"), (coords[1], n_cols, "column")):
            if ids.size and (ids.min() < 0 or ids.max() >= bound):
                raise ValueError(f"{what} index out of range in COO graph")


def _csr_pattern(graph) -> tuple[np.ndarray, np.ndarray]:
    """(int64 row offsets, int32 column ids) of any checked sparse input."""
    if graph.format == "csr":
        return _checked_compressed(graph)
    _check_structure(graph)
    csr = graph.tocsr()
    return (np.ascontiguousarray(csr.indptr, dtype=np.int64),
            np.ascontiguousarray(csr.indices, dtype=np.int32))


def as_bipartite(graph, *, sparse_message: str = "graph must be sparse") -> Bipartite:
    """Validate a scipy.sparse matrix/array and return its CSR pattern.

    Explicit zeros are edges (as in SciPy).  Duplicate entries and unsorted
    indices are kept: every algorithm tolerates them.
    """
    if not sp.issparse(graph):
        raise TypeError(sparse_message)
    if len(graph.shape) != 2:
        raise ValueError("graph must be two-dimensional")
    n_rows, n_cols = (int(d) for d in graph.shape)
    check_vertex_ids(max(n_rows, n_cols), "rows or columns")
    check_allocation(_least_matching_bytes(graph), f"a matching of a {n_rows} x {n_cols} graph")
    row_ptr, row_adj = _csr_pattern(graph)
    return Bipartite(n_rows, n_cols, row_ptr, row_adj)


def check_vertex_ids(n: int, what: str) -> None:
    """The core numbers vertices with int32: ValueError past that."""
    if n >= _INT32_MAX:
        raise ValueError(f"graph has {n} {what}; at most {_INT32_MAX - 1} are supported")


def _least_matching_bytes(graph) -> int:
    """A lower bound on what a matching of `graph` allocates: int64 row
    offsets, both int32 mate arrays and, for other formats than CSR, the CSR
    conversion.  Checked before any of it, so that a huge shape with few
    stored entries is refused at once rather than after minutes of paging."""
    n_rows, n_cols = graph.shape
    need = 8 * (n_rows + 1) + 4 * (n_rows + n_cols)
    if graph.format != "csr":
        need += 8 * (n_rows + 1) + 12 * stored_entries(graph)
    return need


def stored_entries(graph) -> int:
    """`graph.nnz`, after SciPy's O(1) structure checks where the format has
    them: a compressed format's nnz is its last offset, which a corrupted
    input may set anywhere (ValueError, as SciPy, not a MemoryError)."""
    if graph.format in ("csr", "csc", "bsr"):
        graph.check_format(full_check=False)
    return int(graph.nnz)


def check_choice(value, name: str, choices) -> str:
    """`value` must be one of `choices` (strings); ValueError naming them otherwise."""
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_threads(threads) -> int:
    """None -> 0 (OpenMP default, which follows OMP_NUM_THREADS); else an int
    in [1, MAX_THREADS]."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive integer or None; got {threads!r}")
    if threads > MAX_THREADS:
        raise ValueError(f"threads must be at most {MAX_THREADS}; got {threads}")
    return int(threads)


def team_size(threads: int) -> int:
    """The OpenMP team a CPU method runs on: `threads` (check_threads'
    value), or by default OMP_NUM_THREADS, else the cores this process may
    use."""
    if threads > 0:
        return threads
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# ---- memory: refuse at once what cannot fit -------------------------------------

# Allocations below this size are not checked (reading /proc costs ~20 us).
_UNCHECKED_BYTES = 1 << 26


def _proc_field(path: str, field: str) -> int | None:
    """A "Name:  value kB" field of a /proc file, in bytes; None if absent."""
    try:
        with open(path) as proc:
            for line in proc:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory() -> int:
    """Bytes of host memory a new allocation can get now: Linux's
    MemAvailable, further bounded by this process's address-space limit
    (RLIMIT_AS) where one is set; elsewhere the physical memory; unbounded
    when nothing is known."""
    free = _proc_field("/proc/meminfo", "MemAvailable:")
    if free is None:
        try:
            free = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = sys.maxsize
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        limit = -1
    if limit != -1 and limit != getattr(resource, "RLIM_INFINITY", -1):
        used = _proc_field("/proc/self/status", "VmSize:") or 0
        free = min(free, max(limit - used, 0))
    return free


def _size_text(nbytes: int) -> str:
    """NumPy's way of writing a size in its MemoryError ("7.28 TiB")."""
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    step = min(int(math.log(max(nbytes, 1), 1024)), len(units) - 1)
    return f"{nbytes} bytes" if step == 0 else f"{nbytes / 1024 ** step:#.3g} {units[step]}"


def check_allocation(nbytes: int, what: str) -> None:
    """Raise at once for an allocation of `nbytes` that cannot succeed:
    ValueError past the address space (NumPy's message) and MemoryError past
    the memory available now, worded as NumPy words it ("Unable to allocate
    7.28 TiB for ...").  Called before any copy of, or pass over, an input
    whose logical size may dwarf its storage (broadcast views, huge sparse
    shapes), so that such inputs are refused in microseconds instead of
    after a pass over every logical entry."""
    if nbytes > sys.maxsize:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                         "the maximum possible size.")
    if nbytes >= _UNCHECKED_BYTES and nbytes > available_memory():
        raise MemoryError(f"Unable to allocate {_size_text(nbytes)} for {what}")


def check_array_copy(shape, dtype) -> None:
    """`check_allocation` for a copy of an array of `shape` and `dtype`."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(int(d) for d in shape) * dtype.itemsize
    check_allocation(nbytes, f"an array with shape {tuple(int(d) for d in shape)} "
                             f"and data type {dtype}")

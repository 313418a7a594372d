"""Sparse linear assignment: the SciPy drop-in
(`scipy.sparse.csgraph.min_weight_full_bipartite_matching`) and the rich
entry point with duals.

Validation and conversion happen here, once, with SciPy's checks and
messages in SciPy's order; the C++ core (cpp/src/lsap/sparse_shortest_path.cpp)
assumes a CSR pattern with n_rows <= n_cols, no duplicate entries and finite
int64 or float64 weights, to be minimised.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp

from . import _core, _device
from ._lsap import _float_sum
from ._lsap_common import AssignmentResult, AssignmentStats, assignment_pairs
from ._validation import (_INT64_MAX, _check_structure, _checked_compressed,
                          _least_matching_bytes, check_allocation, check_choice, check_threads,
                          check_vertex_ids)

CPU_METHODS = ("sparse-sap",)
# The same solver with the auction start of square problems on the GPU
# (cuda/src/lsap/sparse_auction.cu); the exact searches stay on the CPU.
GPU_METHODS = ("gpu-sparse-sap",)
METHODS = ("auto",) + CPU_METHODS + GPU_METHODS
# device="auto" takes the GPU for square problems from this many stored
# entries, where it beat sparse-sap on 16 threads (benchmarks/NOTES.md, "The `auto` thresholds").
GPU_MIN_ENTRIES = 1 << 19
# n times the largest |weight| stays below 2**this in the core (see _solve_float).
_FLOAT_PATH_LOG2 = 1000


def _as_weighted_csr(biadjacency, maximize: bool):
    """SciPy's checks and conversions, in SciPy's order; returns the matrix
    to minimise, oriented n_rows <= n_cols, as (indptr int64, indices int32,
    data int64 or float64, n_cols, transposed)."""
    if not sp.issparse(biadjacency):
        raise TypeError("graph must be sparse")
    if biadjacency.format not in ("csr", "csc", "coo"):
        raise TypeError("graph must be in CSC, CSR, or COO format.")
    dtype = biadjacency.dtype
    if not (np.issubdtype(dtype, np.number) or dtype == np.dtype(np.bool_)):
        raise ValueError("expected a matrix containing numerical entries, " +
                         "got %s" % (dtype,))
    if len(biadjacency.shape) != 2:
        raise ValueError("graph must be two-dimensional")
    check_vertex_ids(max(biadjacency.shape), "rows or columns")
    n_rows, n_cols = (int(d) for d in biadjacency.shape)
    # Refuse at once what cannot fit (a huge shape with few entries), before
    # any conversion allocates by the shape.
    check_allocation(_least_matching_bytes(biadjacency) + 16 * (n_rows + n_cols),
                     f"an assignment of a {n_rows} x {n_cols} graph")
    # Index arrays checked before SciPy's own conversions read them.
    if biadjacency.format == "csr":
        _checked_compressed(biadjacency)
    else:
        _check_structure(biadjacency)
    # Integers (and booleans) are solved exactly in int64 where SciPy rounds
    # them to float64; everything else is cast as SciPy casts it (complex:
    # NumPy's ComplexWarning, the imaginary part dropped).
    integer = dtype.kind in "biu" and not (
        dtype == np.uint64 and biadjacency.nnz and biadjacency.data.max() > _INT64_MAX)
    m = biadjacency.astype(np.int64 if integer else np.float64)
    if maximize:
        m = -m
    if not np.all(m.data):
        warnings.warn("explicit zero weights are removed before matching", stacklevel=3)
    transposed = n_rows > n_cols
    m = (m.T if transposed else m).tocsr()
    m.sum_duplicates()  # duplicates are one entry, their sum (SciPy's COO path does the same)
    data = m.data
    if not integer:
        if np.isnan(data).any() or np.isneginf(data).any():
            # SciPy returns an arbitrary matching for NaN and raises "no full
            # matching exists" for -inf; linear_sum_assignment's error instead.
            raise ValueError("matrix contains invalid numeric entries")
        keep = (data != 0) & ~np.isposinf(data)
    else:
        keep = data != 0
    indptr = np.asarray(m.indptr, dtype=np.int64)
    indices = m.indices
    if not keep.all():
        rows = np.repeat(np.arange(m.shape[0]), np.diff(indptr))
        counts = np.bincount(rows[keep], minlength=m.shape[0])
        indptr = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
        indices, data = indices[keep], data[keep]
    return (indptr, np.ascontiguousarray(indices, dtype=np.int32),
            np.ascontiguousarray(data), int(m.shape[1]), transposed)


def _solve_csr(indptr, indices, data, n_cols, threads, gpu):
    """Runs the core (the auction start on GPU `gpu`, or on the CPU when it
    is -1); int64 weights too large to solve exactly in int64 (OverflowError
    from its first pass) are solved in float64, as SciPy solves every input."""
    if data.dtype == np.float64:
        return _solve_float(indptr, indices, data, n_cols, threads, gpu)
    try:
        return _core.lsap_sparse(indptr, indices, data, n_cols, threads, gpu)
    except OverflowError:
        if data.dtype != np.int64:
            raise
        return _solve_float(indptr, indices, data.astype(np.float64), n_cols, threads, gpu)


def _solve_float(indptr, indices, data, n_cols, threads, gpu):
    """The core on float64 weights, scaled by a power of two (exact, and the
    optimum is the same) when they are so large that a path's sum of duals
    and weights could overflow: near 1e308 the duals would turn inf and NaN
    and the assignment be wrong.  The duals are scaled back."""
    big = max(float(data.max()), -float(data.min())) if data.size else 0.0
    excess = math.log2(big) + math.log2(max(indptr.size - 1, n_cols, 8)) - _FLOAT_PATH_LOG2 \
        if big > 0 else 0.0
    shift = max(0, math.ceil(excess))
    if shift == 0:
        return _core.lsap_sparse(indptr, indices, data, n_cols, threads, gpu)
    col4row, u, v, stats = _core.lsap_sparse(indptr, indices, np.ldexp(data, -shift), n_cols,
                                             threads, gpu)
    return col4row, np.ldexp(u, shift), np.ldexp(v, shift), stats


def _solve(biadjacency, maximize, method, device, threads):
    start = time.perf_counter()
    check_choice(method, "method", METHODS)
    n_threads = check_threads(threads)
    indptr, indices, data, n_cols, transposed = _as_weighted_csr(biadjacency, bool(maximize))
    square = indptr.size - 1 == n_cols
    method, backend, ordinal = _device.resolve_method(
        method, device, CPU_METHODS, GPU_METHODS,
        large_enough=square and indices.size >= GPU_MIN_ENTRIES)
    if method == "auto":
        method = "gpu-sparse-sap" if backend == "cuda" else "sparse-sap"
    gpu = ordinal if backend == "cuda" else -1
    col4row, u, v, stats = _solve_csr(indptr, indices, data, n_cols, n_threads, gpu)
    # The cost, from the stored entries on the assignment (one per row).
    rows = np.repeat(np.arange(col4row.shape[0]), np.diff(indptr))
    picked = data[indices == col4row[rows]] if rows.size else data[:0]
    cost = int(picked.sum()) if data.dtype == np.int64 else _float_sum(picked)
    if maximize:
        cost, u, v = -cost, -u, -v
    row_ind, col_ind, u, v = assignment_pairs(col4row, u, v, transposed)
    name = _device.device_name(backend, ordinal)
    searches = stats["augmenting_paths"]
    return AssignmentResult(
        row_ind=row_ind, col_ind=col_ind, cost=cost, u=u, v=v, method=method, device=name,
        stats=AssignmentStats(
            seconds_total=time.perf_counter() - start, seconds_init=stats["seconds_init"],
            seconds_solve=stats["seconds_solve"], iterations=searches,
            augmenting_paths=searches, dual_updates=stats["columns_scanned"], device=name))


def solve_sparse_assignment(biadjacency, maximize=False, *, method: str = "auto",
                            device: str = "auto", threads: int | None = None
                            ) -> AssignmentResult:
    """Solve the sparse linear assignment problem; return the assignment with
    its cost, dual certificate and statistics.

    Accepts everything `min_weight_full_bipartite_matching` accepts, with the
    same errors and warnings; in addition integer (and boolean) weights are
    solved exactly in int64 (float64 past ``max(n_rows, n_cols, 8) * max|w|
    > 2**58``).

    Parameters
    ----------
    biadjacency : sparse array or matrix, CSR, CSC or COO, shape (n_rows, n_cols)
        Stored entries are the allowed pairs and their weights.  As in SciPy,
        explicit zeros and ``+inf`` entries (``-inf`` when maximising) are
        removed, zeros with a warning; duplicate entries are summed.
    maximize : bool
        Maximise the total weight instead.
    method : {"auto", "sparse-sap", "gpu-sparse-sap"}
        "sparse-sap": a start (square: Bertsekas' auction with
        epsilon-scaling, whose duals leave few rows unassigned; otherwise
        Jonker & Volgenant's row reduction) and augmenting row reduction,
        then shortest augmenting paths (4-ary-heap Dijkstra over the stored
        entries) for the remaining rows, exact whatever the start.
        "gpu-sparse-sap": the same with the auction on the GPU (the rest,
        and rectangular problems entirely, on the CPU).  "auto": the GPU
        method for square problems with at least 2**19 stored entries when
        `device` allows a GPU (and always when it names one), else
        "sparse-sap".
    device : {"auto", "cpu", "cuda", "cuda:N"}
        Where the auction start runs; an explicit GPU raises RuntimeError
        where there is none.
    threads : int, optional
        OpenMP threads of the CPU's auction start (square problems; default:
        all, or ``OMP_NUM_THREADS``).  The answer is the same for every
        count; the searches after it are sequential.

    Returns
    -------
    AssignmentResult
        `row_ind`, `col_ind` (int64, `row_ind` sorted), `cost` (an int for
        integer weights), the duals `u` (rows) and `v` (columns): minimising,
        ``u[i] + v[j] <= w[i, j]`` on every kept entry with equality on the
        assigned pairs, the longer side's duals <= 0 and 0 where unassigned,
        so ``u.sum() + v.sum() == cost``; maximising, the same with ``>=``.
        `stats.augmenting_paths` counts the Dijkstra searches and
        `stats.dual_updates` the columns they finalised.

    Raises
    ------
    TypeError, ValueError
        As `min_weight_full_bipartite_matching`; also ValueError "matrix
        contains invalid numeric entries" for NaN or ``-inf`` (``+inf`` when
        maximising), where SciPy answers arbitrarily.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import solve_sparse_assignment
    >>> r = solve_sparse_assignment(sp.csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]]))
    >>> r.col_ind.tolist(), r.cost
    ([0, 2, 1], 9)
    >>> int(r.u.sum() + r.v.sum())  # the dual objective equals the cost
    9
    """
    return _solve(biadjacency, maximize, method, device, threads)


def min_weight_full_bipartite_matching(biadjacency, maximize=False, *, method: str = "auto",
                                       device: str = "auto", threads: int | None = None):
    """Minimum weight full matching of a bipartite graph; a drop-in for
    `scipy.sparse.csgraph.min_weight_full_bipartite_matching`.

    Parameters
    ----------
    biadjacency : sparse array or matrix, CSR, CSC or COO, shape (n_rows, n_cols)
        Stored entries are the edges, weighted by their values; explicit
        zeros are removed before matching, with SciPy's warning.
    maximize : bool
        Calculates a maximum weight matching if true.
    method, device, threads
        See `solve_sparse_assignment`.

    Returns
    -------
    row_ind, col_ind : ndarray
        The matching, of size ``min(n_rows, n_cols)``: its weight is
        ``biadjacency[row_ind, col_ind].sum()``.  `row_ind` is sorted.  As
        SciPy's, the index arrays are int64 and int32: `col_ind` is int32
        when n_rows <= n_cols, `row_ind` otherwise.

    Raises
    ------
    TypeError
        "graph must be sparse", "graph must be in CSC, CSR, or COO format."
    ValueError
        "no full matching exists", "expected a matrix containing numerical
        entries, got <dtype>"; and "matrix contains invalid numeric entries"
        for NaN or ``-inf`` weights, where SciPy answers arbitrarily.

    Examples
    --------
    >>> from scipy.sparse import csr_array
    >>> from matchflow import min_weight_full_bipartite_matching
    >>> biadjacency = csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> row_ind, col_ind = min_weight_full_bipartite_matching(biadjacency)
    >>> print(col_ind)
    [0 2 1]
    >>> print(biadjacency[row_ind, col_ind].sum())
    9
    """
    r = _solve(biadjacency, maximize, method, device, threads)
    if biadjacency.shape[0] > biadjacency.shape[1]:
        return r.row_ind.astype(np.int32), r.col_ind
    return r.row_ind, r.col_ind.astype(np.int32)

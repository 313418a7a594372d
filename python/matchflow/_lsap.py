"""Linear sum assignment: the SciPy drop-in and the rich entry point.

Validation and conversion happen here, once; the C++ core (omp-tree) and
the CUDA kernels (gpu-tree, gpu-classic, gpu-auction) assume a valid,
C-contiguous, n_rows <= n_cols matrix of float64, float32, int64 or int32
(passed on as they are: the GPU reads them without a host pass) to be minimised, whose
+inf entries (forbidden pairs) still leave a full assignment.  The one
exception is the small-matrix route of `linear_sum_assignment`: its solver
(SciPy's algorithm) checks its input in its first pass and declines what it
cannot solve exactly, which then takes the full path here.
"""
from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from . import _core, _device, _lsap_multi
from . import _device_arrays as _darr
from ._lsap_common import (_METHOD_CODES, CPU_METHODS, GPU_METHODS, METHODS, AssignmentResult,
                           AssignmentStats, assignment_pairs, auction_fits, int64_overflow)
from ._validation import check_array_copy, check_choice, check_threads

# Looked up once, not per call, on the small-matrix path of linear_sum_assignment.
_ndarray = np.ndarray
_FLOAT64 = np.dtype(np.float64)
_AUTO = "auto"
_shortest_path = _core.lsap_shortest_path


# Below this many cost entries "auto" stays on the CPU: the smallest size
# where the GPU was measured faster (benchmarks/NOTES.md, "The `auto`
# thresholds").
GPU_MIN_ELEMENTS = 250_000
# Floating costs have few ties, so gpu-tree augments about one path per
# iteration: omp-tree on 16 threads was faster up to n = 5000
# (benchmarks/NOTES.md, "The `auto` thresholds").
GPU_MIN_FLOAT_ELEMENTS = 50_000_000
# Integer costs spread wider than this many values per row or column have
# few ties too and take the floating threshold (benchmarks/NOTES.md, "The
# `auto` thresholds").
FEW_TIES_SPREAD = 10

# Integer costs are solved exactly in int64.  The duals stay within
# [-8 M, 8 M] for M = max |c| (see hungarian_omp.cpp), and the objective
# within n M; max(n, 8) * M <= 2**62 keeps both far from int64 overflow.
# The C++ solvers check it in their first pass over the costs (no extra
# pass here) and return status::overflow, raised as OverflowError.

# Small problems in `linear_sum_assignment(..., method="auto")` go to the
# shortest augmenting path solver (cpp/src/lsap/shortest_augmenting_path.cpp):
# SciPy's algorithm, giving SciPy's arrays, behind a binding cheap enough
# that at n = 1 the whole call costs no more than SciPy's, and below SciPy's
# time on every shape and cost range measured, while omp-tree's ratio swings
# with the ties (benchmarks/NOTES.md, "Tiny sizes"): floats up to the GPU
# threshold, integers (and booleans) up to 50k entries.
# The solver works in float64 and declines (returns None) what float64
# would not solve exactly, NaN, infeasible input and dtypes it does not
# read; the full path takes those, with SciPy's errors.
SHORTEST_PATH_MAX_FLOAT_ELEMENTS = GPU_MIN_ELEMENTS
SHORTEST_PATH_MAX_INT_ELEMENTS = 50_000


# ---- input conversion (SciPy's semantics) -----------------------------------------

def _scipy_float64(cost_matrix) -> np.ndarray:
    """SciPy's own conversion (PyArray_ContiguousFromAny(obj, NPY_DOUBLE)):
    arrays are cast safely (TypeError otherwise), anything else is built
    directly as float64 (ValueError for strings, NaN for None)."""
    if isinstance(cost_matrix, np.ndarray):
        return np.asarray(cost_matrix).astype(np.float64, casting="safe", copy=False)
    return np.asarray(cost_matrix, dtype=np.float64)


def _plain_array(cost_matrix) -> np.ndarray | None:
    """NumPy's view of anything array-like (a subclass's data, a list's
    values), or None where NumPy cannot make one; the full path then gives
    SciPy's error."""
    try:
        if (type(cost_matrix) is list and len(cost_matrix) > 4
                and type(cost_matrix[0]) is list and cost_matrix[0]
                and type(cost_matrix[0][0]) is float):
            # NumPy would infer float64 (or fail, as this does): skip the
            # inference, 10-15% of SciPy's whole call on a 30 x 30 list
            # (below 5 rows, passing a dtype costs more than it saves).
            return np.asarray(cost_matrix, _FLOAT64)
        return np.asarray(cost_matrix)
    except (ValueError, TypeError, OverflowError):
        return None


def _readable_copy(c: np.ndarray) -> np.ndarray | None:
    """A native, aligned copy of a 2-D real or boolean array that the
    compiled shortest path could not read as it is (byte-swapped or
    unaligned), float16 as float64 (SciPy's cast); None when a copy would
    not help.  Which dtypes it reads is the binding's to say: a copy it
    still declines goes to the full path."""
    if c.ndim != 2 or c.dtype.kind not in "biuf":
        return None
    if c.dtype.kind == "f" and c.dtype.itemsize == 2:
        return c.astype(np.float64)
    if c.dtype.isnative and c.flags.aligned:
        return None
    return c.astype(c.dtype.newbyteorder("="))


def _as_cost_array(cost_matrix) -> np.ndarray:
    """The cost matrix in the dtype the core reads: int32 for int32 (as it
    is), bool and the narrower integers, int64 for the wider ones, float32
    for float16/float32, float64 for everything else SciPy accepts; SciPy's
    exception for everything it rejects.  The core solves every integer
    input exactly in int64."""
    if isinstance(cost_matrix, np.ndarray):
        arr = np.asarray(cost_matrix)  # matrix, masked arrays: their data, as SciPy
    else:
        with warnings.catch_warnings():
            # e.g. ragged input: let SciPy's conversion say what is wrong
            warnings.simplefilter("ignore")
            try:
                arr = np.asarray(cost_matrix)
            except (ValueError, TypeError):
                return _scipy_float64(cost_matrix)
        if arr.dtype.kind not in "biuf":
            return _scipy_float64(cost_matrix)
    kind = arr.dtype.kind
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        # The solve copies it: refuse at once a copy that cannot fit (a
        # broadcast view of 10^12 logical entries), as SciPy's own copy does,
        # before any pass over its entries.
        check_array_copy(arr.shape, np.float32 if arr.dtype.itemsize <= 4 and kind == "f"
                         else np.int64 if kind in "biu" else np.float64)
    if kind == "b" or (kind in "iu" and arr.dtype.itemsize < 4) or arr.dtype == np.int32:
        return arr.astype(np.int32, copy=False)
    if kind in "iu":
        if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
            return arr.astype(np.float64)  # as SciPy: rounded to float64
        return arr.astype(np.int64, copy=False)
    if arr.dtype in (np.float16, np.float32):
        return arr.astype(np.float32, copy=False)
    if arr.dtype == np.float64:
        return arr
    return _scipy_float64(arr)  # longdouble, complex, strings, objects...: SciPy's TypeError


def _check_2d(c: np.ndarray) -> None:
    if c.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {c.ndim} array")


def _has_forbidden(c: np.ndarray) -> bool:
    """Raises SciPy's ValueError for NaN / -inf; True if +inf entries exist."""
    if c.dtype.kind != "f":
        return False
    low = c.min()
    if np.isnan(low) or low == -np.inf:
        raise ValueError("matrix contains invalid numeric entries")
    return bool(c.max() == np.inf)


def _check_feasible(c: np.ndarray) -> None:
    """A full assignment must avoid every +inf: a maximum matching of the
    allowed (finite) pattern must cover the shorter side."""
    from ._matching import maximum_matching

    pattern = sp.csr_array(np.isfinite(c))
    pattern.eliminate_zeros()
    matched = maximum_matching(pattern, device="cpu").cardinality
    if matched < min(c.shape):
        raise ValueError("cost matrix is infeasible")


# ---- method and device -----------------------------------------------------

def _few_ties(c: np.ndarray) -> bool:
    """Floating costs, or integers whose spread, sampled on a grid of at
    most 64 x 64 entries, exceeds FEW_TIES_SPREAD per row or column.  The
    sample costs microseconds where a full min/max pass would cost a tenth
    of the GPU's solve; a spread it underestimates errs towards the GPU."""
    if c.dtype.kind == "f":
        return True
    if not GPU_MIN_ELEMENTS <= c.size < GPU_MIN_FLOAT_ELEMENTS:
        return False  # both thresholds agree
    sample = c[::max(1, c.shape[0] // 64), ::max(1, c.shape[1] // 64)]
    return int(sample.max()) - int(sample.min()) > FEW_TIES_SPREAD * max(c.shape)


def _resolve(shape, method: str, device, few_ties: bool = False) -> tuple[str, str, int]:
    """Pick (method, backend, ordinal) from the user's method= and device=."""
    check_choice(method, "method", METHODS)
    auction = few_ties and auction_fits(shape)
    threshold = GPU_MIN_FLOAT_ELEMENTS if few_ties and not auction else GPU_MIN_ELEMENTS
    method, backend, ordinal = _device.resolve_method(
        method, device, CPU_METHODS, GPU_METHODS,
        large_enough=shape[0] * shape[1] >= threshold)
    if method == "auto" and backend == "cuda":
        # gpu-tree was faster end to end than gpu-classic on 11 of the 12
        # instances of paper 001's Tables 1 and 3 (benchmarks/NOTES.md, "The
        # `auto` thresholds").
        method = "gpu-auction" if auction else "gpu-tree"
    elif method == "auto":
        method = "omp-tree"
    return method, backend, ordinal


def _run(c: np.ndarray, method: str, ordinal: int, threads: int):
    return _core.lsap_dense(c, _METHOD_CODES[method], threads, ordinal)


# ---- the solve ---------------------------------------------------------------

def _empty_result(c: np.ndarray, method: str, backend: str, ordinal: int,
                  start: float) -> AssignmentResult:
    """An empty dimension: nothing to assign (nothing is run)."""
    empty = np.empty(0, dtype=np.int64)
    zero = 0 if c.dtype.kind == "i" else 0.0
    dual = np.int64 if c.dtype.kind == "i" else c.dtype
    name = _device.device_name(backend, ordinal)
    return AssignmentResult(
        row_ind=empty, col_ind=empty.copy(), cost=zero,
        u=np.zeros(c.shape[0], dtype=dual), v=np.zeros(c.shape[1], dtype=dual),
        method=method, device=name,
        stats=AssignmentStats(seconds_total=time.perf_counter() - start, device=name))


def _float_sum(values) -> float:
    """NumPy's sum, or where it overflows, the exact sum rounded once: a
    partial sum of values near 1e308 can overflow where the total does not,
    so the values are summed scaled by 2**-64 (exact; what underflows is far
    below the total's last bit) and the sum scaled back.  +-inf where the
    total itself overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(values))
    if math.isfinite(total):
        return total
    try:
        return math.ldexp(math.fsum(np.ldexp(values, -64)), 64)
    except OverflowError:
        return total


def _solve_oriented(c: np.ndarray, maximize: bool, method: str, backend: str, ordinal: int,
                    device, n_threads: int):
    """Negate, check forbidden entries, transpose and run; (row_ind, col_ind,
    u, v, stats, method, backend, ordinal) in the caller's orientation."""
    # int32 is negated into int64: -(-2**31) does not fit.
    work = (np.negative(c, dtype=np.int64) if c.dtype == np.int32 else -c) if maximize else c
    if _has_forbidden(work):
        _check_feasible(work)
    transposed = work.shape[0] > work.shape[1]
    if transposed:
        work = work.T
    work = np.ascontiguousarray(work)
    method, backend, ordinal, (col4row, u, v, stats) = _device.with_cpu_fallback(
        device, backend,
        lambda: (method, backend, ordinal, _run(work, method, ordinal, n_threads)),
        lambda: ("omp-tree", "cpu", 0, _run(work, "omp-tree", 0, n_threads)),
        stacklevel=4)
    row_ind, col_ind, u, v = assignment_pairs(col4row, u, v, transposed)
    if maximize:
        u, v = -u, -v
    return row_ind, col_ind, u, v, stats, method, backend, ordinal


def _solve(cost_matrix, maximize, method, device, threads, *,
           exact_ints: bool) -> AssignmentResult:
    gpus = _lsap_multi.part_devices(device)
    if _lsap_multi.is_block_list(cost_matrix):  # column blocks, one per GPU
        return _lsap_multi.solve_blocks(cost_matrix, bool(maximize), method,
                                        exact_ints=exact_ints)
    if gpus is not None and _darr.is_device_array(cost_matrix):
        raise ValueError("a GPU array is solved on its own GPU; to split it over several, "
                         "pass its column blocks (a list of arrays, one per GPU)")
    if gpus is not None and len(gpus) == 1:
        device = _lsap_multi.single_device(gpus)  # one part: the single-device solvers
    if _darr.is_device_array(cost_matrix):  # solved where it is (_lsap_device.py)
        from ._lsap_device import solve_on_device
        return solve_on_device(cost_matrix, maximize, method, device, threads,
                               exact_ints=exact_ints)
    start = time.perf_counter()
    n_threads = check_threads(threads)
    c = _as_cost_array(cost_matrix)
    _check_2d(c)
    maximize = bool(maximize)
    if gpus is not None and len(gpus) > 1:
        _lsap_multi.check_method(method, gpus)
        if 0 not in c.shape and not _lsap_multi.one_gpu_is_faster(device, c.shape):
            return _lsap_multi.solve_host(c, maximize, method, gpus, exact_ints=exact_ints)
        device = _lsap_multi.single_device(gpus)
    method, backend, ordinal = _resolve(c.shape, method, device, _few_ties(c))
    if c.shape[0] == 0 or c.shape[1] == 0:
        return _empty_result(c, method, backend, ordinal, start)
    try:
        solved = _solve_oriented(c, maximize, method, backend, ordinal, device, n_threads)
    except OverflowError:
        # The core found max(n_rows, n_cols, 8) * max|c| > 2**62 in its first
        # pass over the (integer) costs.
        if c.dtype != np.int64:
            raise
        if exact_ints:
            raise int64_overflow(max(abs(int(c.min())), abs(int(c.max()))), c.shape) from None
        c = c.astype(np.float64)  # what SciPy does with every input
        solved = _solve_oriented(c, maximize, method, backend, ordinal, device, n_threads)
    row_ind, col_ind, u, v, stats, method, backend, ordinal = solved
    picked = c[row_ind, col_ind]
    cost = (int(picked.sum()) if c.dtype.kind == "i"
            else _float_sum(np.asarray(picked, dtype=np.float64)))
    device_name = _device.device_name(backend, ordinal)
    stats["seconds_total"] = time.perf_counter() - start
    return AssignmentResult(row_ind=row_ind, col_ind=col_ind, cost=cost, u=u, v=v,
                            method=method, device=device_name,
                            stats=AssignmentStats(device=device_name, **stats))


def solve_assignment(cost_matrix, maximize=False, *, method: str = "auto",
                     device: str | Sequence[str] = "auto",
                     threads: int | None = None) -> AssignmentResult:
    """Solve the linear sum assignment problem; return the assignment with
    its cost, dual certificate and statistics.

    Accepts everything `linear_sum_assignment` accepts, with the same
    errors; in addition integer (and boolean) costs are solved exactly in
    int64 and float32 costs in float32.

    Parameters
    ----------
    cost_matrix : array_like, shape (n_rows, n_cols)
        Any numeric or boolean 2-D array.  ``+inf`` marks a forbidden pair
        (``-inf`` when maximising); NaN is invalid.  A CuPy array or CUDA
        torch tensor is solved on its device by a GPU method, ordered on the
        caller's current stream, without a host copy; every array of the
        result is then of its kind, on its device.  A list of such arrays
        (int32, int64, float32 or float64, C-contiguous) is a matrix split
        into column blocks, block p on its own GPU: it is solved over those
        GPUs (multi-GPU gpu-tree) where it lies, and the result comes back
        as NumPy arrays.
    maximize : bool
        Maximise the total instead of minimising it.
    method : {"auto", "omp-tree", "gpu-tree", "gpu-classic", "gpu-auction"}
        "omp-tree": Date & Nagi's alternating-tree Hungarian algorithm on
        the CPU with OpenMP; "gpu-tree" / "gpu-classic": their GPU
        alternating-tree and classical variants (paper 001); "gpu-auction":
        Bertsekas' epsilon-scaling auction on the GPU (square problems;
        asynchronous bids), Jonker-Volgenant's augmenting row reduction,
        then exact shortest augmenting paths, in float64 (integers exactly
        while ``max(n_rows, n_cols, 8) * max|c| <= 2**50``; larger ones go
        to gpu-tree's int64 solve); at most 8192 columns.  "auto" picks by
        device: on a GPU, gpu-auction for square problems with few ties
        (floats, widely spread integers), else gpu-tree.
    device : {"auto", "cpu", "cuda", "cuda:N", "cuda:all"} or list of str
        "auto" uses a GPU when one is usable and the matrix is large enough
        to gain from it.  "cuda:all" or a list such as ``["cuda:0",
        "cuda:1"]`` splits the problem over those GPUs (paper 001's
        multi-GPU Hungarian: "gpu-tree", the default, splits the columns;
        "gpu-classic" the rows; a host matrix, `np.memmap` included, is
        read by each GPU in pieces, never copied whole), so that problems
        larger than one GPU's memory are solved; one GPU listed is the
        single-GPU solve, and a GPU listed twice holds two parts.
        "cuda:all" keeps problems of fewer than 32768 rows and columns on
        one GPU, which solves them faster.  A list of "cpu" parts runs the
        splits' CPU references (methods "tree-split" and "classic-split" in
        the result: the same exchanges, for checking).  Asking for a GPU
        that is not there raises RuntimeError.
    threads : int, optional
        OpenMP threads for "omp-tree" (default: OMP_NUM_THREADS or all cores).

    Returns
    -------
    AssignmentResult
        Its `device` names every GPU of a multi-GPU solve ("cuda:0,cuda:1").

    Raises
    ------
    ValueError
        Not 2-D, NaN or the wrong infinity ("matrix contains invalid
        numeric entries"), no assignment avoiding the forbidden pairs
        ("cost matrix is infeasible"), or a bad `method`/`device`/`threads`.
    TypeError
        A dtype SciPy cannot cast safely to float64 (complex, object, ...).
    OverflowError
        Integer costs so large that the exact int64 solve could overflow
        (``max(n_rows, n_cols, 8) * max|c| > 2**62``); convert to float64.

    Examples
    --------
    >>> import numpy as np
    >>> from matchflow import solve_assignment
    >>> r = solve_assignment(np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]]), method="omp-tree")
    >>> r.col_ind.tolist(), r.cost
    ([1, 0, 2], 5)
    >>> int(r.u.sum() + r.v.sum())  # the dual objective equals the cost
    5
    >>> # Over every GPU (on a machine without one: RuntimeError):
    >>> # solve_assignment(big_cost, device="cuda:all")
    >>> # solve_assignment(np.load("cost.npy", mmap_mode="r"), device=["cuda:0", "cuda:1"])
    """
    return _solve(cost_matrix, maximize, method, device, threads, exact_ints=True)


def linear_sum_assignment(cost_matrix, maximize=False, *, method: str = "auto",
                          device: str | Sequence[str] = "auto", threads: int | None = None):
    """Solve the linear sum assignment problem; a drop-in for
    `scipy.optimize.linear_sum_assignment`.

    Parameters
    ----------
    cost_matrix : array_like, shape (n_rows, n_cols)
        The cost matrix of the bipartite graph.  ``+inf`` entries are
        forbidden pairs (``-inf`` when maximising).  In GPU memory (CuPy,
        torch): see `solve_assignment`; `row_ind` and `col_ind` are then of
        its kind, on its device.
    maximize : bool
        Calculates a maximum weight matching if true.
    method, device, threads
        See `solve_assignment`.

    Returns
    -------
    row_ind, col_ind : ndarray of int64
        The optimal assignment: its cost is
        ``cost_matrix[row_ind, col_ind].sum()``.  `row_ind` is sorted; for a
        square matrix it equals ``numpy.arange(cost_matrix.shape[0])``.

    Raises
    ------
    ValueError, TypeError
        As SciPy: "expected a matrix (2-D array), got a N array", "matrix
        contains invalid numeric entries", "cost matrix is infeasible", and
        NumPy's conversion errors.

    Notes
    -----
    Integer costs are solved exactly in int64 unless they are so large that
    int64 could overflow; those are solved in float64, as SciPy solves
    every input.  With ``method="auto"`` and no `threads`, small matrices
    (`SHORTEST_PATH_MAX_FLOAT_ELEMENTS`, `SHORTEST_PATH_MAX_INT_ELEMENTS`)
    are solved on the CPU by SciPy's own algorithm, the shortest augmenting
    path of Crouse (2016), compiled behind a lighter call: the same arrays
    as SciPy's, ties included.

    Examples
    --------
    >>> import numpy as np
    >>> from matchflow import linear_sum_assignment
    >>> cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    >>> row_ind, col_ind = linear_sum_assignment(cost, method="omp-tree")
    >>> col_ind
    array([1, 0, 2])
    >>> int(cost[row_ind, col_ind].sum())
    5
    """
    # The default call on a small matrix goes straight to the compiled
    # shortest path solver (at n = 1 SciPy's whole call takes
    # ~0.4 us, so every test here counts).  `is` catches the defaults
    # (interned strings) before any string comparison.
    if (threads is None and (method is _AUTO or type(method) is str and method == "auto")
            and (device is _AUTO or type(device) is str and (device == "auto" or device == "cpu"))):
        c = cost_matrix
        if type(c) is not _ndarray:
            c = _plain_array(c)
        if c is not None and (c.size <= SHORTEST_PATH_MAX_INT_ELEMENTS or (
                c.size <= SHORTEST_PATH_MAX_FLOAT_ELEMENTS and c.dtype.kind == "f")):
            solved = _shortest_path(c, maximize)
            if solved is None and (copy := _readable_copy(c)) is not None:
                solved = _shortest_path(copy, maximize)
            if solved is not None:
                return solved
    result = _solve(cost_matrix, maximize, method, device, threads, exact_ints=False)
    return result.row_ind, result.col_ind

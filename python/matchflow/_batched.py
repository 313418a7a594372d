"""Batched linear sum assignment: a stack of problems of one shape, one call.

The Python layer only converts: dtype, contiguity, orientation are the
core's to handle, and it makes no pass over the costs.  The solvers check
them in their first pass (NaN and the wrong infinity) and find infeasible
problems themselves, naming the lowest failing batch index, so that the
whole call costs one pass over the stack more than the searches.

A stack in GPU memory (CuPy array, CUDA torch tensor) is solved where it
is by gpu-sap (`_solve_on_device`): the kernel reads the caller's stack
and writes result arrays of the caller's kind, on its current stream.
"""
from __future__ import annotations

import sys
import time
import warnings
from typing import Any

import numpy as np

from . import _core, _device
from . import _device_arrays as _darr
from ._lsap import _scipy_float64
from ._validation import check_choice, check_threads

_METHOD_CODES = _core.BATCHED_LSAP_METHODS
CPU_METHODS = ("omp-sap",)
GPU_METHODS = ("gpu-sap",)
METHODS = ("auto",) + CPU_METHODS + GPU_METHODS

# "auto" takes the GPU from this many entries in the whole stack (and when
# every problem fits gpu-sap): a gpu-sap call from NumPy costs about 2 ms
# however small, and omp-sap on 16 threads catches up near 0.6-1M entries
# (benchmarks/NOTES.md, "The `auto` thresholds").
GPU_MIN_ELEMENTS = 1 << 20
# gpu-sap keeps its per-column state (about 25 bytes per column) in shared
# memory; this bound keeps it well inside the 227 KiB of a Hopper block.
GPU_MAX_DIM = 4096

# Input dtype -> the dtype the core reads (it converts to float64 itself,
# on the GPU inside the kernel: float32 stacks are never widened here).
_CORE_DTYPES: dict[np.dtype, type] = {
    np.dtype(np.float64): np.float64, np.dtype(np.float32): np.float32,
    np.dtype(np.float16): np.float32, np.dtype(np.int64): np.int64,
    np.dtype(np.int32): np.int32, np.dtype(np.int16): np.int32, np.dtype(np.int8): np.int32,
    np.dtype(np.uint32): np.int64, np.dtype(np.uint16): np.int32,
    np.dtype(np.uint8): np.uint8, np.dtype(np.bool_): np.uint8,
}


def _as_host_stack(costs) -> np.ndarray:
    """NumPy's view of a host array-like."""
    if isinstance(costs, np.ndarray):
        return np.asarray(costs)  # matrix, masked arrays: their data, as SciPy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ragged input: SciPy's conversion says what is wrong
        try:
            arr = np.asarray(costs)
        except (ValueError, TypeError):
            return _scipy_float64(costs)
    return arr if arr.dtype.kind in "biuf" else _scipy_float64(arr)


def _core_array(arr: np.ndarray) -> np.ndarray:
    """The stack as a C-contiguous array of a dtype the core reads."""
    if arr.dtype.kind in "biuf":
        native = arr.dtype.newbyteorder("=")
        target: type | None
        if native == np.uint64:
            fits = arr.size == 0 or arr.max() <= np.iinfo(np.int64).max
            target = np.int64 if fits else np.float64  # as SciPy: rounded to float64
        else:
            target = _CORE_DTYPES.get(native)
        if target is not None:
            return np.ascontiguousarray(arr, dtype=target)
    return np.ascontiguousarray(_scipy_float64(arr))  # longdouble, complex...: SciPy's TypeError


def _resolve(c: np.ndarray, method: str, device) -> tuple[str, str, int]:
    check_choice(method, "method", METHODS)
    fits_gpu = max(c.shape[1:]) <= GPU_MAX_DIM
    method, backend, ordinal = _device.resolve_method(
        method, device, CPU_METHODS, GPU_METHODS,
        large_enough=fits_gpu and c.size >= GPU_MIN_ELEMENTS)
    if method == "auto":
        method = "gpu-sap" if backend == "cuda" else "omp-sap"
    return method, backend, ordinal


def _run(c, maximize, method, ordinal, threads, block_threads, pipeline=True):
    try:
        return _core.lsap_batched(c, maximize, _METHOD_CODES[method], threads, ordinal,
                                  block_threads, pipeline)
    except OverflowError:
        # omp-sap reads integers as float64 and refuses those it would round
        # (max(n, 8) * max|c| > 2**50): solve them in float64 as SciPy does.
        return _core.lsap_batched(c.astype(np.float64), maximize, _METHOD_CODES[method],
                                  threads, ordinal, block_threads, pipeline)


# Device dtype -> the dtype gpu-sap reads (converted on the device by the
# caller's library where they differ).
_DEVICE_DTYPES = {"float64": "float64", "float32": "float32", "float16": "float32",
                  "int64": "int64", "int32": "int32", "int16": "int32", "int8": "int32",
                  "uint8": "uint8", "uint16": "int32", "uint32": "int64", "bool": "uint8"}


def _solve_on_device(costs, maximize, method, device, block_threads: int, start: float):
    """`solve_batch` for a stack in GPU memory: gpu-sap reads it where it is
    and writes (batch, k) int64 arrays of the caller's kind on its device,
    ordered on the caller's current stream.  The kernel checks the costs (NaN,
    the wrong infinity, infeasible problems), as for host stacks."""
    a = _darr.describe(costs, "costs")
    if len(a.shape) != 3:
        raise ValueError(f"expected a stack of matrices (3-D array), got a {len(a.shape)} array")
    check_choice(method, "method", METHODS)
    _darr.check_device_choice(device, a.device, "costs")
    if method in CPU_METHODS:
        raise ValueError(f"method {method!r} runs on the CPU, and the costs live on "
                         f"cuda:{a.device}; use 'gpu-sap' or 'auto'")
    if max(a.shape[1:]) > GPU_MAX_DIM:
        raise ValueError(f"gpu-sap solves problems of at most {GPU_MAX_DIM} rows and columns; "
                         f"got {a.shape[1]} x {a.shape[2]} (copy the stack to the host for "
                         f"omp-sap)")
    _device.resolve(f"cuda:{a.device}", large_enough=True)  # RuntimeError without CUDA
    dtype = _DEVICE_DTYPES.get(a.dtype.name)
    if dtype is None:
        raise TypeError(f"Cannot cast array data from dtype('{a.dtype}') to dtype('float64') "
                        f"according to the rule 'safe'")
    x = a.obj
    if a.kind == "cupy":
        x = sys.modules["cupy"].ascontiguousarray(x, dtype=dtype)
    else:
        x = x.to(getattr(sys.modules["torch"], dtype)).contiguous()
    batch, n_rows, n_cols = a.shape
    k = min(n_rows, n_cols)
    rows = _darr.empty(a.kind, a.device, (batch, k), np.int64)
    cols = _darr.empty(a.kind, a.device, (batch, k), np.int64)
    info: dict[str, Any] = {"seconds_solve": 0.0, "seconds_transfer": 0.0,
                            "kernel_launches": 0, "shared_costs": False, "block_threads": 0}
    if batch and k:
        info = _core.lsap_batched_device(np.empty(0, dtype), _darr.pointer(x), batch, n_rows,
                                         n_cols, bool(maximize), a.device, block_threads,
                                         a.stream, _darr.pointer(rows), _darr.pointer(cols))
    info.update(method="gpu-sap", device=f"cuda:{a.device}",
                seconds_total=time.perf_counter() - start)
    return rows, cols, info


def solve_batch(costs, maximize=False, *, method: str = "auto", device: str = "auto",
                threads: int | None = None, block_threads: int = 0, pipeline: bool = True):
    """`batch_linear_sum_assignment` with what the solve did:
    (row_ind, col_ind, info), info a dict (method, device, seconds_total,
    seconds_solve, seconds_transfer, kernel_launches, shared_costs,
    block_threads).  `block_threads`: gpu-sap's threads per block (a
    multiple of 32 up to 512; 0 picks by size; raised when too few for the
    columns), for tuning.  `pipeline=False`: gpu-sap uploads the whole
    stack before solving it, so that seconds_solve is the kernels' time
    alone (pipelined, it is their tail past the last copy).

    A variant of gpu-sap for A/B timing, read from the environment at each
    call; it changes only how fast problems whose costs stay in global
    memory (past shared memory) are solved, never the answer:
    ``MATCHFLOW_GPU_SAP_CARVEOUT`` = ``l1`` (default) or ``driver``: the
    smallest shared-memory carveout that holds the grid's blocks, leaving
    the rest of each SM's memory to the L1 cache, or the driver's choice.
    Another value raises ValueError."""
    start = time.perf_counter()
    n_threads = check_threads(threads)
    if (isinstance(block_threads, bool) or not isinstance(block_threads, (int, np.integer))
            or not (block_threads == 0
                    or (32 <= block_threads <= 512 and block_threads % 32 == 0))):
        raise ValueError(f"block_threads must be 0 or a multiple of 32 in [32, 512]; "
                         f"got {block_threads!r}")
    if _darr.is_device_array(costs):
        return _solve_on_device(costs, maximize, method, device, int(block_threads), start)
    arr = _as_host_stack(costs)
    if arr.ndim != 3:
        raise ValueError(f"expected a stack of matrices (3-D array), got a {arr.ndim} array")
    c = _core_array(arr)
    method, backend, ordinal = _resolve(c, method, device)
    method, backend, ordinal, (row_ind, col_ind, info) = _device.with_cpu_fallback(
        device, backend,
        lambda: (method, backend, ordinal,
                 _run(c, bool(maximize), method, ordinal, n_threads, int(block_threads),
                      bool(pipeline))),
        lambda: ("omp-sap", "cpu", 0, _run(c, bool(maximize), "omp-sap", 0, n_threads, 0)),
        stacklevel=3)
    info.update(method=method, device=_device.device_name(backend, ordinal),
                seconds_total=time.perf_counter() - start)
    return row_ind, col_ind, info


def batch_linear_sum_assignment(costs, maximize=False, *, method: str = "auto",
                                device: str = "auto", threads: int | None = None):
    """Solve many linear sum assignment problems of one shape at once.

    Each problem ``costs[b]`` gets an optimal assignment, of the same cost
    as ``scipy.optimize.linear_sum_assignment(costs[b], maximize)`` gives.

    Parameters
    ----------
    costs : array_like, shape (batch, n_rows, n_cols)
        A stack of cost matrices: float32, float64, integers or booleans.
        A CuPy array or CUDA torch tensor is solved on its device by
        gpu-sap, on the caller's current stream, and `row_ind` / `col_ind`
        come back as its kind on its device.  ``+inf``
        marks a forbidden pair (``-inf`` when maximising); NaN is invalid.
        Any shape, tall or wide, any dimension 0.
    maximize : bool
        Maximise each problem's total instead.
    method : {"auto", "omp-sap", "gpu-sap"}
        The shortest augmenting path algorithm of Crouse (2016), SciPy's
        own, on every problem: "omp-sap" runs the problems in parallel on
        the CPU (OpenMP, each by the sequential solver); "gpu-sap" runs one
        CUDA thread block per problem (problems up to `GPU_MAX_DIM` rows
        and columns).  "auto" picks by device.
    device : {"auto", "cpu", "cuda", "cuda:N"}
        "auto" uses a GPU when one is usable and the stack is large enough
        (`GPU_MIN_ELEMENTS` entries) to gain from it.
    threads : int, optional
        OpenMP threads for "omp-sap" (default: OMP_NUM_THREADS or all cores).

    Returns
    -------
    row_ind, col_ind : ndarray of int64, shape (batch, min(n_rows, n_cols))
        Problem b's assignment is ``(row_ind[b], col_ind[b])``, `row_ind[b]`
        sorted, as SciPy returns it.

    Raises
    ------
    ValueError
        Not 3-D; NaN or the wrong infinity ("matrix contains invalid
        numeric entries (batch index b)"); a problem with no assignment
        avoiding its forbidden pairs ("cost matrix is infeasible (batch
        index b)", b the lowest such index); a bad `method`, `device` or
        `threads`.
    TypeError
        A dtype SciPy cannot cast safely to float64 (complex, object, ...),
        or a device array.

    Notes
    -----
    Costs are solved in float64, as SciPy solves them (float32 stacks are
    converted inside the solvers, not copied): integers are exact while
    ``max(n_rows, n_cols, 8) * max|c| <= 2**50``, and past that rounded as
    SciPy rounds them.  omp-sap gives SciPy's arrays, ties included;
    gpu-sap starts from a row reduction (square problems: and a column
    reduction) and may pick another optimum among ties.

    Examples
    --------
    >>> import numpy as np
    >>> from matchflow import batch_linear_sum_assignment
    >>> costs = np.array([[[4, 1, 3], [2, 0, 5], [3, 2, 2]],
    ...                   [[1, 2, 3], [2, 4, 6], [3, 6, 9]]])
    >>> row_ind, col_ind = batch_linear_sum_assignment(costs, device="cpu")
    >>> col_ind
    array([[1, 0, 2],
           [2, 1, 0]])
    >>> [int(costs[b, row_ind[b], col_ind[b]].sum()) for b in range(2)]
    [5, 10]
    """
    row_ind, col_ind, _ = solve_batch(costs, maximize, method=method, device=device,
                                      threads=threads)
    return row_ind, col_ind

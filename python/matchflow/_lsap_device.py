"""Dense assignment of a cost matrix in GPU memory (CuPy array or torch tensor).

The matrix never goes to the host.  What `_lsap` does on the host is done
here on the device, through the caller's own library and on its current
stream: the NaN / wrong-infinity check (one reduction), the feasibility of
the +inf pattern (a maximum matching of it, on the device), negation for
`maximize`, the transpose of a tall matrix, and integer narrowing (int64
costs that fit are passed as int32, int32 costs as they are: the core reads
both through its int32 view).  The core then copies the matrix device to
device on the same stream (lsap_options::cost_on_device).  The assignment
and duals (O(n)) come back through the host and are returned as arrays of
the caller's kind on its device.
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from . import _core, _device
from . import _device_arrays as darr
from ._lsap_common import (_METHOD_CODES, GPU_METHODS, METHODS, AssignmentResult,
                           AssignmentStats, assignment_pairs, auction_fits, int64_overflow)
from ._validation import check_choice, check_threads

_INT32 = np.iinfo(np.int32)


def _lib(kind: str):
    return sys.modules["cupy" if kind == "cupy" else "torch"]


def _as_dtype(x, kind: str, dtype: str):
    if kind == "cupy":
        return x.astype(dtype)
    torch = _lib(kind)
    return x.to(getattr(torch, dtype))


def _contiguous(x, kind: str):
    return _lib(kind).ascontiguousarray(x) if kind == "cupy" else x.contiguous()


def _to_device(host: np.ndarray, kind: str, device: int):
    """A host result as the caller's kind on cuda:`device` (its current stream)."""
    if kind == "cupy":
        cupy = _lib(kind)
        with cupy.cuda.Device(device):
            return cupy.asarray(host)
    return _lib(kind).as_tensor(host, device=f"cuda:{device}")


def _work_dtype(a: darr.DeviceArray) -> str:
    """The dtype the GPU solves in: float64 / float32 as given, float16 as
    float32, booleans and integers of up to 32 bits as int32, other integers
    as int64; TypeError as NumPy's cast for the rest (complex, ...)."""
    dt = a.dtype
    if dt.kind == "f":
        return "float32" if dt.itemsize <= 4 else "float64"
    if dt.kind == "b" or (dt.kind in "iu" and dt.itemsize < 4) or dt == np.int32:
        return "int32"
    if dt.kind in "iu":
        return "int64"
    raise TypeError(f"Cannot cast array data from dtype('{dt}') to dtype('float64') according "
                    f"to the rule 'safe'")


def _check_entries(x, kind: str, maximize: bool) -> bool:
    """SciPy's ValueError for NaN and the wrong infinity; True if forbidden
    (+inf, -inf when maximising) entries exist.  One synchronising read when
    every entry is finite."""
    lib = _lib(kind)
    if not bool((~lib.isfinite(x)).any()):
        return False
    wrong = -np.inf if not maximize else np.inf
    if bool(lib.isnan(x).any()) or bool((x == wrong).any()):
        raise ValueError("matrix contains invalid numeric entries")
    return True


def _check_feasible(x, kind: str) -> None:
    """The allowed (finite) pattern must match the shorter side: a maximum
    matching of it, computed on the device."""
    from ._matching import maximum_matching
    allowed = _lib(kind).isfinite(x)
    if kind == "cupy":
        import cupyx.scipy.sparse as csp
        pattern = csp.csr_matrix(allowed.astype("float32"))
    else:
        with warnings.catch_warnings():  # torch's notice that its sparse CSR is in beta
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta",
                                    UserWarning)
            pattern = allowed.to(_lib(kind).float32).to_sparse_csr()
    if maximum_matching(pattern).cardinality < min(x.shape):
        raise ValueError("cost matrix is infeasible")


def _int_bound(x) -> int:
    """max |x| of integer costs (two reductions, read on the host)."""
    return max(abs(int(x.min())), abs(int(x.max())))


def _fits_int64(max_abs: int, shape) -> bool:
    """The core's bound for exact int64 solves (int_costs_fit, lsap.hpp)."""
    return max_abs <= (1 << 62) // max(shape[0], shape[1], 8)


def solve_on_device(cost_matrix, maximize, method, device, threads, *, exact_ints: bool):
    """`_lsap._solve` for a cost matrix in GPU memory; returns an
    AssignmentResult whose arrays are of the caller's kind on its device.
    Integer costs too large for an exact int64 solve raise OverflowError
    (`exact_ints`, as solve_assignment) or are solved in float64 (as SciPy
    solves every input)."""
    start = time.perf_counter()
    check_threads(threads)
    a = darr.describe(cost_matrix, "cost_matrix")
    method = _checked_method(a, method, device)
    maximize = bool(maximize)
    if 0 in a.shape:
        return _empty_result(a, method, start)
    original, x, dtype, max_abs = _work_matrix(a, maximize, exact_ints)
    work = -x if maximize else x
    transposed = a.shape[0] > a.shape[1]
    work = _contiguous(work.T if transposed else work, a.kind)
    # int32 costs are solved as int64 read through an int32 view (cost_int32).
    col4row, u, v, stats = _core.lsap_dense_device(
        np.empty(0, "int64" if dtype == "int32" else dtype), darr.pointer(work),
        dtype == "int32", work.shape[0], work.shape[1], _METHOD_CODES[method], a.device,
        a.stream, max_abs)
    row_ind, col_ind, u, v = assignment_pairs(col4row, u, v, transposed)
    if maximize:
        u, v = -u, -v
    rows, cols = _to_device(row_ind, a.kind, a.device), _to_device(col_ind, a.kind, a.device)
    stats["seconds_total"] = time.perf_counter() - start
    name = f"cuda:{a.device}"
    return AssignmentResult(row_ind=rows, col_ind=cols,
                            cost=_picked_cost(original, rows, cols, dtype, a.kind),
                            u=_to_device(u, a.kind, a.device), v=_to_device(v, a.kind, a.device),
                            method=method, device=name,
                            stats=AssignmentStats(device=name, **stats))


def _checked_method(a: darr.DeviceArray, method: str, device) -> str:
    """The GPU method for a matrix on cuda:`a.device` (SciPy's errors first;
    RuntimeError without CUDA); "auto" as `_lsap._resolve` picks it for
    floats, which have few ties."""
    if len(a.shape) != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {len(a.shape)} array")
    check_choice(method, "method", METHODS)
    darr.check_device_choice(device, a.device, "cost_matrix")
    if method != "auto" and method not in GPU_METHODS:
        raise ValueError(f"method {method!r} runs on the CPU, and the cost matrix lives on "
                         f"cuda:{a.device}; use a GPU method ({', '.join(GPU_METHODS)}) or "
                         f"'auto'")
    _device.resolve(f"cuda:{a.device}", large_enough=True)
    if method != "auto":
        return method
    return "gpu-auction" if a.dtype.kind == "f" and auction_fits(a.shape) else "gpu-tree"


def _empty_result(a: darr.DeviceArray, method: str, start: float) -> AssignmentResult:
    """An empty dimension: nothing to assign (nothing is run)."""
    dtype = _work_dtype(a)
    dual = np.int64 if dtype.startswith("int") else np.dtype(dtype)
    name = f"cuda:{a.device}"
    n_rows, n_cols = a.shape
    return AssignmentResult(
        row_ind=_to_device(np.empty(0, np.int64), a.kind, a.device),
        col_ind=_to_device(np.empty(0, np.int64), a.kind, a.device),
        cost=0 if dtype.startswith("int") else 0.0,
        u=_to_device(np.zeros(n_rows, dual), a.kind, a.device),
        v=_to_device(np.zeros(n_cols, dual), a.kind, a.device),
        method=method, device=name,
        stats=AssignmentStats(seconds_total=time.perf_counter() - start, device=name))


def _work_matrix(a: darr.DeviceArray, maximize: bool, exact_ints: bool):
    """(original, x, dtype, max_abs): the matrix the cost is summed over, the
    one the core solves (checked floats; integers narrowed to int32 where
    they fit, or float64 where int64 would overflow) and its dtype name,
    and max |cost| for integer input (0 for floats)."""
    dtype = _work_dtype(a)
    x = a.obj if a.dtype.name == dtype else _as_dtype(a.obj, a.kind, dtype)
    if not dtype.startswith("int"):
        if _check_entries(x, a.kind, maximize):
            _check_feasible(x, a.kind)
        return x, x, dtype, 0
    max_abs = _int_bound(x)
    if not _fits_int64(max_abs, a.shape):
        if exact_ints:
            raise int64_overflow(max_abs, a.shape)
        x = _as_dtype(x, a.kind, "float64")
        return x, x, "float64", max_abs
    if max_abs <= _INT32.max:
        return x, (x if dtype == "int32" else _as_dtype(x, a.kind, "int32")), "int32", max_abs
    if dtype == "int32":  # -2**31: its negation needs int64
        return x, _as_dtype(x, a.kind, "int64"), "int64", max_abs
    return x, x, dtype, max_abs


def _picked_cost(original, rows, cols, dtype: str, kind: str) -> int | float:
    """The assignment's cost, summed on the device: exact for integer solves."""
    picked = original[rows, cols]
    if dtype.startswith("int"):
        return int(picked.sum())
    return float(picked.sum(dtype="float64") if kind == "cupy" else picked.double().sum())

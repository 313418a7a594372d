"""Dense assignment split over several GPUs: paper 001's multi-GPU CU-TREE
(matchflow/multi_gpu_lsap.hpp).  The columns are cut into one block per
GPU; every GPU keeps its block, and the search's per-step exchanges go GPU
to GPU.  `device="cuda:all"` or a list of GPUs selects it; a GPU named twice
holds two parts (logical parts on one GPU run the same code, which is how
the split is tested on one GPU).

Host matrices (NumPy arrays, `np.memmap`) are read block by block, in
pieces, by each GPU's upload: no whole copy is made, and a maximisation is
read as the complement.  A list of GPU arrays (CuPy / torch), one column
block per GPU, is read where it is.
"""
from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _core, _device
from . import _device_arrays as darr
from ._lsap_common import AssignmentResult, AssignmentStats, assignment_pairs, int64_overflow
from ._lsap_device import _check_entries, _fits_int64, _lib, _picked_cost, _to_device

#: A part waits this long for another part's post before the solve fails:
#: far above any step's time, short enough that a lost GPU or process ends
#: the call.
DEFAULT_TIMEOUT = 60.0

_ROW_CHUNK_BYTES = 1 << 28  # host passes over huge matrices go by row chunks of this size


#: A part on the CPU in a list of parts' devices (the others: CUDA ordinals).
CPU = -1


def part_devices(device) -> list[int] | None:
    """The parts' devices of a split `device=`: "cuda:all", or a list / tuple
    of "cuda" / "cuda:N" (GPU ordinals), or of "cpu" (CPU, the split's
    reference); None for a single-device argument."""
    if isinstance(device, str):
        if device != "cuda:all":
            return None
        n = _device.device_count()
        if n == 0:
            _device.resolve("cuda", large_enough=True)  # its RuntimeError names why
        return list(range(n))
    if not isinstance(device, (list, tuple)):
        return None
    if not device:
        raise ValueError("device list is empty; name at least one device ('cuda:N' or 'cpu')")
    if len(device) > _core.LSAP_MAX_PARTS:
        raise ValueError(f"at most {_core.LSAP_MAX_PARTS} parts per solve; got {len(device)}")
    for d in device:
        if not isinstance(d, str) or not (d in ("cuda", "cpu") or d.startswith("cuda:")) \
                or d == "cuda:all":
            raise ValueError(f"a device list names 'cuda', 'cuda:N' or 'cpu'; got {d!r}")
    if "cpu" in device:
        if any(d != "cpu" for d in device):
            raise ValueError("a device list is all GPUs or all 'cpu'")
        return [CPU] * len(device)
    return [_device.resolve(d, large_enough=True)[1] for d in device]


def single_device(parts: list[int]) -> str:
    """The `device=` of a split of one part."""
    return "cpu" if parts[0] == CPU else f"cuda:{parts[0]}"


#: "cuda:all" splits problems from this many columns (rows) on: below it one
#: GPU was faster, as each step's exchange costs more than the halved work
#: saves (benchmarks/results/h200x2/multi-gpu.md: n = 20000 0.8x, 40000 1.2x).
SPLIT_MIN_SIZE = 32768


def one_gpu_is_faster(device, shape) -> bool:
    """"cuda:all" on a problem small enough that one GPU solves it faster (an
    explicit list of GPUs is always split as asked)."""
    return device == "cuda:all" and max(shape) < SPLIT_MIN_SIZE


def is_block_list(cost_matrix) -> bool:
    """Whether `cost_matrix` is a list / tuple of GPU arrays (column blocks)."""
    return (isinstance(cost_matrix, (list, tuple)) and len(cost_matrix) > 0
            and all(darr.is_device_array(b) for b in cost_matrix))


#: Paper 001 §5's two variants split differently: CU-TREE ("gpu-tree") the
#: columns, CU-CLASS ("gpu-classic") the rows.  On CPU parts each runs its
#: sequential reference, named "tree-split" / "classic-split" in the result.
ROW_SPLIT_METHODS = ("gpu-classic", "classic-split")


def check_method(method: str, parts: list[int]) -> str:
    """The split's method: "gpu-tree" (auto) or "gpu-classic"; on CPU parts
    their references "tree-split" or "classic-split"."""
    if method not in ("auto", "gpu-tree", "gpu-classic"):
        raise ValueError(f"method {method!r} does not run split over several devices; the "
                         "splits are 'gpu-tree' (the default, columns split) and "
                         "'gpu-classic' (rows split)")
    # auto: CU-TREE's column split, faster at every size measured
    # (benchmarks/results/h200x2/multi-gpu-variants.md).
    if method == "auto":
        method = "gpu-tree"
    if parts[0] == CPU:
        return {"gpu-tree": "tree-split", "gpu-classic": "classic-split"}[method]
    return method


# ---- host matrices -----------------------------------------------------------------

def _row_view(c: np.ndarray) -> tuple[np.ndarray, bool]:
    """(work, transposed): a view whose rows are contiguous in memory and
    no longer than its columns (n_rows <= n_cols), copied only where no
    such view exists (a tall C-ordered matrix, a strided one)."""
    def rows_contiguous(x):  # row stride any multiple of the item (0: a broadcast row)
        return (x.strides[1] == x.itemsize and x.strides[0] >= 0
                and x.strides[0] % x.itemsize == 0)
    for work, transposed in ((c, False), (c.T, True)):
        if work.shape[0] <= work.shape[1] and rows_contiguous(work):
            return work, transposed
    transposed = c.shape[0] > c.shape[1]
    return np.ascontiguousarray(c.T if transposed else c), transposed


def _row_chunks(work: np.ndarray):
    step = max(1, _ROW_CHUNK_BYTES // max(1, work.shape[1] * work.itemsize))
    for i in range(0, work.shape[0], step):
        yield work[i:i + step]


def host_bounds(work: np.ndarray, maximize: bool) -> tuple:
    """(min, max) of a host matrix, by row chunks; SciPy's ValueError for
    NaN and the wrong infinity.  int32 needs neither: (0, 0)."""
    if work.dtype == np.int32:
        return 0, 0
    lo = min(chunk.min() for chunk in _row_chunks(work))
    hi = max(chunk.max() for chunk in _row_chunks(work))
    if work.dtype.kind == "f" and (np.isnan(lo) or np.isnan(hi)
                                   or (hi == np.inf if maximize else lo == -np.inf)):
        raise ValueError("matrix contains invalid numeric entries")
    return lo, hi


def finite_lines(work: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of a host matrix that hold a finite entry, by row chunks."""
    rows = np.concatenate([np.isfinite(chunk).any(axis=1) for chunk in _row_chunks(work)])
    cols = np.zeros(work.shape[1], dtype=bool)
    for chunk in _row_chunks(work):
        cols |= np.isfinite(chunk).any(axis=0)
    return rows, cols


def check_lines(rows: np.ndarray, cols_ok: bool, square: bool) -> None:
    """Forbidden (+inf) entries: every row, and in a square problem every
    column, must keep a finite entry, or u / v would be infinite; the rest
    of infeasibility the solve finds itself (no finite dual step)."""
    if not rows.all() or (square and not cols_ok):
        raise ValueError("cost matrix is infeasible")


def fits_int64(lo, hi, shape) -> bool:
    """Costs in [lo, hi] within the exact int64 solve's bound (_lsap_device's)."""
    return _fits_int64(max(abs(int(lo)), abs(int(hi))), shape)


def _bounds(n: int, parts: int) -> list[int]:
    """Where `parts` blocks of n lines (rows or columns) start, and n."""
    return [n * p // parts for p in range(parts + 1)]


def _make_parts(make, gpus: list[int]) -> list:
    """Every part, each GPU's upload running at once (the core releases the
    GIL); `make(p)` builds part p."""
    with ThreadPoolExecutor(max_workers=len(gpus)) as pool:
        futures = [pool.submit(make, p) for p in range(len(gpus))]
        return [f.result() for f in futures]


def _run_parts(parts: list, rows: bool = False):
    """Connects, launches and finishes the parts of this process:
    (col4row, u, v, stats of part 0, per-part stats).  The column split's
    parts each hold v of their columns, the row split's u of their rows."""
    _core.connect_lsap_parts(parts)
    for part in parts:
        part.launch()
    answers = [part.finish(rows or p == 0) for p, part in enumerate(parts)]
    col4row, u, v, stats = answers[0]
    if rows:
        u = np.concatenate([a[1] for a in answers])
    else:
        v = np.concatenate([a[2] for a in answers])
    return col4row, u, v, stats, [a[3] for a in answers]


def finish_duals(col4row, u, v, transposed: bool, maximize: bool, integer: bool):
    """(row_ind, col_ind, u, v) in the caller's orientation and the
    certificate's form (AssignmentResult): the duals undone from the
    complement a maximisation was solved on (-c, or ~c = -c - 1 for
    integers), and a square problem's shifted so that the column duals are
    <= 0 (>= 0 maximising) with one at 0."""
    if maximize:
        u, v = (-u - 1 if integer else -u), -v
    row_ind, col_ind, u, v = assignment_pairs(col4row, u, v, transposed)
    sign = -1 if maximize else 1
    if u.size == v.size and v.size and (sign * v).max() > 0:
        m = sign * (sign * v).max()
        u, v = u + m, v - m
    return row_ind, col_ind, u, v


def merged_stats(stats: dict, per_part: list, gpus: list[int], start: float) -> AssignmentStats:
    """One AssignmentStats for the solve: part 0's counts, the slowest part's times."""
    merged = dict(stats)
    for key in ("seconds_init", "seconds_solve", "seconds_transfer"):
        merged[key] = max(s[key] for s in per_part)
    merged["seconds_total"] = time.perf_counter() - start
    return AssignmentStats(device=device_name(gpus), **merged)


def device_name(parts: list[int]) -> str:
    return ",".join(single_device([d]) for d in parts)


def _shares(gpus: list[int]) -> dict:
    return {g: gpus.count(g) for g in gpus}


def solve_host(c: np.ndarray, maximize: bool, method: str, gpus: list[int], *,
               exact_ints: bool, timeout: float = DEFAULT_TIMEOUT) -> AssignmentResult:
    """linear_sum_assignment of a host matrix `c` (int32, int64, float32 or
    float64, as _lsap._as_cost_array gives it) over the parts' devices
    `gpus` (part_devices: GPUs, or CPU parts for the split's reference)."""
    start = time.perf_counter()
    asked, method = method, check_method(method, gpus)
    work, transposed = _row_view(c)
    lo, hi = host_bounds(work, maximize)
    if work.dtype.kind == "f" and not (np.isfinite(lo) and np.isfinite(hi)):
        rows, cols = finite_lines(work)
        check_lines(rows, bool(cols.all()), work.shape[0] == work.shape[1])
    if work.dtype == np.int64 and not fits_int64(lo, hi, work.shape):
        if exact_ints:
            raise int64_overflow(max(abs(int(lo)), abs(int(hi))), c.shape)
        return solve_host(c.astype(np.float64), maximize, asked, gpus, exact_ints=True,
                          timeout=timeout)
    n_rows, n_cols = work.shape
    split_rows = method in ROW_SPLIT_METHODS
    gpus = gpus[:n_rows if split_rows else n_cols]  # every part holds a row (a column)
    if gpus[0] == CPU:
        x = _complement(work, work.dtype.kind == "i") if maximize else work
        col4row, u, v, stats = _core.lsap_split(np.ascontiguousarray(x), len(gpus), split_rows)
        per_part = [stats]
    else:
        share = _shares(gpus)
        bounds = _bounds(n_rows if split_rows else n_cols, len(gpus))

        def make(p):
            a, b = bounds[p], bounds[p + 1]
            if split_rows:
                return _core.LsapPart(work[a:b], 0, work.dtype, gpus[p], p, len(gpus),
                                      share[gpus[p]], n_rows, n_cols, 0, n_cols, maximize,
                                      timeout, row0=a, height=b - a, split_rows=True)
            return _core.LsapPart(work[:, a:b], 0, work.dtype, gpus[p], p, len(gpus),
                                  share[gpus[p]], n_rows, n_cols, a, b - a, maximize, timeout)
        parts = _make_parts(make, gpus)
        col4row, u, v, stats, per_part = _run_parts(parts, split_rows)
        del parts
    row_ind, col_ind, u, v = finish_duals(col4row, u, v, transposed, maximize,
                                          work.dtype.kind == "i")
    picked = c[row_ind, col_ind]
    cost = int(picked.sum(dtype=np.int64)) if c.dtype.kind == "i" else float(
        np.sum(picked, dtype=np.float64))
    return AssignmentResult(row_ind=row_ind, col_ind=col_ind, cost=cost, u=u, v=v,
                            method=method, device=device_name(gpus),
                            stats=merged_stats(stats, per_part, gpus, start))


# ---- column blocks in GPU memory ---------------------------------------------------

def _complement(x, integer: bool):
    """What a maximisation solves: ~x = -x - 1 for integers (no overflow), -x for floats."""
    return ~x if integer else -x


def _block_layout(blocks) -> list:
    """Each block described; one dtype of the four, one row count, C order."""
    arrays = [darr.describe(b, f"cost block {p}") for p, b in enumerate(blocks)]
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1 or arrays[0].dtype not in (np.int32, np.int64, np.float32, np.float64):
        raise TypeError("cost blocks must share one dtype of int32, int64, float32, float64; "
                        f"got {sorted(str(d) for d in dtypes)}")
    for p, a in enumerate(arrays):
        if len(a.shape) != 2:
            raise ValueError(f"cost block {p} is not a matrix: shape {a.shape}")
        if a.shape[0] != arrays[0].shape[0]:
            raise ValueError(f"cost blocks have {arrays[0].shape[0]} and {a.shape[0]} rows; "
                             "column blocks share the rows")
        if a.strides is not None:
            raise ValueError(f"cost block {p} is not C-contiguous")
        if a.shape[1] == 0:
            raise ValueError(f"cost block {p} has no columns")
    n_rows, n_cols = arrays[0].shape[0], sum(a.shape[1] for a in arrays)
    if n_rows > n_cols:
        raise ValueError(f"column blocks of {n_rows} rows and {n_cols} columns in all: split "
                         "the columns of a problem with no more rows than columns (transpose "
                         "it first)")
    return arrays


def on_device(a: darr.DeviceArray):
    """The block's GPU as the current one while CuPy works on it (CuPy runs
    on the current device; torch follows its tensors)."""
    return _lib("cupy").cuda.Device(a.device) if a.kind == "cupy" else contextlib.nullcontext()


def _each(arrays, fn) -> list:
    """fn(a) for each block, on its GPU (on_device)."""
    out = []
    for a in arrays:
        with on_device(a):
            out.append(fn(a))
    return out


def _check_blocks(arrays, maximize: bool) -> None:
    """NaN / wrong-infinity and, for forbidden entries, every row (and,
    square, every column) keeps a finite entry; the solve finds the rest."""
    if arrays[0].dtype.kind != "f":
        return
    lib = _lib(arrays[0].kind)
    if not any(_each(arrays, lambda a: _check_entries(a.obj, a.kind, maximize))):
        return
    square = arrays[0].shape[0] == sum(a.shape[1] for a in arrays)
    rows = np.logical_or.reduce(_each(arrays, lambda a: _host(lib.isfinite(a.obj).any(1), a.kind)))
    cols = _each(arrays, lambda a: bool(lib.isfinite(a.obj).any(0).all()))
    check_lines(rows, all(cols), square)


def _host(x, kind: str) -> np.ndarray:
    return x.get() if kind == "cupy" else x.cpu().numpy()


def solve_blocks(blocks, maximize: bool, method: str, *, exact_ints: bool,
                 timeout: float = DEFAULT_TIMEOUT) -> AssignmentResult:
    """linear_sum_assignment of a matrix given as column blocks in GPU
    memory, block p solved on its GPU; the answer comes back as NumPy arrays.
    Integer costs beyond an exact int64 solve raise OverflowError whatever
    `exact_ints` says (a float64 copy of every block is not made here)."""
    start = time.perf_counter()
    arrays = _block_layout(blocks)
    method = check_method(method, [a.device for a in arrays])
    if method in ROW_SPLIT_METHODS:
        raise ValueError("GPU blocks are column blocks, solved by the column split "
                         "(method 'gpu-tree' or 'auto'); 'gpu-classic' splits the rows of a "
                         "host matrix")
    _check_blocks(arrays, maximize)
    dtype = arrays[0].dtype
    integer = dtype.kind == "i"
    n_rows, n_cols = arrays[0].shape[0], sum(a.shape[1] for a in arrays)
    if dtype == np.int64:
        lo = min(_each(arrays, lambda a: int(a.obj.min())))
        hi = max(_each(arrays, lambda a: int(a.obj.max())))
        if not fits_int64(lo, hi, (n_rows, n_cols)):
            raise int64_overflow(max(abs(lo), abs(hi)), (n_rows, n_cols))
    work = _each(arrays, lambda a: _complement(a.obj, integer) if maximize else a.obj)
    gpus = [a.device for a in arrays]
    share = _shares(gpus)
    col0 = np.cumsum([0] + [a.shape[1] for a in arrays])
    parts = _make_parts(lambda p: _core.LsapPart(
        None, darr.pointer(work[p]), dtype, gpus[p], p, len(gpus), share[gpus[p]], n_rows,
        n_cols, int(col0[p]), arrays[p].shape[1], False, timeout), gpus)
    col4row, u, v, stats, per_part = _run_parts(parts)
    del parts
    row_ind, col4row, u, v = finish_duals(col4row, u, v, False, maximize, integer)

    mine = [(col4row >= col0[p]) & (col4row < col0[p + 1]) for p in range(len(arrays))]
    cost = sum(block_cost(a, row_ind[m], col4row[m] - col0[p])
               for p, (a, m) in enumerate(zip(arrays, mine)))
    return AssignmentResult(row_ind=row_ind, col_ind=col4row, cost=cost, u=u, v=v,
                            method=method, device=device_name(gpus),
                            stats=merged_stats(stats, per_part, gpus, start))


def block_cost(a: darr.DeviceArray, rows: np.ndarray, cols: np.ndarray):
    """The sum of block `a`'s entries at (rows, cols), summed on its GPU
    (exact for integers); 0 for none."""
    if rows.size == 0:
        return 0
    with on_device(a):
        return _picked_cost(a.obj, _to_device(rows, a.kind, a.device),
                            _to_device(cols, a.kind, a.device), a.dtype.name, a.kind)

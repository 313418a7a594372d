"""The multi-GPU assignment with one process per GPU (paper 001 §5's MPI form).

Every process (rank) of the job passes its own column block of the cost
matrix (rank order is column order); the ranks exchange, once, what they
need to connect (block sizes and the CUDA IPC handles of their exchange
buffers) through the job's communicator, then the solve runs GPU to GPU as
in one process (`_lsap_multi`), and every rank gets the whole answer.

Communicators: an mpi4py communicator (``comm=MPI.COMM_WORLD``; the default
when mpi4py is importable and no torch process group is initialised), or
``comm="torch"``: the initialised ``torch.distributed`` default group.
Neither package is a dependency of matchflow.

Faults end the call on every rank with an exception, in bounded time: every
collective is entered through a barrier that waits at most `timeout`
seconds (mpi4py: a polled ``Ibarrier``; torch: the group's own timeout),
a rank's error before or during the setup is shared with the others, and a
part whose peer stops answering during the solve stops after `timeout`.

Command line (one process per GPU; rank r uses GPU r % device_count)::

    mpirun -n 2 python -m matchflow.distributed cost.npy [--maximize] [--out answer.npz]
    torchrun --nproc-per-node 2 -m matchflow.distributed cost.npy --comm torch

Each rank maps the ``.npy`` file (``mmap_mode="r"``) and reads its column
block from it, in pieces, with no copy.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from . import _core, _device
from . import _device_arrays as darr
from . import _lsap_multi
from ._lsap import _as_cost_array
from ._lsap_common import AssignmentResult, int64_overflow
from ._lsap_device import _check_entries, _lib

__all__ = ["solve_assignment", "linear_sum_assignment", "column_block"]


class _MpiComm:
    def __init__(self, comm):
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def allgather(self, obj, timeout: float):
        request = self.comm.Ibarrier()
        deadline = time.monotonic() + timeout
        while not request.Test():
            if time.monotonic() > deadline:
                raise RuntimeError(f"rank {self.rank}: the other ranks did not reach the "
                                   f"exchange within {timeout:g} s (a rank stopped or failed)")
            time.sleep(0.0005)
        return self.comm.allgather(obj)


class _TorchComm:
    def __init__(self):
        import torch.distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("comm='torch' needs torch.distributed.init_process_group() first")
        self.dist = dist
        self.rank, self.size = dist.get_rank(), dist.get_world_size()

    def allgather(self, obj, timeout: float):  # bounded by the group's own timeout
        out = [None] * self.size
        self.dist.all_gather_object(out, obj)
        return out


def _communicator(comm):
    if comm == "torch":
        return _TorchComm()
    if comm is not None:
        return _MpiComm(comm)
    torch_dist = sys.modules.get("torch.distributed")
    if torch_dist is not None and torch_dist.is_initialized():
        return _TorchComm()
    try:
        from mpi4py import MPI
    except ImportError:
        raise RuntimeError("matchflow.distributed needs a communicator: mpi4py, or an "
                           "initialised torch.distributed group (comm='torch')") from None
    return _MpiComm(MPI.COMM_WORLD)


def _gather(comm, value, error, timeout: float) -> list:
    """Every rank's value; raises on every rank when any rank brought an
    error (this rank's own error first, also when the others never come)."""
    try:
        got = comm.allgather(
            (value, None if error is None else f"{type(error).__name__}: {error}"), timeout)
    except RuntimeError:
        if error is not None:
            raise error from None
        raise
    failed = [(r, e) for r, (_, e) in enumerate(got) if e is not None]
    if failed:
        if error is not None:
            raise error
        rank, message = failed[0]
        raise RuntimeError(f"rank {rank} failed: {message}")
    return [v for v, _ in got]


def _local_facts(block, maximize: bool):
    """(array or DeviceArray, facts): this rank's block checked on its own."""
    if darr.is_device_array(block):
        a = darr.describe(block, "cost block")
        if a.dtype not in (np.int32, np.int64, np.float32, np.float64) or len(a.shape) != 2:
            raise TypeError(f"a GPU block is a matrix of int32, int64, float32 or float64; got "
                            f"{a.dtype} of shape {a.shape}")
        if a.strides is not None:
            raise ValueError("the cost block is not C-contiguous")
        lib = _lib(a.kind)
        facts = {"dtype": a.dtype.str, "shape": a.shape, "device": a.device, "lo": 0, "hi": 0}
        if a.dtype.kind == "f":
            with _lsap_multi.on_device(a):
                _check_entries(a.obj, a.kind, maximize)
                finite = lib.isfinite(a.obj)
                facts["rows_finite"] = np.packbits(_lsap_multi._host(finite.any(1), a.kind))
                facts["cols_ok"] = bool(finite.any(0).all())
        elif a.dtype == np.int64:
            facts["lo"], facts["hi"] = int(a.obj.min()), int(a.obj.max())
        return a, facts
    c = _as_cost_array(block)
    if c.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {c.ndim} array")
    if c.strides[1] != c.itemsize or c.strides[0] < 0 or c.strides[0] % c.itemsize:
        c = np.ascontiguousarray(c)
    facts = {"dtype": c.dtype.str, "shape": c.shape, "device": None, "lo": 0, "hi": 0}
    lo, hi = _lsap_multi.host_bounds(c, maximize)
    if c.dtype.kind in "iu":
        facts["lo"], facts["hi"] = int(lo), int(hi)
    if c.dtype.kind == "f":
        rows, cols = _lsap_multi.finite_lines(c)
        facts["rows_finite"], facts["cols_ok"] = np.packbits(rows), bool(cols.all())
    return c, facts


def _checked_problem(facts: list, exact_ints: bool):
    """(n_rows, n_cols, dtype, col0s) from every rank's facts."""
    dtypes = {f["dtype"] for f in facts}
    rows = {f["shape"][0] for f in facts}
    if len(dtypes) != 1:
        raise TypeError(f"the ranks' blocks have different dtypes: {sorted(dtypes)}")
    if len(rows) != 1:
        raise ValueError(f"the ranks' blocks have different row counts: {sorted(rows)}")
    n_rows = rows.pop()
    widths = [f["shape"][1] for f in facts]
    if min(widths) == 0:
        raise ValueError("every rank's block needs at least one column")
    n_cols = sum(widths)
    if n_rows > n_cols:
        raise ValueError(f"{n_rows} rows and {n_cols} columns in all: split the columns of a "
                         "problem with no more rows than columns (transpose it first)")
    dtype = np.dtype(dtypes.pop())
    lo, hi = min(f["lo"] for f in facts), max(f["hi"] for f in facts)
    if dtype == np.int64 and not _lsap_multi.fits_int64(lo, hi, (n_rows, n_cols)):
        raise int64_overflow(max(abs(lo), abs(hi)), (n_rows, n_cols))
    if dtype.kind == "f":
        finite = np.unpackbits(np.bitwise_or.reduce([f["rows_finite"] for f in facts]))
        _lsap_multi.check_lines(finite[:n_rows], all(f["cols_ok"] for f in facts),
                                n_rows == n_cols)
    return n_rows, n_cols, dtype, np.cumsum([0] + widths)


def _default_device(comm) -> int:
    local = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("LOCAL_RANK"))
    count = _device.device_count()
    if count == 0:
        _device.resolve("cuda", large_enough=True)  # its RuntimeError
    return (int(local) if local is not None else comm.rank) % count


def solve_assignment(block, *, maximize: bool = False, comm=None, device: int | None = None,
                     timeout: float = _lsap_multi.DEFAULT_TIMEOUT) -> AssignmentResult:
    """Solve a linear sum assignment split over the ranks of a job, one GPU each.

    Parameters
    ----------
    block : array_like or GPU array, shape (n_rows, width_r)
        This rank's column block (rank r holds the columns after those of
        ranks 0 .. r - 1); int32, int64, float32 or float64 as
        `matchflow.solve_assignment` reads them.  A host array is read in
        pieces (a strided view or `np.memmap` is not copied); a CuPy array or
        CUDA torch tensor is read where it is.  Every rank's block has the
        same rows, and n_rows <= n_cols in all.
    maximize : bool
    comm : mpi4py communicator, "torch", or None
        None: torch.distributed's group when initialised, else mpi4py's
        COMM_WORLD.
    device : int, optional
        This rank's GPU (a host block's; a GPU block's is its own).  Default:
        the local rank (OMPI_COMM_WORLD_LOCAL_RANK or LOCAL_RANK, else the
        rank) modulo the GPUs visible.
    timeout : float
        Seconds a rank waits for the others at any point before it raises.

    Returns
    -------
    AssignmentResult
        The whole answer, on every rank (host arrays).

    Examples
    --------
    Run as ``mpirun -n 2 python script.py``:

    >>> import numpy as np, matchflow.distributed as md   # doctest: +SKIP
    >>> from mpi4py import MPI                              # doctest: +SKIP
    >>> c = np.load("cost.npy", mmap_mode="r")              # doctest: +SKIP
    >>> r = md.solve_assignment(md.column_block(c, MPI.COMM_WORLD.rank, 2))  # doctest: +SKIP
    """
    start = time.perf_counter()
    comm = _communicator(comm)
    maximize = bool(maximize)
    part = local = None
    try:
        local, facts = _local_facts(block, maximize)
        error = None
    except Exception as e:  # shared with every rank below
        facts, error = None, e
    facts = _gather(comm, facts, error, timeout)
    n_rows, n_cols, dtype, col0 = _checked_problem(facts, exact_ints=True)
    r = comm.rank
    handle, error, gpu = None, None, None
    try:
        if isinstance(local, darr.DeviceArray):
            gpu = local.device
            work = _lsap_multi._complement(local.obj, dtype.kind == "i") if maximize else local.obj
            part = _core.LsapPart(None, darr.pointer(work), dtype, gpu, r, comm.size, 1, n_rows,
                                  n_cols, int(col0[r]), int(col0[r + 1] - col0[r]), False, timeout)
        else:
            gpu = _default_device(comm) if device is None else int(device)
            part = _core.LsapPart(local, 0, dtype, gpu, r, comm.size, 1, n_rows, n_cols,
                                  int(col0[r]), int(col0[r + 1] - col0[r]), maximize, timeout)
        handle = part.ipc_handle()
    except Exception as e:
        error = e
    handles = _gather(comm, (handle, gpu if error is None else None), error, timeout)
    answer, error = None, None
    assert part is not None  # every rank made its part, or _gather raised
    try:
        part.connect_ipc(b"".join(h for h, _ in handles))
        part.launch()
        answer = part.finish(True)
    except Exception as e:
        error = e
    # A rank whose part never ran gets here at once, the others only when
    # their kernels give up (`timeout`): wait longer than that, or the first
    # would leave the collective before the others come.
    v_blocks = _gather(comm, None if answer is None else (answer[2], answer[3]), error,
                       2 * timeout + 10)
    assert answer is not None  # as above
    col4row, u, _, stats = answer
    v = np.concatenate([vb for vb, _ in v_blocks])
    row_ind, col_ind, u, v = _lsap_multi.finish_duals(col4row, u, v, False, maximize,
                                                      dtype.kind == "i")
    mine = (col_ind >= col0[r]) & (col_ind < col0[r + 1])
    picked = _picked(local, row_ind[mine], col_ind[mine] - col0[r])
    costs = _gather(comm, picked, None, timeout)
    cost = int(sum(costs)) if dtype.kind == "i" else float(sum(costs))
    gpus = [g for _, g in handles]
    return AssignmentResult(row_ind=row_ind, col_ind=col_ind, cost=cost, u=u, v=v,
                            method="gpu-tree", device=_lsap_multi.device_name(gpus),
                            stats=_lsap_multi.merged_stats(stats, [s for _, s in v_blocks], gpus,
                                                           start))


def _picked(local, rows, cols):
    if isinstance(local, darr.DeviceArray):
        return _lsap_multi.block_cost(local, rows, cols)
    picked = local[rows, cols]
    return int(picked.sum(dtype=np.int64)) if local.dtype.kind == "i" else float(
        np.sum(picked, dtype=np.float64))


def linear_sum_assignment(block, maximize: bool = False, *, comm=None, device: int | None = None,
                          timeout: float = _lsap_multi.DEFAULT_TIMEOUT):
    """`solve_assignment`'s (row_ind, col_ind), as SciPy returns them.

    Examples
    --------
    In each rank of ``mpirun -n 2 python script.py``:

    >>> rows, cols = linear_sum_assignment(column_block(c, rank, 2))  # doctest: +SKIP
    """
    r = solve_assignment(block, maximize=maximize, comm=comm, device=device, timeout=timeout)
    return r.row_ind, r.col_ind


def column_block(matrix, rank: int, ranks: int):
    """Rank `rank`'s share of `matrix`'s columns (of `ranks` near-equal
    blocks), as a view: what each rank passes to `solve_assignment`.

    Examples
    --------
    >>> import numpy as np
    >>> from matchflow.distributed import column_block
    >>> c = np.arange(10).reshape(2, 5)
    >>> column_block(c, 0, 2).tolist(), column_block(c, 1, 2).tolist()
    ([[0, 1], [5, 6]], [[2, 3, 4], [7, 8, 9]])
    """
    n_cols = matrix.shape[1]
    return matrix[:, n_cols * rank // ranks:n_cols * (rank + 1) // ranks]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m matchflow.distributed",
                                 description="Solve an assignment over one GPU per process.")
    ap.add_argument("file", help="a .npy cost matrix (each rank maps it and reads its columns)")
    ap.add_argument("--maximize", action="store_true")
    ap.add_argument("--comm", choices=["mpi", "torch"], default=None)
    ap.add_argument("--timeout", type=float, default=_lsap_multi.DEFAULT_TIMEOUT)
    ap.add_argument("--out", help="rank 0 writes row_ind, col_ind, u, v, cost here (.npz)")
    args = ap.parse_args(argv)
    if args.comm == "torch":
        import torch.distributed as dist
        dist.init_process_group("gloo")
    comm = _communicator("torch" if args.comm == "torch" else None)
    matrix = np.load(args.file, mmap_mode="r")
    # CUDA's start-up in this process (context, modules, IPC) before the
    # clock, as in a job that has solved before: a tiny solve of the same kind.
    comm_arg = "torch" if args.comm == "torch" else None
    solve_assignment(column_block(np.zeros((2, 2 * comm.size), matrix.dtype), comm.rank,
                                  comm.size), comm=comm_arg, timeout=args.timeout)
    t0 = time.perf_counter()
    r = solve_assignment(column_block(matrix, comm.rank, comm.size), maximize=args.maximize,
                         comm=comm_arg, timeout=args.timeout)
    seconds = time.perf_counter() - t0
    if comm.rank == 0:
        print(f"cost {r.cost}  whole call {seconds:.3f} s  solve {r.stats.seconds_solve:.3f} s  "
              f"upload {r.stats.seconds_transfer:.3f} s  ranks {comm.size}  devices {r.device}",
              flush=True)
        if args.out:
            np.savez(args.out, row_ind=r.row_ind, col_ind=r.col_ind, u=r.u, v=r.v, cost=r.cost,
                     seconds=seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

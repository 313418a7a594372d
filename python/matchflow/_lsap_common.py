"""What the host-memory (`_lsap`) and GPU-memory (`_lsap_device`) dense
assignment paths share: the methods, the result types, gpu-auction's size
cap, the integer overflow error and the orientation of an answer."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _core

_METHOD_CODES = _core.LSAP_METHODS
CPU_METHODS = ("omp-tree",)
GPU_METHODS = ("gpu-tree", "gpu-classic", "gpu-auction")
METHODS = ("auto",) + CPU_METHODS + GPU_METHODS

# gpu-auction's final searches hold the columns in one block's registers
# (auction_dispatch.cu), hence the cap.
AUCTION_MAX_COLUMNS = 8192


def auction_fits(shape) -> bool:
    """gpu-auction's problems: square (its phases need them) and within its column cap."""
    return shape[0] == shape[1] <= AUCTION_MAX_COLUMNS


def int64_overflow(max_abs: int, shape) -> OverflowError:
    """The error for integer costs beyond an exact int64 solve (the bound of
    lsap.hpp's int_costs_fit: the duals and the objective stay in int64)."""
    return OverflowError(
        "integer costs too large to solve exactly in int64: need "
        f"max(n_rows, n_cols, 8) * max|c| <= 2**62, got max|c| = {max_abs} for shape "
        f"{tuple(shape)}; convert the matrix to float64 to solve it with rounding")


def assignment_pairs(col4row, u, v, transposed: bool):
    """(row_ind, col_ind, u, v) in the caller's orientation from a solve of
    the (possibly transposed) problem: sorted by row, as SciPy returns them,
    with the row and column duals swapped back after a transpose."""
    rows = np.arange(col4row.shape[0], dtype=np.int64)
    if not transposed:
        return rows, col4row, u, v
    order = np.argsort(col4row, kind="stable")
    return col4row[order], rows[order], v, u


@dataclass(frozen=True)
class AssignmentStats:
    """What one solve did.  Fields a method does not use are 0."""

    seconds_total: float = 0.0      #: wall time of the whole call, validation included
    seconds_init: float = 0.0       #: initial reduction and initial assignment
    seconds_solve: float = 0.0      #: the phases (forward/reverse/augment passes, dual updates)
    seconds_transfer: float = 0.0   #: host <-> device copies
    iterations: int = 0             #: iterations (tree search + dual updates + augmentation)
    augmenting_paths: int = 0       #: paths augmented after the initial assignment
    dual_updates: int = 0
    kernel_launches: int = 0
    search_steps: int = 0           #: gpu-tree: forward and dual steps of the tree search
    device: str = "cpu"             #: "cpu" or "cuda:N"
    #: int64 array, one entry per iteration: the augmenting paths found in
    #: it (every entry >= 1; the entries sum to `augmenting_paths`)
    paths_per_iteration: np.ndarray = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64))
    narrow_costs: bool = False      #: GPU: integer costs uploaded narrower than int64 (they fit)
    narrow_cost_bytes: int = 0      #: GPU: bytes per narrowed cost (4: int32, 2: int16), else 0
    #: gpu-auction: epsilon-scaling phases (asynchronous bidding), the
    #: augmenting row reduction's Jacobi rounds, and the bids of both before
    #: the exact searches, which are its `iterations` (one path each)
    auction_phases: int = 0
    auction_rounds: int = 0
    auction_bids: int = 0


@dataclass(frozen=True)
class AssignmentResult:
    """An optimal assignment, its cost, its dual certificate, and how it was found.

    Attributes
    ----------
    row_ind, col_ind : ndarray of int64, shape (min(n_rows, n_cols),)
        The assigned pairs, exactly as `linear_sum_assignment` returns them
        (`row_ind` sorted).
    cost : int or float
        ``cost_matrix[row_ind, col_ind].sum()``: an int for integer and
        boolean input (exact), else a float.
    u, v : ndarray, shapes (n_rows,) and (n_cols,)
        Dual variables in the caller's orientation, in the solve's dtype
        (int64, float32 or float64).  Minimising: ``u[i] + v[j] <= c[i, j]``
        for every allowed pair, with equality on assigned pairs; maximising:
        ``u[i] + v[j] >= c[i, j]``, with equality on assigned pairs.  On the
        longer side (columns when n_rows <= n_cols, else rows) the duals are
        <= 0 (>= 0 when maximising) and exactly 0 on unassigned vertices, so
        ``u.sum() + v.sum() == cost`` certifies optimality.
    method, device : str
        The algorithm and the device that ran it ("cpu" or "cuda:N").
    stats : AssignmentStats
    """

    row_ind: np.ndarray
    col_ind: np.ndarray
    cost: int | float
    u: np.ndarray
    v: np.ndarray
    method: str
    device: str
    stats: AssignmentStats = field(default_factory=AssignmentStats)

"""Weighted transversals with scaling: what sparse direct solvers run before
they factorise (HSL MC64; SuperLU's ``LargeDiag_MC64`` option).

I. S. Duff and J. Koster, "On algorithms for permuting large entries to the
diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001,
pages 973-996:
  - "product" (MC64 job 5, their section 4): maximise prod_i |a_{i,q_i}|.
    With a_j = max_i |a_ij| the largest magnitude in column j, the weights
    c_ij = log a_j - log |a_ij| >= 0 turn it into a minimum weight full
    matching (the log of a product is a sum; a_j only shifts column j's
    weights, so the optimal q is unchanged).  The duals of that assignment,
    u_i + v_j <= c_ij with equality on the matched pairs, give the scalings
    r_i = exp(u_i), s_j = exp(v_j) / a_j: then
    |r_i a_ij s_j| = exp(u_i + v_j - c_ij) <= 1, with equality where matched
    (their section 4, the scaling of Olschowka & Neumaier).  Of the optimal
    duals, the ones with the greatest v <= 0 are used (see _tightest_duals).
  - "bottleneck" (MC64 jobs 2-3, section 3): maximise min_i |a_{i,q_i}|, by a
    binary search over the sorted distinct magnitudes for the largest
    threshold t whose pattern {|a_ij| >= t} still has a perfect matching
    (each test is matchflow's maximum_matching).
  - "sum" (MC64 job 4): maximise sum_i |a_{i,q_i}|, the assignment on |a_ij|.
The assignments run on the sparse shortest augmenting path solver
(cpp/src/lsap/sparse_shortest_path.cpp).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _core
from ._validation import check_choice

OBJECTIVES = ("product", "bottleneck", "sum")

_SINGULAR = "matrix is structurally singular: no transversal (zero-free diagonal) exists"


@dataclass(frozen=True)
class WeightedTransversal:
    """A column permutation putting large entries on the diagonal, with scalings.

    Attributes
    ----------
    q : ndarray of int64, shape (n,)
        Column permutation: row i is matched to column ``q[i]``, so
        ``A[:, q]`` has the chosen entries on its diagonal.
    row_scale, col_scale : ndarray of float64, shape (n,), or None
        Indexed by the original rows and columns ("product" with
        ``scale=True`` only): ``(diag(row_scale) @ A @ diag(col_scale))[:, q]``
        has a diagonal of magnitude 1 and no entry of magnitude above 1.
    """

    q: np.ndarray
    row_scale: np.ndarray | None
    col_scale: np.ndarray | None


def _magnitudes(A) -> sp.csr_array:
    """|A| as a canonical float64 CSR array without zero entries; square."""
    if not sp.issparse(A):
        A = sp.csr_array(np.asarray(A))
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"weighted_transversal needs a square matrix, got shape {A.shape}")
    if not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_):
        raise ValueError(f"expected a matrix containing numerical entries, got {A.dtype}")
    m = sp.csr_array(A, dtype=A.dtype, copy=True)
    m.sum_duplicates()
    data = np.abs(m.data).astype(np.float64)
    if not np.isfinite(data).all():
        raise ValueError("matrix contains invalid numeric entries")
    m = sp.csr_array((data, m.indices, m.indptr), shape=m.shape)
    m.eliminate_zeros()  # numerical zeros cannot be on a transversal of nonzeros
    return m


def _assign(m: sp.csr_array, weights: np.ndarray):
    """Minimum weight full matching of m's pattern under `weights`;
    (col4row, u, v), or the structural-singularity ValueError."""
    try:
        return _core.lsap_sparse(np.asarray(m.indptr, dtype=np.int64),
                                 np.asarray(m.indices, dtype=np.int32),
                                 np.ascontiguousarray(weights, dtype=np.float64),
                                 m.shape[1], 0, 0)[:3]
    except ValueError:
        raise ValueError(_SINGULAR) from None


def _tightest_duals(m: sp.csr_array, weights: np.ndarray, col4row: np.ndarray,
                    v: np.ndarray):
    """The optimal duals with the largest v (all <= 0) for the assignment
    col4row: the ones whose exponentials are the scalings.

    Any optimal (u, v) scales A, but the solver's drift between phases (a
    row left free gains every phase's step) can leave u_i and -v_j past
    exp's range (709) even where u_i + v_j - c_ij is small.  With
    u_i = c_{i,q_i} - v_{q_i}, dual feasibility is the system of difference
    constraints v_j <= v_{q_i} + (c_ij - c_{i,q_i}) over the entries; its
    greatest solution below 0 is v_j = (shortest path from a source joined
    to every column at length 0), which exists since the assignment is
    optimal (no negative cycle).  One Dijkstra computes it, with the
    solver's duals as potentials (Johnson): the reduced lengths are the
    reduced weights c_ij - u_i - v_j >= 0, and max(v) - v_j on the source's
    edges.  Returns (u, v)."""
    from scipy.sparse.csgraph import dijkstra

    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    matched = m.indices == col4row[rows]
    c_matched = np.zeros(n)
    c_matched[rows[matched]] = weights[matched]
    u = c_matched - v[col4row]
    reduced = np.maximum(weights - u[rows] - v[m.indices], 0.0)  # >= 0 up to rounding
    top = v.max()
    # Nodes: the columns, then the source n; edge q_i -> j for each entry (i, j).
    graph = sp.csr_array((np.concatenate([reduced, top - v]),
                          (np.concatenate([col4row[rows], np.full(n, n)]),
                           np.concatenate([m.indices, np.arange(n)]))), shape=(n + 1, n + 1))
    v_tight = np.minimum(dijkstra(graph, indices=n)[:n] - top + v, 0.0)
    return c_matched - v_tight[col4row], v_tight


def _bottleneck(m: sp.csr_array) -> np.ndarray:
    """The perfect matching maximising its smallest magnitude: a binary
    search over the distinct magnitudes for the largest threshold t whose
    pattern {|a_ij| >= t} has a perfect matching (each test a maximum
    matching).  No threshold above the least of the rows' and the columns'
    largest magnitudes can work (that row or column would be empty), and on
    random matrices that bound usually does: it is tested first (Duff and
    Koster, section 3, start their search from the same bound)."""
    from ._matching import maximum_matching

    n = m.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    rows = np.repeat(np.arange(n), np.diff(m.indptr))

    def matching_at(t: float):
        keep = m.data >= t
        counts = np.bincount(rows[keep], minlength=n)
        pattern = sp.csr_array((np.ones(int(counts.sum())), m.indices[keep],
                                np.concatenate(([0], np.cumsum(counts)))), shape=m.shape)
        r = maximum_matching(pattern, device="cpu")
        return r.col4row if r.cardinality == n else None

    row_max = np.zeros(n)
    np.maximum.at(row_max, rows, m.data)
    col_max = np.zeros(n)
    np.maximum.at(col_max, m.indices, m.data)
    bound = min(row_max.min(), col_max.min())
    levels = np.unique(m.data[m.data <= bound])
    if levels.size == 0:  # an empty row or column
        raise ValueError(_SINGULAR)
    best = matching_at(levels[-1])
    if best is not None:
        return np.asarray(best, dtype=np.int64)
    best = matching_at(levels[0])
    if best is None:
        raise ValueError(_SINGULAR)
    lo, hi = 0, levels.size - 2  # levels[lo] is feasible, levels[-1] is not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        found = matching_at(levels[mid])
        if found is None:
            hi = mid - 1
        else:
            lo, best = mid, found
    return np.asarray(best, dtype=np.int64)


def weighted_transversal(A, objective: str = "product", scale: bool = True
                         ) -> WeightedTransversal:
    """A column permutation putting large entries on the diagonal of a square
    matrix, with MC64's row and column scalings.

    Parameters
    ----------
    A : sparse array or matrix, or array_like, shape (n, n)
        Any scipy.sparse format (duplicates are summed, explicit zeros are
        not entries), real or complex; magnitudes are what count.
    objective : {"product", "bottleneck", "sum"}
        What the diagonal ``A[i, q[i]]`` maximises: the product of the
        magnitudes (Duff & Koster's MC64 job 5), the smallest magnitude
        (jobs 2-3), or the sum of the magnitudes (job 4).
    scale : bool
        With "product", also return the scalings from the assignment's
        duals.  Only the product objective defines scalings: for the others
        (and with ``scale=False``) `row_scale` and `col_scale` are None.

    Returns
    -------
    WeightedTransversal
        Fields `q`, `row_scale`, `col_scale`.

    Raises
    ------
    ValueError
        A non-square matrix, NaN or infinite entries, an unknown objective,
        or a structurally singular matrix (no zero-free diagonal).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from matchflow import weighted_transversal
    >>> A = sp.csr_array(np.array([[1e-3, 4.0], [2.0, 0.5]]))
    >>> t = weighted_transversal(A)
    >>> t.q.tolist()
    [1, 0]
    >>> S = (sp.diags(t.row_scale) @ A @ sp.diags(t.col_scale)).toarray()[:, t.q]
    >>> np.allclose(np.abs(np.diag(S)), 1) and bool(np.abs(S).max() <= 1 + 1e-12)
    True
    """
    check_choice(objective, "objective", OBJECTIVES)
    m = _magnitudes(A)
    n = m.shape[0]
    if objective == "bottleneck":
        return WeightedTransversal(_bottleneck(m), None, None)
    if objective == "sum":
        col4row, _, _ = _assign(m, -m.data)
        return WeightedTransversal(col4row, None, None)
    # Column maxima a_j; an empty column leaves a_j = 0, and the solve then
    # reports the singularity.
    col_max = np.zeros(n)
    np.maximum.at(col_max, m.indices, m.data)
    log_max = np.log(np.where(col_max > 0, col_max, 1.0))
    weights = log_max[m.indices] - np.log(m.data)  # c_ij >= 0
    col4row, u, v = _assign(m, weights)
    if not scale:
        return WeightedTransversal(col4row, None, None)
    u, v = _tightest_duals(m, weights, col4row, v)
    # (u - t, v + t) is as optimal: centre the logs of both scalings on 0, so
    # that spreads up to twice exp's range still fit (the greatest v above
    # reached -773 on an R-MAT matrix of 90,000 rows with random magnitudes).
    log_row, log_col = u, v - log_max
    if n:
        t = (max(log_row.max(), -log_col.min()) + min(log_row.min(), -log_col.max())) / 2
        log_row, log_col = log_row - t, log_col + t
    return WeightedTransversal(col4row, np.exp(log_row), np.exp(log_col))

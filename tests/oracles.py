"""Reference answers and certificate checks shared by the tests."""
from __future__ import annotations

from collections import deque

import numpy as np
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching


def scipy_cardinality(graph) -> int:
    """Maximum matching size according to SciPy (pattern deduplicated first:
    SciPy crashes on duplicate entries, scipy#26160)."""
    pattern = sp.csr_array(graph, copy=True)
    pattern.data = np.ones_like(pattern.data, dtype=np.int8)
    pattern.sum_duplicates()
    if min(pattern.shape) == 0:
        return 0
    return int(np.count_nonzero(scipy_matching(pattern, perm_type="column") >= 0))


def konig_cover(graph, col4row: np.ndarray, row4col: np.ndarray):
    """König vertex cover from a maximum matching.

    Z = vertices reachable from unmatched rows by alternating paths (row ->
    any column edge, column -> its matched row).  The cover is
    (rows not in Z) + (columns in Z); it covers every edge and, when the
    matching is maximum, has exactly as many vertices as the matching.
    """
    csr = sp.csr_array(graph)
    n_rows, n_cols = csr.shape
    row_seen = np.zeros(n_rows, dtype=bool)
    col_seen = np.zeros(n_cols, dtype=bool)
    queue = deque(np.flatnonzero(col4row < 0).tolist())
    row_seen[col4row < 0] = True
    while queue:
        r = queue.popleft()
        for c in csr.indices[csr.indptr[r]:csr.indptr[r + 1]]:
            if not col_seen[c]:
                col_seen[c] = True
                mate = row4col[c]
                if mate >= 0 and not row_seen[mate]:
                    row_seen[mate] = True
                    queue.append(mate)
    return ~row_seen, col_seen


def assert_maximum_matching(graph, result, expected: int | None = None) -> None:
    """Valid matching, equal to SciPy's size, certified by a König cover."""
    csr = sp.csr_array(graph)
    n_rows, n_cols = csr.shape
    col4row, row4col = result.col4row, result.row4col
    assert col4row.dtype == np.int32 and row4col.dtype == np.int32
    assert col4row.shape == (n_rows,) and row4col.shape == (n_cols,)
    assert np.all((col4row >= -1) & (col4row < n_cols))
    assert np.all((row4col >= -1) & (row4col < n_rows))
    rows = np.flatnonzero(col4row >= 0)
    cols = col4row[rows]
    # Mutual inverses: no vertex used twice.
    assert np.array_equal(row4col[cols], rows)
    assert np.count_nonzero(row4col >= 0) == rows.size == result.cardinality
    # Every pair is an edge.
    if rows.size:
        edges = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=csr.shape)
        pattern = csr.copy()
        pattern.data = np.ones_like(pattern.data, dtype=np.float64)
        assert (edges.multiply(pattern) != 0).sum() == rows.size, "a matched pair is no edge"
    # König certificate: cover every edge with as many vertices as matched pairs.
    cover_rows, cover_cols = konig_cover(csr, col4row, row4col)
    coo = csr.tocoo()
    assert np.all(cover_rows[coo.row] | cover_cols[coo.col]), "cover misses an edge"
    assert cover_rows.sum() + cover_cols.sum() == result.cardinality, "matching not maximum"
    if expected is None:
        expected = scipy_cardinality(csr)
    assert result.cardinality == expected


def assert_certificate(c, result, maximize=False):
    """The result is an assignment and (u, v) proves it optimal.

    Minimising: u_i + v_j <= c_ij on allowed pairs, equality on assigned
    ones, and on the longer side duals <= 0 and = 0 when unassigned (so the
    dual objective equals the cost).  Maximising: the same for -c, -u, -v.
    """
    c = np.asarray(c)
    n_rows, n_cols = c.shape
    r, k = result.row_ind, result.col_ind
    assert r.dtype == np.int64 and k.dtype == np.int64
    assert len(r) == len(k) == min(n_rows, n_cols)
    assert_array_equal(r, np.sort(r))
    assert len(np.unique(r)) == len(r) and len(np.unique(k)) == len(k)
    sign = -1 if maximize else 1
    cost = sign * c.astype(np.float64) if c.dtype.kind == "f" else sign * c.astype(np.int64)
    u = sign * result.u.astype(cost.dtype)
    v = sign * result.v.astype(cost.dtype)
    allowed = np.isfinite(cost) if cost.dtype.kind == "f" else np.ones(cost.shape, bool)
    assert allowed[r, k].all()
    if cost.dtype.kind == "f":
        eps = np.finfo(result.u.dtype if result.u.dtype.kind == "f" else np.float64).eps
        scale = max(1.0, np.abs(cost[allowed]).max()) if allowed.any() else 1.0
        tol = 64 * eps * scale * max(n_rows, n_cols)
    else:
        tol = 0
    slack = cost - u[:, None] - v[None, :]
    assert slack[allowed].min(initial=0) >= -tol
    assert np.abs(slack[r, k]).max(initial=0) <= tol
    long_side, assigned = (v, k) if n_rows <= n_cols else (u, r)
    assert long_side.max(initial=0) <= tol
    free = np.setdiff1d(np.arange(len(long_side)), assigned)
    assert np.abs(long_side[free]).max(initial=0) <= tol


def capacities(graph) -> sp.csr_array:
    """Capacity of each ordered pair: parallel arcs summed, int64."""
    coo = sp.coo_array(graph)
    return sp.csr_array((coo.data.astype(np.int64), (coo.row, coo.col)), shape=coo.shape)


def reaches(residual: sp.csr_array, sink: int) -> np.ndarray:
    """Vertices with a residual path to the sink."""
    n = residual.shape[0]
    positive = sp.csr_array(residual > 0, dtype=np.int8)
    order = breadth_first_order(positive.T.tocsr(), sink, directed=True,
                                return_predecessors=False)
    mask = np.zeros(n, dtype=bool)
    mask[order] = True
    return mask


def assert_max_flow(graph, s: int, t: int, res, expected=None) -> None:
    """`flow` is a feasible s-t flow of value `flow_value`, no residual
    path joins s to t, and `source_side` is the cut that says so."""
    cap = capacities(graph)
    n = cap.shape[0]
    side = res.source_side
    assert side.dtype == np.bool_ and side.shape == (n,)
    # The cut: exactly the vertices that cannot reach t (maxflow.hpp).
    assert side[s] and not side[t]
    cut = int(cap[side][:, ~side].sum()) if side.any() and not side.all() else 0
    assert cut == res.flow_value
    if expected is not None:
        assert res.flow_value == expected
    if res.flow is None:
        return
    flow = sp.csr_array(res.flow)
    assert flow.dtype == np.int64 and flow.shape == (n, n) and flow.format == "csr"
    assert (flow + flow.T).count_nonzero() == 0                      # antisymmetric
    residual = (cap - flow).tocsr()
    assert residual.nnz == 0 or residual.data.min() >= 0             # capacity
    excess = np.asarray(flow.sum(axis=1)).ravel()
    want = np.zeros(n, dtype=np.int64)
    want[s], want[t] = res.flow_value, -res.flow_value
    assert_array_equal(excess, want)                                 # conservation
    assert_array_equal(side, ~reaches(residual, t))                  # maximum: s cannot reach t

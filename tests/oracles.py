"""Reference answers and certificate checks shared by the tests."""
from __future__ import annotations

from collections import deque

import numpy as np
import scipy.sparse as sp
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

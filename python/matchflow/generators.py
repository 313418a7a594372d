"""Graph generators for the papers' instance families (tests, benchmarks, demo).

Every generator takes a `seed` and returns a `scipy.sparse.csr_array` whose
stored entries are the edges of a bipartite graph (rows x columns).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _pattern(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    """CSR pattern of the given coordinates, duplicates removed."""
    data = np.ones(rows.shape[0], dtype=np.int8)
    a = sp.csr_array((data, (rows, cols)), shape=shape)
    a.sum_duplicates()
    a.data[:] = 1
    return a


def uniform_random(n_rows: int, n_cols: int | None = None, degree: float = 3.0,
                   seed: int = 0) -> sp.csr_array:
    """Erdos-Renyi-like bipartite graph: about `degree` random columns per row."""
    n_cols = n_rows if n_cols is None else n_cols
    rng = np.random.default_rng(seed)
    nnz = int(round(degree * n_rows))
    rows = rng.integers(0, n_rows, nnz, dtype=np.int64)
    cols = rng.integers(0, n_cols, nnz, dtype=np.int64)
    return _pattern(rows, cols, (n_rows, n_cols))


def random_permutation(graph, seed: int = 0) -> sp.csr_array:
    """RCP: the same graph with rows and columns randomly permuted (paper 004)."""
    rng = np.random.default_rng(seed)
    coo = sp.coo_array(graph)
    p = rng.permutation(graph.shape[0])
    q = rng.permutation(graph.shape[1])
    return _pattern(p[coo.row], q[coo.col], graph.shape)

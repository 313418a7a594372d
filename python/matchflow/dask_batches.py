"""Batches larger than one machine: matchflow's batched solvers over Dask.

A recipe, not a scheduler: Dask cuts the batch into chunks and sends each to
a worker, where matchflow solves it with its own batched solver (on the
worker's GPU when it has one and `device="auto"`, else on its cores).  For
one GPU per worker, start the workers with dask-cuda's ``LocalCUDACluster``
(each worker then sees one GPU as ``cuda:0``) or set ``CUDA_VISIBLE_DEVICES``
per worker; with plain CPU workers give each worker ``nthreads=1`` and let
matchflow's OpenMP use the cores.  Dask is not a dependency of matchflow
(``pip install "matchflow[dask]"``).

Example (a local cluster; any ``dask.distributed.Client`` does)::

    from dask.distributed import Client, LocalCluster
    import dask.array as da
    from matchflow.dask_batches import batch_linear_sum_assignment

    with Client(LocalCluster(n_workers=4, threads_per_worker=1)):
        costs = da.random.random((1_000_000, 32, 32), chunks=(10_000, 32, 32))
        rows, cols = batch_linear_sum_assignment(costs)
        cols = cols.compute()        # (1_000_000, 32): each problem's assignment

`maximum_bipartite_matchings` does the same for many sparse graphs (a Dask
bag or any sequence), one matching per graph.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _solve_chunk(block: np.ndarray, maximize: bool, method: str, device: str) -> np.ndarray:
    """One chunk of problems, solved on this worker: (chunk, 2, k) int64
    (row_ind, then col_ind, of each problem)."""
    from ._batched import batch_linear_sum_assignment as solve
    rows, cols = solve(np.asarray(block), maximize, method=method, device=device)
    return np.stack([rows, cols], axis=1)


def batch_linear_sum_assignment(costs, maximize: bool = False, *, method: str = "auto",
                                device: str = "auto"):
    """`matchflow.batch_linear_sum_assignment` over a Dask array.

    Parameters
    ----------
    costs : dask.array.Array, shape (B, n, m)
        Chunked along the batch axis only (each chunk holds whole problems).
    maximize, method, device
        As `matchflow.batch_linear_sum_assignment`, applied on each worker.

    Returns
    -------
    row_ind, col_ind : dask.array.Array of int64, shape (B, min(n, m))
        Lazy: ``.compute()`` (or ``dask.compute(row_ind, col_ind)``) runs them.

    Examples
    --------
    >>> import numpy as np, dask.array as da                     # doctest: +SKIP
    >>> c = da.from_array(np.random.default_rng(0).random((8, 4, 4)), chunks=(2, 4, 4))
    >>> rows, cols = batch_linear_sum_assignment(c)              # doctest: +SKIP
    >>> cols.compute().shape                                     # doctest: +SKIP
    (8, 4)
    """
    if costs.ndim != 3:
        raise ValueError(f"costs must be a (B, n, m) stack of matrices; got {costs.ndim} axes")
    if len(costs.chunks[1]) != 1 or len(costs.chunks[2]) != 1:
        raise ValueError("chunk the batch axis only: each chunk must hold whole problems "
                         "(e.g. costs.rechunk({1: -1, 2: -1}))")
    k = min(costs.shape[1], costs.shape[2])
    pairs = costs.map_blocks(_solve_chunk, maximize, method, device, dtype=np.int64,
                             chunks=(costs.chunks[0], (2,), (k,)))
    return pairs[:, 0], pairs[:, 1]


def maximum_bipartite_matchings(graphs, perm_type: str = "row", *, device: str = "auto"):
    """`matchflow.maximum_bipartite_matching` of every graph of a Dask bag (or
    of any sequence, made a bag of one graph per partition): a bag of the
    matchings, lazy as bags are.

    Examples
    --------
    >>> import scipy.sparse as sp                                  # doctest: +SKIP
    >>> bag = maximum_bipartite_matchings([sp.eye(3, format="csr")] * 4)
    >>> [m.tolist() for m in bag.compute()][0]                     # doctest: +SKIP
    [0, 1, 2]
    """
    import dask.bag as db

    from ._matching import maximum_bipartite_matching
    bag: Any = graphs if isinstance(graphs, db.Bag) else db.from_sequence(
        graphs, npartitions=max(1, len(graphs)))
    return bag.map(maximum_bipartite_matching, perm_type=perm_type, device=device)

"""The Dask recipe (matchflow.dask_batches) on a LocalCluster of worker
processes; skipped where dask.distributed is not installed (the `dask`
extra)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("dask.distributed")

from matchflow import generators  # noqa: E402
from matchflow.dask_batches import (  # noqa: E402
    batch_linear_sum_assignment,
    maximum_bipartite_matchings,
)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.parametrize("shape,maximize", [((40, 6, 6), False), ((30, 5, 8), True),
                                            ((25, 9, 4), False)])
def test_batch_over_workers(client, shape, maximize):
    host = np.random.default_rng(sum(shape)).random(shape)
    costs = da.from_array(host, chunks=(7, shape[1], shape[2]))
    rows, cols = batch_linear_sum_assignment(costs, maximize)
    with distributed.get_task_stream(client) as stream:
        rows, cols = client.compute([rows, cols], sync=True)
    solved = [t for t in stream.data if "_solve_chunk" in str(t["key"])]
    assert len(solved) == len(costs.chunks[0])  # one task per chunk, on the workers
    assert {t["worker"] for t in solved} <= set(client.scheduler_info()["workers"])
    assert rows.shape == cols.shape == (shape[0], min(shape[1:]))
    for b in range(shape[0]):
        r, c = scipy_lsa(host[b], maximize=maximize)
        assert host[b][rows[b], cols[b]].sum() == pytest.approx(host[b][r, c].sum())


def test_batch_rejects_chunked_problems(client):
    costs = da.zeros((4, 6, 6), chunks=(2, 3, 6))
    with pytest.raises(ValueError, match="chunk the batch axis only"):
        batch_linear_sum_assignment(costs)


def test_matchings_of_many_graphs(client):
    graphs = [generators.uniform_random(300, degree=2.0, seed=s) for s in range(6)]
    matchings = maximum_bipartite_matchings(graphs).compute()
    assert len(matchings) == 6
    for g, m in zip(graphs, matchings):
        assert np.count_nonzero(m >= 0) == np.count_nonzero(scipy_matching(g) >= 0)
    bag = maximum_bipartite_matchings(db.from_sequence([sp.eye(3, format="csr")] * 3,
                                                      npartitions=3), perm_type="column")
    assert [m.tolist() for m in bag.compute()] == [[0, 1, 2]] * 3

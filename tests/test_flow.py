"""Maximum flow: SciPy's checks and results, every method certified.

A maximum flow is not unique, so flows are compared with SciPy's in value
and sparsity pattern, and proven maximum by the min-cut certificate
(`assert_max_flow`); SciPy's own test module also runs against ours.
"""
from __future__ import annotations

import itertools
import re
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from scipy.sparse.csgraph import maximum_flow as scipy_maximum_flow

import matchflow
from matchflow import FlowStats, MaximumFlowResult, _core, _device, _flow, maximum_flow, solve_flow
from matchflow._flow import CPU_METHODS, GPU_METHODS

from conftest import GPU_REPEATS, assert_gil_released
from oracles import assert_max_flow, capacities

_no_cuda = pytest.mark.skipif(not matchflow.cuda_available(), reason="no usable CUDA device")
METHODS = [pytest.param(m, id=m) for m in CPU_METHODS] + [
    pytest.param(m, id=m, marks=[pytest.mark.cuda, _no_cuda]) for m in GPU_METHODS]


def device_of(method: str) -> str:
    return "cuda" if method.startswith("gpu") else "cpu"


def solve(graph, s, t, method, **kwargs) -> MaximumFlowResult:
    """Solve; GPU methods GPU_REPEATS times, every run of the same value
    and cut (the caller certifies the last one)."""
    runs = GPU_REPEATS if method.startswith("gpu") else 1
    results = [solve_flow(graph, s, t, method=method, device=device_of(method), **kwargs)
               for _ in range(runs)]
    for r in results:
        assert r.flow_value == results[-1].flow_value
        assert_array_equal(r.source_side, results[-1].source_side)
    assert results[-1].method == method
    return results[-1]


# ---- oracles -------------------------------------------------------------------

def random_graph(rng, n: int, density: float, high: int, *, kind=sp.csr_array,
                 dtype=np.int64):
    """Random capacities in [0, high): explicit zeros, self loops and
    antiparallel arcs included; no duplicates (SciPy's structure is then
    comparable)."""
    m = max(1, int(density * n * n))
    flat = rng.choice(n * n, size=min(m, n * n), replace=False)
    caps = rng.integers(0, high, size=flat.size).astype(dtype)
    return kind((caps, (flat // n, flat % n)), shape=(n, n))


def st_pair(rng, n: int) -> tuple[int, int]:
    """Two distinct vertices of n, as (source, sink)."""
    s, t = rng.choice(n, 2, replace=False)
    return int(s), int(t)


def random_networks(seed: int, count: int, max_n: int, density: float, high: int):
    """`count` random (graph, source, sink) of 2 to max_n - 1 vertices."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, max_n))
        g = random_graph(rng, n, density, high)
        yield (g, *st_pair(rng, n))


def scipy_value(graph, s, t) -> int:
    return int(scipy_maximum_flow(sp.csr_array(capacities(graph), dtype=np.int32), s, t)
               .flow_value)


# ---- argument checks: SciPy's exceptions and messages ----------------------------

def _csr(rows, dtype=None):
    return sp.csr_array(np.array(rows, dtype=dtype))


SCIPY_CASES = {
    "dense": (np.array([[0, 1], [0, 0]]), 0, 1),
    "csc": (sp.csc_array([[0, 1], [0, 0]]), 0, 1),
    "coo-matrix": (sp.coo_matrix([[0, 1], [0, 0]]), 0, 1),
    "float": (_csr([[0, 1.5], [0, 0]]), 0, 1),
    "bool": (_csr([[0, 1], [0, 0]], bool), 0, 1),
    "complex": (_csr([[0, 1], [0, 0]], complex), 0, 1),
    "non-square": (_csr([[0, 1, 2], [2, 1, 0]]), 0, 1),
    "source-is-sink": (_csr([[0, 1], [0, 0]]), 0, 0),
    "source-is-sink-non-square": (_csr([[0, 1, 2], [2, 1, 0]]), 1, 1),
    "float-and-source-is-sink": (_csr([[0, 1.5], [0, 0]]), 0, 0),
    "non-square-and-out-of-range": (_csr([[0, 1, 2], [2, 1, 0]]), 0, 7),
    "source-negative": (_csr([[0, 1], [0, 0]]), -1, 1),
    "source-too-big": (_csr([[0, 1], [0, 0]]), 2, 1),
    "source-much-too-big": (_csr([[0, 1], [0, 0]]), 3, 1),
    "sink-negative": (_csr([[0, 1], [0, 0]]), 0, -1),
    "sink-too-big": (_csr([[0, 1], [0, 0]]), 0, 2),
    "both-out-of-range": (_csr([[0, 1], [0, 0]]), 5, 7),
    "empty": (sp.csr_array((0, 0), dtype=np.int64), 0, 1),
    "one-vertex": (sp.csr_array((1, 1), dtype=np.int64), 0, 1),
    "matrix-source-too-big": (sp.csr_matrix([[0, 1], [0, 0]]), 2, 1),
}


@pytest.mark.parametrize("case", SCIPY_CASES)
def test_errors_as_scipy(case):
    graph, s, t = SCIPY_CASES[case]
    with pytest.raises(Exception) as theirs:
        scipy_maximum_flow(graph, s, t)
    with pytest.raises(theirs.type, match=f"^{re.escape(str(theirs.value))}$"):
        maximum_flow(graph, s, t)


def test_error_messages_verbatim():
    g = _csr([[0, 1], [0, 0]])
    with pytest.raises(TypeError, match="^graph must be in CSR format$"):
        maximum_flow(g.tocsc(), 0, 1)
    with pytest.raises(ValueError, match="^graph capacities must be integers$"):
        maximum_flow(g.astype(np.float64), 0, 1)
    with pytest.raises(ValueError, match="^source and sink vertices must differ$"):
        maximum_flow(g, 1, 1)
    with pytest.raises(ValueError, match=r"^graph must be specified as a square matrix\.$"):
        maximum_flow(_csr([[0, 1, 2], [2, 1, 0]]), 0, 1)
    with pytest.raises(ValueError, match=r"^source value \(2\) must be between 0 and 1$"):
        maximum_flow(g, 2, 1)
    with pytest.raises(ValueError, match=r"^sink value \(-1\) must be between 0 and 1$"):
        maximum_flow(g, 0, -1)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
@pytest.mark.parametrize("func", [maximum_flow, solve_flow])
def test_negative_capacity(func, dtype):
    # SciPy returns a wrong flow here (its int32 Dinic treats -1 as 0).
    g = _csr([[0, 2, 0], [0, 0, -1], [0, 0, 0]], dtype=dtype)
    with pytest.raises(ValueError, match=r"non-negative; arc \(1, 2\) has capacity -1"):
        func(g, 0, 2)


def test_int32_capacities_are_read_as_given():
    """int32 capacities (SciPy's type) are checked and solved as they are, by
    every method (no widened copy); narrower types become int32, wider ones
    int64."""
    g = _csr([[0, 3, 2, 0], [0, 0, 4, 1], [0, 0, 0, 6], [0, 0, 0, 0]], dtype=np.int32)
    assert np.shares_memory(_flow._checked(g, 0, 3).caps, g.data)  # no copy
    for dtype, kept in ((np.int16, np.int32), (np.uint16, np.int32), (np.uint32, np.int64)):
        assert _flow._checked(g.astype(dtype), 0, 3).caps.dtype == kept
    for method in ("pr", "ppr", "bk", "dinic", "edmonds_karp"):
        res = solve_flow(g, 0, 3, method=method, device="cpu")
        wide = solve_flow(g.astype(np.int64), 0, 3, method=method, device="cpu")
        assert res.flow_value == wide.flow_value == 5
        assert res.stats.capacity_bytes == wide.stats.capacity_bytes == (4 * (method == "pr"))
        assert (res.flow != wide.flow).nnz == 0 and res.flow.dtype == np.int64


@pytest.mark.parametrize("method", ["pr", "ppr", "bk"])
def test_int32_capacities_on_a_team(method):
    """Past 2**16 arcs the residual graph is built by the team: int32
    capacities give int64's value and flow matrix (pr: the same flow)."""
    from matchflow.generators import flow as gen
    inst = gen.segmentation_grid(128, 128, seed=3)  # 81,920 arcs
    wide = solve_flow(inst.graph, inst.source, inst.sink, method=method, threads=2)
    narrow = solve_flow(inst.graph.astype(np.int32), inst.source, inst.sink, method=method,
                        threads=2)
    assert narrow.flow_value == wide.flow_value > 0
    if method == "pr":
        assert (narrow.flow != wide.flow).nnz == 0
    assert_array_equal(narrow.flow.sum(axis=1)[[inst.source, inst.sink]],
                       [narrow.flow_value, -narrow.flow_value])


def test_capacities_beyond_int64():
    g = sp.csr_array(np.array([[0, 2**63 + 5], [0, 0]], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"fit in int64; arc \(0, 1\) has capacity "
                                         + str(2**63 + 5)):
        maximum_flow(g, 0, 1)


def test_source_capacity_bound():
    big = 2**61
    over = sp.csr_array(np.array([[0, big, big], [0, 0, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match=r"total capacity 4611686018427387904; .* below 2\*\*62"):
        maximum_flow(over, 0, 2)
    # The self loop carries no flow, so it does not count.
    under = sp.csr_array(np.array([[2**62, big, big - 1], [0, 0, 0], [0, 0, 0]]))
    assert _flow._checked(under, 0, 2).n_arcs == 3  # 2**62 - 1 leaves the source
    # A total past int64 (summed in 128 bits): reported exactly.
    wide = sp.csr_array(np.array([[0, 2**62, 2**62, 2**62], [0] * 4, [0] * 4, [0] * 4]))
    with pytest.raises(ValueError, match=f"total capacity {3 * 2**62}; "):
        maximum_flow(wide, 0, 3)


def test_source_capacity_summed_exactly_on_a_team():
    """Past 2**16 arcs the source's capacity is summed in parallel chunks:
    the self loops (at either end and inside) are left out, and a total past
    2**64 is exact."""
    n = 1 << 17
    heads = np.arange(n, dtype=np.int32)
    heads[[0, n // 2, n - 1]] = 0  # self loops of the source 0, kept apart in the CSR
    caps = np.full(n, 2**62 - 7, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = n
    g = sp.csr_array((caps, heads, ptr), shape=(n, n))
    total = (n - 3) * (2**62 - 7)
    assert total > 2**64
    with pytest.raises(ValueError, match=f"total capacity {total}; "):
        maximum_flow(g, 0, 1)
    assert _flow._source_capacity(ptr, heads, caps, 0) == total
    narrow = np.full(n, 2**31 - 1, dtype=np.int32)  # int32 capacities are summed as they are
    assert _flow._source_capacity(ptr, heads, narrow, 0) == (n - 3) * (2**31 - 1)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_negative_capacity_named_first_in_large_graph(dtype):
    """The first negative arc is named, also where the check runs in parallel."""
    n = 1 << 17
    caps = np.ones(n, dtype=dtype)
    caps[[n - 70_000, n - 5]] = [-7, -3]
    g = sp.csr_array((caps, (np.zeros(n, dtype=np.int64), np.arange(n))), shape=(n, n))
    with pytest.raises(ValueError, match=rf"non-negative; arc \(0, {n - 70_000}\) has "
                                         r"capacity -7$"):
        solve_flow(g, 0, 1)


@pytest.mark.parametrize("source, sink", [(0.0, 1), (0, "1"), (None, 1)])
def test_vertices_must_be_integers(source, sink):
    with pytest.raises(TypeError, match="must be an integer"):
        maximum_flow(_csr([[0, 1], [0, 0]]), source, sink)


def test_numpy_integer_vertices():
    net = _flow._checked(_csr([[0, 1], [0, 0]]), np.int64(0), np.uint8(1))
    assert (net.source, net.sink) == (0, 1) and type(net.source) is int


def test_solve_flow_errors():
    g = _csr([[0, 1], [0, 0]])
    with pytest.raises(TypeError, match="scipy.sparse"):
        solve_flow(g.toarray(), 0, 1)
    with pytest.raises(ValueError, match="square"):
        solve_flow(sp.coo_array((np.array([1]), (np.array([0]), np.array([2]))), shape=(2, 3)),
                   0, 1)
    with pytest.raises(ValueError, match="threads"):
        solve_flow(g, 0, 1, threads=0)
    with pytest.raises(ValueError, match="relabel_freq"):
        solve_flow(g, 0, 1, relabel_freq=-1.0)
    with pytest.raises(ValueError, match="variant"):
        solve_flow(g, 0, 1, variant="fast")
    with pytest.raises(ValueError, match="method must be one of"):
        solve_flow(g, 0, 1, method="simplex")
    with pytest.raises(ValueError, match="device must be"):
        solve_flow(g, 0, 1, device="tpu")
    with pytest.raises(ValueError, match="runs on a GPU"):
        solve_flow(g, 0, 1, method="gpu-pr", device="cpu")
    bad = sp.coo_array((np.array([1]), (np.array([0]), np.array([0]))), shape=(2, 2))
    bad.row[0] = 5  # past the constructor's own check
    with pytest.raises(ValueError, match="row index out of range"):
        solve_flow(bad, 0, 1)


def test_malformed_csr():
    g = _csr([[0, 1], [0, 0]])
    bad = sp.csr_array((g.data, np.array([7], dtype=np.int32), g.indptr), shape=(2, 2))
    with pytest.raises(ValueError):
        maximum_flow(bad, 0, 1)


@pytest.mark.skipif(matchflow.cuda_available(), reason="needs a machine without CUDA")
def test_cuda_requested_without_cuda():
    with pytest.raises(RuntimeError, match="CUDA"):
        solve_flow(_csr([[0, 1], [0, 0]]), 0, 1, device="cuda")


# ---- results ---------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_return_type(method):
    for kind in (sp.csr_array, sp.csr_matrix):
        res = maximum_flow(kind([[0, 5], [0, 0]]), 0, 1, method=method,
                           device=device_of(method))
        assert type(res.flow) is kind
        assert isinstance(res, MaximumFlowResult) and isinstance(res.stats, FlowStats)
        assert repr(res) == "MaximumFlowResult with value of 5"
        assert type(res.flow_value) is int and res.flow_value == 5
        assert res.method == method and res.device == res.stats.device
        assert res.device == ("cpu" if method in CPU_METHODS else "cuda:0")
        assert res.stats.seconds_total > 0


@pytest.mark.parametrize("method", METHODS)
def test_flow_pattern_as_scipy(method):
    """Same pattern as SciPy's flow (the input's arcs and their reverses,
    explicit zeros included), same value, certified values."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(2, 30))
        g = random_graph(rng, n, rng.uniform(0.05, 0.5), 12, dtype=np.int32)
        s, t = st_pair(rng, n)
        ours = solve(g, s, t, method)
        theirs = scipy_maximum_flow(g, s, t)
        assert ours.flow_value == theirs.flow_value
        assert_array_equal(ours.flow.indptr, theirs.flow.indptr)
        assert_array_equal(ours.flow.indices, theirs.flow.indices)
        assert_max_flow(g, s, t, ours)


@pytest.mark.parametrize("method", METHODS)
def test_unique_flows_equal_scipy(method):
    """Where the maximum flow is unique (a tree of paths), it is SciPy's."""
    rng = np.random.default_rng(12)
    for _ in range(40):
        n = int(rng.integers(3, 40))
        parent = np.array([rng.integers(0, v) for v in range(1, n)])  # a tree towards 0
        caps = rng.integers(0, 9, size=n - 1)
        g = sp.csr_array((caps, (np.arange(1, n), parent)), shape=(n, n))
        s = int(rng.integers(1, n))
        res = solve(g, s, 0, method)
        assert_array_equal(res.flow.toarray(), scipy_maximum_flow(g, s, 0).flow.toarray())


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("family", ["sparse", "dense", "unit", "layered"])
def test_value_as_scipy(method, family):
    """300 seeded random graphs per family and method."""
    rng = np.random.default_rng(["sparse", "dense", "unit", "layered"].index(family))
    for _ in range(300):
        n = int(rng.integers(2, 40))
        if family == "layered":  # s, then layers, then t: long augmenting paths
            width = int(rng.integers(1, 5))
            layers = max(1, (n - 2) // width)
            n = 2 + layers * width
            ids = np.arange(1, n - 1).reshape(layers, width)
            pairs = [(0, v) for v in ids[0]] + [(v, n - 1) for v in ids[-1]]
            for a, b in zip(ids[:-1], ids[1:]):
                pairs += [(u, v) for u in a for v in b if rng.random() < 0.6]
                pairs += [(v, u) for u in a for v in b if rng.random() < 0.2]
            rows, cols = np.array(pairs).T
            g = sp.csr_array((rng.integers(1, 50, len(pairs)), (rows, cols)), shape=(n, n))
            s, t = 0, n - 1
        else:
            density = {"sparse": 0.1, "dense": 0.6, "unit": 0.2}[family]
            high = 2 if family == "unit" else 1000
            g = random_graph(rng, n, density, high)
            s, t = st_pair(rng, n)
        res = solve(g, s, t, method)
        assert res.flow_value == scipy_value(g, s, t)
        assert_max_flow(g, s, t, res)


@pytest.mark.parametrize("method", METHODS)
def test_big_capacities_vs_networkx(method):
    """Capacities near 2^40: kept as int64 (SciPy would cast them to int32)."""
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(40)
    for _ in range(30):
        n = int(rng.integers(2, 25))
        g = random_graph(rng, n, 0.3, 2**40) + sp.csr_array(
            (np.full(1, 2**40 - 1), ([0], [n - 1])), shape=(n, n))
        g = sp.csr_array(g)
        s, t = 0, n - 1
        digraph = nx.DiGraph()
        digraph.add_nodes_from(range(n))
        coo = g.tocoo()
        for u, v, c in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
            if u != v:
                digraph.add_edge(u, v, capacity=c)
        res = solve(g, s, t, method)
        assert res.flow_value == nx.maximum_flow_value(digraph, s, t) >= 2**40 - 1
        assert_max_flow(g, s, t, res)


@pytest.mark.parametrize("method", METHODS)
def test_near_the_source_bound(method):
    cap = 2**62 - 1
    g = sp.csr_array((np.array([cap // 2, cap - cap // 2, cap]), ([0, 0, 1], [1, 1, 2])),
                     shape=(3, 3))  # parallel arcs at 2^61 each, one arc of 2^62 - 1
    res = solve(g, 0, 2, method)
    assert_max_flow(g, 0, 2, res, expected=cap)


@pytest.mark.parametrize("method", METHODS)
def test_small_graphs(method):
    two = sp.csr_array((2, 2), dtype=np.int64)
    res = solve(two, 0, 1, method)
    assert res.flow_value == 0 and res.flow.nnz == 0
    assert_array_equal(res.source_side, [True, False])
    res = solve(sp.csr_array([[0, 7], [0, 0]]), 1, 0, method)  # against the arc
    assert res.flow_value == 0
    assert_array_equal(res.flow.toarray(), np.zeros((2, 2)))
    assert_array_equal(res.source_side, [False, True])
    res = solve(sp.csr_array([[3, 7], [2, 4]]), 0, 1, method)  # self loops, antiparallel
    assert res.flow_value == 7
    assert_array_equal(res.flow.toarray(), [[0, 7], [-7, 0]])
    assert_array_equal(res.flow.data, [0, 7, -7, 0])  # explicit zeros, as SciPy


@pytest.mark.parametrize("method", METHODS)
def test_disconnected(method):
    # (0) -5-> (1)   (2) -3-> (3) -4-> (4); and 4 -> 0 (into the source)
    g = sp.csr_array((np.array([5, 3, 4, 6]), ([0, 2, 3, 4], [1, 3, 4, 0])), shape=(5, 5))
    res = solve(g, 0, 3, method)
    assert res.flow_value == 0 and res.flow.count_nonzero() == 0
    assert_array_equal(res.source_side, [True, True, False, False, True])
    assert_max_flow(g, 0, 3, res)
    assert [a.tolist() for a in res.cut_edges()] == [[], []]


@pytest.mark.parametrize("method", METHODS)
def test_return_flow_false(method):
    for g, s, t in random_networks(3, 40, 40, 0.2, 100):
        full = solve(g, s, t, method)
        value_only = solve(g, s, t, method, return_flow=False)
        assert value_only.flow is None
        assert value_only.flow_value == full.flow_value
        # The cut is the same set after phase 1 as after phase 2 (maxflow.hpp).
        assert_array_equal(value_only.source_side, full.source_side)
        assert_max_flow(g, s, t, value_only)
        assert value_only.stats.seconds_phase2 == 0


@pytest.mark.parametrize("method", METHODS)
def test_cut_edges(method):
    for g, s, t in random_networks(5, 40, 30, 0.3, 20):
        for return_flow in (True, False):
            res = solve(g, s, t, method, return_flow=return_flow)
            u, v = res.cut_edges()
            assert u.dtype == v.dtype == np.int32
            assert res.source_side[u].all() and not res.source_side[v].any()
            dense = g.toarray()
            assert dense[u, v].sum() == res.flow_value and (dense[u, v] > 0).all()
            crossing = np.outer(res.source_side, ~res.source_side) & (dense > 0)
            assert crossing.sum() == u.size  # every positive arc across the cut
            if return_flow:  # saturated
                assert_array_equal(res.flow.toarray()[u, v], dense[u, v])


@pytest.mark.parametrize("method", METHODS)
def test_parallel_arcs(method):
    """Duplicate entries are parallel arcs: each carries its own flow, the
    flow matrix sums them."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 20))
        m = int(rng.integers(1, 4 * n))
        rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
        data = rng.integers(0, 30, m)
        order = np.argsort(rows, kind="stable")
        ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
        g = sp.csr_array((data[order], cols[order], ptr), shape=(n, n))  # duplicates kept
        s, t = st_pair(rng, n)
        res = solve(g, s, t, method)
        assert res.flow_value == scipy_value(g, s, t)
        assert_max_flow(g, s, t, res)
        assert res.flow.has_canonical_format


FORMATS = ["csr", "csc", "coo", "lil", "dok", "dia", "bsr"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("array", [True, False], ids=["array", "matrix"])
def test_solve_flow_every_format(fmt, array):
    rng = np.random.default_rng(9)
    dense = random_graph(rng, 12, 0.3, 50).toarray()
    g = (sp.csr_array if array else sp.csr_matrix)(dense).asformat(fmt)
    res = solve_flow(g, 0, 11, device="cpu")
    assert type(res.flow) is (sp.csr_array if array else sp.csr_matrix)
    assert res.flow_value == scipy_value(dense, 0, 11)
    assert_max_flow(dense, 0, 11, res)


def test_coo_duplicates_are_parallel_arcs():
    g = sp.coo_array((np.array([2, 3, 4]), (np.array([0, 0, 1]), np.array([1, 1, 2]))),
                     shape=(3, 3))
    net = _flow._checked(g, 0, 2)
    assert_array_equal(net.caps, [2, 3, 4]) and net.n_arcs == 3
    res = solve_flow(g, 0, 2, device="cpu")
    assert res.flow_value == 4
    assert_array_equal(res.flow.toarray(), [[0, 4, 0], [-4, 0, 4], [0, -4, 0]])
    csc = sp.csc_array((np.array([2, 3, 4]), np.array([0, 0, 1]), np.array([0, 0, 2, 3])),
                       shape=(3, 3))  # column 1 holds (0, 1) twice
    assert_array_equal(_flow._checked(csc, 0, 2).caps, [2, 3, 4])
    assert solve_flow(csc, 0, 2, device="cpu").flow_value == 4


def _flow_matrix_reference(net, flow, array):
    """SciPy's own construction: COO triplets (arcs, then their reverses
    with negated flow), summed by the conversion to CSR (zeros kept)."""
    tails = net.tails()
    rows = np.concatenate((tails, net.heads))
    cols = np.concatenate((net.heads, tails))
    kind = sp.csr_array if array else sp.csr_matrix
    return kind((np.concatenate((flow, -flow)), (rows, cols)), shape=(net.n, net.n))


def _symmetric_pattern(rows, cols):
    """Rows (sorted) and columns of the pattern {(u, v), (v, u)} of the given
    entries, each pair once: A + A^T holds exactly these."""
    pairs = np.unique(np.concatenate((np.stack((rows, cols), 1),
                                      np.stack((cols, rows), 1))), axis=0)
    return pairs[:, 0], pairs[:, 1].astype(np.int32)


@pytest.mark.parametrize("threads", [1, 2, 0, 7, 16])
@pytest.mark.parametrize("scale", [1, 2**58, 2**61], ids=["small", "near", "big"])
def test_flow_matrix_routes_agree(scale, threads):
    """The core's construction and SciPy's COO route build the same matrix,
    bit for bit (pattern, explicit zeros, values, dtypes), parallel and
    anti-parallel arcs, self-loops, zero flows, unsorted rows and empty
    graphs included.  The last three are big enough for the core's OpenMP
    team, the very last symmetric (half the upper bound of entries: the
    teams' chunks then move down in several waves)."""
    rng = np.random.default_rng(17)
    for trial in range(63):
        n = 2 if trial < 5 else int(rng.integers(1, 15 if trial < 50 else 200))
        m = 0 if trial % 17 == 0 else int(rng.integers(0, 3 * n * n if n < 15 else 8 * n))
        n, m = (20_000, 100_000) if trial >= 60 else (n, m)
        rows, cols = np.sort(rng.integers(0, n, m)), rng.integers(0, n, m).astype(np.int32)
        if trial == 62:
            rows, cols = _symmetric_pattern(rows, cols)
            m = rows.size
        ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
        caps = rng.integers(0, 4, m) * scale
        net = _flow._Network(n, ptr, cols, caps, 0, 0)
        flow = rng.integers(0, 4, m) * scale // 4
        before = flow.copy()
        for array in (True, False):
            got = _flow._flow_matrix(net, flow, array, threads)
            want = _flow_matrix_reference(net, flow, array)
            assert type(got) is type(want) is (sp.csr_array if array else sp.csr_matrix)
            assert got.has_canonical_format
            for attr in ("indptr", "indices", "data"):
                assert getattr(got, attr).dtype == getattr(want, attr).dtype, attr
                assert_array_equal(getattr(got, attr), getattr(want, attr))
        assert_array_equal(flow, before)  # the core's array is not modified


@pytest.mark.cuda
@_no_cuda
def test_gpu_large_flow_matrix():
    """A device-built flow matrix of 2.25M entries (18 MB of data, 9 MB of
    indices, a 4.5 MB indptr, most flows nonzero) comes back through staged
    chunks (cuda/src/common/host_copy.cuh): SciPy's pattern, a maximum flow."""
    from test_flow_gpu import grid_network
    n, (ptr, heads, caps), s, t = grid_network(750, 750, seed=3)
    g = sp.csr_array((caps, heads, ptr), shape=(n, n))
    res = solve_flow(g, s, t, method="gpu-pr", device="cuda")
    net = _flow._checked(g, s, t)
    want = _flow_matrix_reference(net, np.zeros(net.n_arcs, dtype=np.int64), True)
    for attr in ("indptr", "indices"):
        assert_array_equal(getattr(res.flow, attr), getattr(want, attr))
    assert np.count_nonzero(res.flow.data) > res.flow.nnz // 2
    assert_max_flow(g, s, t, res, solve_flow(g, s, t, method="pr", return_flow=False).flow_value)


@pytest.mark.cuda
@_no_cuda
@pytest.mark.parametrize("seed", range(4))
def test_gpu_flow_matrix_is_scipys(seed):
    """gpu-pr builds the flow matrix on the device: SciPy's pattern and
    dtypes (explicit zeros, self-loops, parallel and anti-parallel arcs
    summed), canonical, and a maximum flow."""
    rng = np.random.default_rng(seed)
    for trial in range(25):
        n = int(rng.integers(2, 40)) if trial < 24 else 20_000
        m = int(rng.integers(0, 4 * n))
        rows = np.sort(rng.integers(0, n, m))
        ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
        g = sp.csr_array((rng.integers(0, 5, m), rng.integers(0, n, m), ptr), shape=(n, n))
        net = _flow._checked(g, 0, n - 1)
        for _ in range(GPU_REPEATS):
            built = _flow._solve(net, "gpu-pr", 0, _flow._Tuning())[4]
            assert built is not None  # made on the device, not by the CPU builder
        res = solve_flow(g, 0, n - 1, method="gpu-pr", device="cuda")
        want = _flow_matrix_reference(net, np.zeros(m, dtype=np.int64), True)
        assert res.flow.has_canonical_format
        for attr in ("indptr", "indices"):
            assert getattr(res.flow, attr).dtype == getattr(want, attr).dtype, attr
            assert_array_equal(getattr(res.flow, attr), getattr(want, attr))
        assert_max_flow(g, 0, n - 1, res)


@pytest.mark.parametrize("method", CPU_METHODS)
def test_host_cache_reused_blocks(method):
    """The CPU methods' big scratch arrays come back from the host cache
    holding the previous call's data: every slot must be written before it
    is read.  Graphs of alternating sizes and patterns, each certified;
    free_host_cache() then hands back what the calls kept, once."""
    from matchflow.generators import flow as gen
    rng = np.random.default_rng(5)
    matchflow.free_host_cache()
    instances = [gen.grid_flow(120, 100, k=1, seed=1)[0], gen.segmentation_grid(90, 110, seed=2),
                 gen.grid_flow(100, 120, k=1, seed=3)[0]]
    graphs = [(i.graph, i.source, i.sink) for i in instances]
    for g, s, t in graphs + [(random_graph(rng, 400, 0.3, 50), 0, 399)]:
        res = solve_flow(g, s, t, method=method, device="cpu", threads=3)
        assert_max_flow(g, s, t, res, expected=scipy_value(g, s, t))
    assert matchflow.free_host_cache() >= 2**20  # the residual graph's records at least
    assert matchflow.free_host_cache() == 0


def test_host_cache_shared_by_threads():
    """Calls from several Python threads at once (the core runs without the
    GIL) take and hand back cached blocks concurrently: every answer right."""
    from concurrent.futures import ThreadPoolExecutor

    from matchflow.generators import flow as gen
    instances = [gen.grid_flow(110 + 10 * (k % 3), 100, k=1, seed=k)[0] for k in range(12)]
    expected = [scipy_value(i.graph, i.source, i.sink) for i in instances]

    def solve_one(k):
        i = instances[k]
        method = CPU_METHODS[k % len(CPU_METHODS)]
        return solve_flow(i.graph, i.source, i.sink, method=method, device="cpu", threads=2)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(solve_one, range(len(instances))))
    for i, res, want in zip(instances, results, expected):
        assert_max_flow(i.graph, i.source, i.sink, res, expected=want)
    assert matchflow.free_host_cache() > 0


def test_fork_child_solves(tmp_path):
    """A child of fork() solves as its parent did: its OpenMP team is fresh
    (libgomp's child would wait forever on the parent's threads) and so is
    its host cache (the parent's lock may be held by a thread the child
    lacks)."""
    import subprocess
    import sys
    code = textwrap.dedent("""
        import os, matchflow
        from matchflow.generators import flow as gen
        i = gen.grid_flow(120, 100, k=1, seed=1)[0]
        def value():
            return matchflow.solve_flow(i.graph, i.source, i.sink, method="ppr",
                                        device="cpu").flow_value
        v = value()
        pid = os.fork()
        if pid == 0:
            fresh = matchflow.free_host_cache() == 0
            os._exit(0 if fresh and value() == v and matchflow.free_host_cache() > 0 else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), matchflow.free_host_cache() > 0)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path, timeout=120)
    assert out.stdout.split() == ["0", "True"]


def test_host_cache_cap(tmp_path):
    """MATCHFLOW_HOST_CACHE_MB=0 keeps nothing between calls; a cap of 3 MiB
    keeps what fits; a malformed value keeps the default cap."""
    import subprocess
    import sys
    code = ("import matchflow; from matchflow.generators import flow as gen; "
            "i = gen.grid_flow(120, 100, k=1, seed=1)[0]; "
            "matchflow.solve_flow(i.graph, i.source, i.sink, method='pr', device='cpu'); "
            "print(matchflow.free_host_cache())")
    env = {**__import__("os").environ, "MATCHFLOW_HOST_CACHE_MB": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.strip() == "0"
    env["MATCHFLOW_HOST_CACHE_MB"] = "3"  # room for the residual graph's 2 MiB block alone
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert 0 < int(out.stdout) <= 3 * 2**20
    for malformed in ("abc", "-5"):  # the default cap, as when unset
        env["MATCHFLOW_HOST_CACHE_MB"] = malformed
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, cwd=tmp_path)
        assert int(out.stdout) > 0


@pytest.mark.parametrize("threads", [1, 2, 16])
@pytest.mark.parametrize("method", CPU_METHODS)
def test_cpu_flow_matrix_from_the_residual_graph(method, threads):
    """The CPU methods build the flow matrix from their residual graph (no
    arc flows, no transpose): for pr, bit for bit what SciPy's COO route
    gives on the arc flows of another run (pr is deterministic); for every method
    SciPy's pattern and a maximum flow; self-loops, parallel and
    anti-parallel arcs, zero capacities, unsorted rows and a graph large
    enough for the OpenMP team included."""
    rng = np.random.default_rng(23)
    for trial in range(40):
        n = int(rng.integers(2, 30)) if trial < 38 else 3000
        m = int(rng.integers(0, 5 * n)) if trial < 38 else 60_000
        rows = np.sort(rng.integers(0, n, m))
        ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
        caps = rng.integers(0, 6, m) * (2**50 if trial % 5 == 4 else 1)
        cols = rng.integers(0, n, m)
        if trial == 39:  # symmetric: the team's chunks of the matrix move down in waves
            rows, cols = _symmetric_pattern(rows, cols)
            m = rows.size
            ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
            caps = rng.integers(0, 6, m)
        g = sp.csr_array((caps, cols, ptr), shape=(n, n))
        net = _flow._checked(g, 0, n - 1)
        tuning = _flow._Tuning(threads=threads)
        _, arc_flow, _, _, built = _flow._solve(net, method, 0, tuning)
        assert built is not None  # made by the core from the residual graph
        assert arc_flow is None  # so the arc flows were neither written nor returned
        res = solve_flow(g, 0, n - 1, method=method, device="cpu", threads=threads)
        pattern = _flow_matrix_reference(net, np.zeros(m, dtype=np.int64), True)
        for attr in ("indptr", "indices"):
            assert_array_equal(getattr(res.flow, attr), getattr(pattern, attr))
        assert_max_flow(g, 0, n - 1, res)
        if method == "pr":
            arc_flow = _core.maxflow(net.ptr, net.heads, net.caps, 0, n - 1,
                                     _flow._METHOD_CODES[method], threads, 0, True, -1.0,
                                     False)[1]
            want = _flow_matrix_reference(net, arc_flow, True)
            assert_array_equal(res.flow.data, want.data)


def _team_sized_graphs():
    """Graphs of more than 2^16 arcs (the residual graph's build and the cut's
    search run on the team): a hub row holding a third of the arcs, with
    self-loops, parallel arcs and empty rows first, last and between; a
    directed 150 x 450 grid whose sink is reached along long paths; matching
    as a flow (each left row's heads span the right side: the windows' counts
    fit the whole team, where team x n would not); and a graph of fewer arcs
    than vertices (the build's team shrinks to one)."""
    rng = np.random.default_rng(31)
    n, m = 20_000, 90_000
    rows = np.sort(np.concatenate([rng.integers(10, n - 10, m - 30_000),
                                   np.full(30_000, n // 2)]))
    cols = rng.integers(0, n, m)
    cols[::50] = rows[::50]                         # self-loops
    cols[1::97] = cols[::97][: cols[1::97].size]    # parallel arcs, mostly
    ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
    yield "hub", sp.csr_array((rng.integers(0, 9, m), cols, ptr), shape=(n, n)), n // 2, n - 1
    w, h = 150, 450
    idx = np.arange(w * h).reshape(h, w)
    tails = np.concatenate([idx[:, :-1].ravel(), idx[:, 1:].ravel(),
                            idx[:-1].ravel(), idx[1:].ravel()])
    heads = np.concatenate([idx[:, 1:].ravel(), idx[:, :-1].ravel(),
                            idx[1:].ravel(), idx[:-1].ravel()])
    caps = rng.integers(1, 100, tails.size)
    grid = sp.csr_array((caps, (tails, heads)), shape=(w * h, w * h))
    yield "grid", grid, 0, w * h - 1
    from matchflow.generators import flow as gen
    match = gen.matching_flow(gen.matching.uniform_random(1 << 14, degree=3, seed=5))
    assert match.n_arcs > 1 << 16
    yield "matching", match.graph, match.source, match.sink
    n = 200_000
    tails, heads = rng.integers(0, n, 70_000), rng.integers(0, n, 70_000)
    sparse = sp.csr_array((rng.integers(1, 9, 70_000), (tails, heads)), shape=(n, n))
    yield "sparse", sparse, int(tails[0]), int(heads[-1])


@pytest.mark.parametrize("method", CPU_METHODS)
def test_cpu_flow_on_team_sized_graphs(method):
    """The residual graph is the same whatever the team (pr's flows are equal
    bit for bit over 1, 2, 5 and 16 threads), and every team's answer is a
    maximum flow whose cut is exactly the vertices that cannot reach the sink."""
    for name, g, s, t in _team_sized_graphs():
        expected = scipy_maximum_flow(g.astype(np.int32), s, t).flow_value
        runs = [solve_flow(g, s, t, method=method, device="cpu", threads=k)
                for k in (1, 2, 5, 16)]
        for res in runs:
            assert_max_flow(g, s, t, res, expected=expected)
        if method == "pr":
            for res in runs[1:]:
                assert_array_equal(res.flow.data, runs[0].flow.data, err_msg=name)


def test_flow_matrix_self_loop_and_antiparallel():
    """A self-loop is a stored 0; an arc and its reverse cancel to a stored 0."""
    ptr = np.array([0, 3, 4])
    heads = np.array([0, 1, 1, 0], dtype=np.int32)  # (0,0), (0,1) twice, (1,0)
    net = _flow._Network(2, ptr, heads, np.array([5, 2, 3, 5]), 0, 1)
    got = _flow._flow_matrix(net, np.array([0, 2, 3, 5]), True)
    assert_array_equal(got.indptr, [0, 2, 3]) and got.indptr.dtype == np.int32
    assert_array_equal(got.indices, [0, 1, 0])
    assert_array_equal(got.data, [0, 0, 0])


def test_int64_indices():
    rng = np.random.default_rng(13)
    g = random_graph(rng, 25, 0.2, 30)
    big = sp.csr_array((g.data, g.indices.astype(np.int64), g.indptr.astype(np.int64)),
                       shape=g.shape)
    assert big.indices.dtype == np.int64
    for func in (maximum_flow, solve_flow):
        res = func(big, 0, 24, device="cpu")
        assert res.flow_value == scipy_value(g, 0, 24)
        assert_max_flow(g, 0, 24, res)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64])
def test_integer_dtypes(dtype):
    g = sp.csr_array(np.array([[0, 100, 20], [0, 0, 90], [0, 0, 0]], dtype=dtype))
    kept = np.int32 if np.can_cast(dtype, np.int32) else np.int64  # int32: SciPy's type
    assert _flow._checked(g, 0, 2).caps.dtype == kept
    res = maximum_flow(g, 0, 2, device="cpu")
    assert res.flow_value == 110 and res.flow.dtype == np.int64


def test_auto_method(monkeypatch):
    g = sp.csr_array([[0, 5], [0, 0]])
    assert solve_flow(g, 0, 1, device="cpu").method == "pr"
    assert solve_flow(g, 0, 1, device="cpu", threads=16).method == "pr"  # small
    assert _flow._auto_method("cuda") == "gpu-pr"

    def arcs(m):  # a 2-vertex network of m parallel arcs
        return _flow._Network(2, np.array([0, m, m]), np.ones(m, np.int32),
                              np.ones(m, np.int64), 0, 1)
    big = _flow.PPR_MIN_ARCS
    assert _flow._auto_method("cpu", arcs(big), 16) == "ppr"
    assert _flow._auto_method("cpu", arcs(big - 1), 16) == "pr"
    assert _flow._auto_method("cpu", arcs(big), 8) == "pr"
    monkeypatch.setenv("OMP_NUM_THREADS", "16")  # the default team
    assert _flow._auto_method("cpu", arcs(big), 0) == "ppr"
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert _flow._auto_method("cpu", arcs(big), 0) == "pr"


def test_auto_device_by_arcs(monkeypatch):
    """device="auto" takes a GPU from GPU_MIN_ARCS arcs whatever the vertex
    count and the CPU team: the dense complete DAGs too, where gpu-pr now
    beats ppr on 16 threads (benchmarks/NOTES.md, "The `auto` thresholds")."""
    def net(n, m):  # n vertices, m arcs out of vertex 0
        ptr = np.full(n + 1, m, np.int64)
        ptr[0] = 0
        return _flow._Network(n, ptr, np.ones(m, np.int32), np.ones(m, np.int64), 0, n - 1)
    monkeypatch.setattr(_device, "cuda_available", lambda: True)
    arcs, team = _flow.GPU_MIN_ARCS, _flow.PPR_MIN_THREADS
    for n in (10, 10**6):
        assert _flow._resolve(net(n, arcs - 1), "auto", "auto", team)[1] == "cpu"
        assert _flow._resolve(net(n, arcs), "auto", "auto", team)[:2] == ("gpu-pr", "cuda")
    dense = sp.csr_array(np.triu(np.ones((1000, 1000), np.int64), 1))  # 499,500 arcs
    for threads in (2, team):
        picked = _flow._resolve(_flow._checked(dense, 0, 999), "auto", "auto", threads)
        assert picked[:2] == ("gpu-pr", "cuda")


def test_bk_cut_is_the_vertices_that_cannot_reach_the_sink():
    """bk reads its cut off its search trees (T, and the free vertices with
    room into T): the same vertex set as pr's search back from the sink, on
    random graphs, where freed orphans with room into T are common, and on
    small images."""
    from matchflow import generators
    rng = np.random.default_rng(21)
    cases = []
    for _ in range(300):
        n = int(rng.integers(2, 60))
        g = random_graph(rng, n, rng.uniform(0.02, 0.6), int(rng.integers(1, 30)),
                         dtype=np.int32)
        cases.append((g, *st_pair(rng, n)))
    for seed in range(5):
        inst = generators.segmentation_grid(30, 40, seed=seed, connectivity=4 + 4 * (seed % 2))
        cases.append((inst.graph, inst.source, inst.sink))
    for g, s, t in cases:
        bk = solve_flow(g, s, t, method="bk", return_flow=False)
        pr = solve_flow(g, s, t, method="pr", return_flow=False)
        assert bk.flow_value == pr.flow_value
        assert_array_equal(bk.source_side, pr.source_side)


@pytest.mark.parametrize("method", ["pr", "ppr", "bk"])
def test_source_arcs_saturated_on_a_team(method):
    """The initial preflow saturates the source's arcs on the team when
    there are 2^16 or more: two parallel arcs into every vertex (their
    excesses added at once) and one into some, capped further on by the
    arcs to the sink and a chain between the vertices.  The value, the cut
    and a valid flow, whatever the team."""
    rng = np.random.default_rng(30)
    k = 40_000
    s, t = k, k + 1
    inner = np.arange(k)
    tails = np.concatenate([np.full(2 * k + k // 3, s), inner, inner[:-1]])
    heads = np.concatenate([inner, inner, inner[: k // 3], np.full(k, t), inner[1:]])
    caps = rng.integers(0, 20, tails.size)
    order = np.argsort(tails, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(tails, minlength=k + 2))])
    g = sp.csr_array((caps[order], heads[order], ptr), shape=(k + 2, k + 2))
    assert g.nnz == tails.size  # the parallel arcs stay parallel
    one = solve_flow(g, s, t, method="pr", threads=1)
    assert one.flow_value == scipy_maximum_flow(g.astype(np.int32), s, t).flow_value
    for threads in (2, 3, 4):
        res = solve_flow(g, s, t, method=method, threads=threads)
        assert res.flow_value == one.flow_value
        assert_array_equal(res.source_side, one.source_side)
        assert_max_flow(g, s, t, res)


def test_bk_parts_agree_with_one_search():
    """On a team, bk's trees first grow in one range of vertex ids per
    thread (at least 2^14 vertices each), then in the unions of neighbouring
    ranges, level by level, then in the whole graph: the value, the cut
    (pr's) and a valid flow on graphs of 2 to 8 parts (odd counts leave a
    range to wait a level), images and volumes cut into strips and random
    networks whose paths cross every border."""
    from matchflow import generators
    rng = np.random.default_rng(8)
    cases = [generators.segmentation_grid(256, 256, seed=0),
             generators.segmentation_grid(512, 256, seed=1, connectivity=8),
             generators.segmentation_volume(42, 42, 42, seed=2)]
    cases = [(c.graph, c.source, c.sink) for c in cases]
    matching = generators.matching_flow(generators.uniform_random(20000, degree=3.0, seed=3))
    cases.append((matching.graph, matching.source, matching.sink))
    for n in (70000, 140000):
        g = sp.csr_array((rng.integers(1, 30, 5 * n), (rng.integers(0, n, 5 * n),
                          rng.integers(0, n, 5 * n))), shape=(n, n))
        g.setdiag(0)
        g.eliminate_zeros()
        cases.append((g, *st_pair(rng, n)))
    # Each pixel's arc to the sink as two parallel arcs (duplicate entries):
    # the sink's in-arcs are shared out among the team at tail changes.
    image = generators.segmentation_grid(256, 256, seed=4)
    coo = image.graph.tocoo()
    split = coo.col == image.sink
    rows = np.concatenate([coo.row, coo.row[split]])
    cols = np.concatenate([coo.col, coo.col[split]])
    caps = np.concatenate([np.where(split, coo.data - coo.data // 2, coo.data),
                           coo.data[split] // 2])
    order = np.argsort(rows, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=image.graph.shape[0]))])
    doubled = sp.csr_array((caps[order], cols[order], ptr), shape=image.graph.shape)
    assert doubled.nnz == image.graph.nnz + split.sum()
    cases.append((doubled, image.source, image.sink))
    # A path that crosses a seam and comes back, s -> p -> q -> r -> t with p
    # and r on one side of it: only a merge woken on that side finds it (the
    # seam between the first two of 4 parts of 2^14 vertices, the least part).
    n, seam = 4 * 2**14, 2**14
    for p, q, r in ((seam, seam - 1, seam + 1), (seam - 2, seam, seam - 1)):
        tails, heads = [n - 2, p, q, r], [p, q, r, n - 1]
        cases.append((sp.csr_array((np.ones(4, np.int32), (tails, heads)), shape=(n, n)),
                      n - 2, n - 1))
    for g, s, t in cases:
        pr = solve_flow(g, s, t, method="pr", return_flow=False)
        for threads in (2, 3, 4, 5, 8):
            bk = solve_flow(g, s, t, method="bk", threads=threads, return_flow=threads == 5)
            assert bk.flow_value == pr.flow_value
            assert_array_equal(bk.source_side, pr.source_side)
            if threads == 5:
                assert_max_flow(g, s, t, bk)


def test_value_only_pairs_antiparallel_arcs():
    """Value-only calls build an arc (u, v) and an arc (v, u) as one residual
    pair (the k-th of each row with the k-th of the other, neither end a
    terminal, both rows at most 32 arcs): pr's, ppr's and bk's value and cut
    stay those of the unpaired graph (pr with the flow) on rows with repeated
    and one-sided anti-parallel arcs, self loops, zero capacities, unsorted
    heads, terminals with arcs both ways and rows of more than 32 arcs beside
    short ones, on one thread and on teams."""
    rng = np.random.default_rng(31)
    cases = []
    for n in (6, 40, 300, 70000):
        m = 4 * n
        tails = rng.integers(0, n, m)
        heads = np.where(rng.random(m) < 0.1, tails, rng.integers(0, n, m))  # self loops
        back = rng.random(m) < 0.6  # most arcs get an anti-parallel one, some twice
        twice = rng.random(m) < 0.2
        tails = np.concatenate([tails, heads[back], heads[twice]])
        heads = np.concatenate([heads, tails[:m][back], tails[:m][twice]])
        caps = rng.integers(0, 9, tails.size)  # zeros stay stored arcs
        order = rng.permutation(tails.size)  # unsorted heads within rows
        tails, heads, caps = tails[order], heads[order], caps[order]
        rows = np.argsort(tails, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(tails, minlength=n))])
        cases.append((sp.csr_array((caps[rows], heads[rows], ptr), shape=(n, n)),
                      *st_pair(rng, n)))
    # Hub rows (33 arcs and more) with arcs both ways to short rows.
    n = 80
    tails = np.r_[np.zeros(33, int), np.arange(1, 34), np.ones(32, int), 34 + np.arange(32),
                  np.arange(n - 2), np.arange(1, n - 1)]
    heads = np.r_[np.arange(1, 34), np.zeros(33, int), 34 + np.arange(32), np.ones(32, int),
                  np.arange(1, n - 1), np.arange(n - 2)]
    caps = rng.integers(1, 5, tails.size)
    cases.append((sp.csr_array((caps, (tails, heads)), shape=(n, n)), 0, n - 1))
    for g, s, t in cases:
        unpaired = solve_flow(g, s, t, method="pr")
        for method, threads in (("pr", 1), ("ppr", 1), ("ppr", 3), ("bk", 1), ("bk", 2),
                                ("bk", 3)):
            paired = solve_flow(g, s, t, method=method, threads=threads, return_flow=False)
            assert paired.flow_value == unpaired.flow_value, (method, threads)
            assert_array_equal(paired.source_side, unpaired.source_side)


def _thinned(graph, rows):
    """`graph` with every stored entry of `rows` but the first of each
    (rows 3 mod 7 alternate: one left with none)."""
    coo = sp.coo_array(graph)
    first = np.ones(coo.nnz, dtype=bool)
    first[1:] = coo.row[1:] != coo.row[:-1]
    drop = np.isin(coo.row, rows) & (~first | (coo.row % 2 == 1))
    return sp.csr_array((coo.data[~drop], (coo.row[~drop], coo.col[~drop])), shape=graph.shape)


def test_auto_picks_bk_for_graph_cuts_only():
    """Image-shaped graph cuts (terminal links on many pixels, a few
    neighbours each: 4- and 8-connected images, 6- and 26-connected volumes)
    get "bk" on the CPU, on any team (ppr's too); matching-as-flow
    networks (one arc out of each right vertex) keep "pr"."""
    from matchflow import generators
    for cut in (generators.segmentation_grid(40, 30, seed=2),
                generators.segmentation_grid(30, 20, seed=3, connectivity=8),
                generators.segmentation_volume(8, 9, 10, seed=4),
                generators.segmentation_volume(6, 7, 8, seed=5, connectivity=26)):
        res = solve_flow(cut.graph, cut.source, cut.sink, device="cpu", threads=2)
        assert res.method == "bk", cut.name
        net = _flow._checked(cut.graph, cut.source, cut.sink)
        assert _flow._auto_method("cpu", net, _flow.PPR_MIN_THREADS) == "bk", cut.name
        assert_max_flow(cut.graph, cut.source, cut.sink, res)
        assert res.flow_value == solve_flow(cut.graph, cut.source, cut.sink,
                                            method="pr").flow_value
    # Pixels left with one arc or none (their other capacities 0, not stored),
    # as 7 of segmentation_grid(1024, 1024, seed=0)'s: bk up to 1 in THIN_PIXELS.
    cut = generators.segmentation_grid(40, 30, seed=2)
    for thin, method in ((1, "bk"), (12, "bk"), (13, "pr")):  # 1202 vertices
        g = _thinned(cut.graph, np.arange(thin) * 7 + 3)
        assert solve_flow(g, cut.source, cut.sink, device="cpu", threads=2).method == method
    rng = np.random.default_rng(3)
    left, right = 50, 60
    n = left + right + 2
    s, t = n - 2, n - 1
    u = rng.integers(0, left, 200)
    v = left + rng.integers(0, right, 200)
    rows = np.concatenate([np.full(left, s), u, np.arange(left, left + right)])
    cols = np.concatenate([np.arange(left), v, np.full(right, t)])
    g = sp.csr_array((np.ones(rows.size, np.int64), (rows, cols)), shape=(n, n))
    assert solve_flow(g, s, t, device="cpu", threads=2).method == "pr"


def test_gpu_memory_error_falls_back(monkeypatch):
    """device="auto": a GPU MemoryError becomes a RuntimeWarning and a CPU
    run; an explicit GPU request keeps the MemoryError."""
    solve_core = _flow._solve

    def gpu_out_of_memory(net, method, ordinal, tuning):
        if method in GPU_METHODS:
            raise MemoryError("out of GPU memory")
        return solve_core(net, method, ordinal, tuning)

    monkeypatch.setattr(_flow, "_resolve", lambda net, method, device, threads:
                        ("gpu-pr", "cuda", 0))
    monkeypatch.setattr(_flow, "_solve", gpu_out_of_memory)
    g = sp.csr_array([[0, 5], [0, 0]])
    with pytest.warns(RuntimeWarning, match="falling back to the CPU"):
        res = maximum_flow(g, 0, 1)
    assert (res.flow_value, res.device, res.method) == (5, "cpu", "pr")
    with pytest.raises(MemoryError):
        maximum_flow(g, 0, 1, device="cuda")


def test_stats_fields():
    res = solve_flow(sp.csr_array([[0, 5], [0, 0]]), 0, 1, device="cpu")
    fields = set(FlowStats.__dataclass_fields__)
    assert fields == {"seconds_total", "seconds_setup", "seconds_transfer", "seconds_phase1",
                      "seconds_phase2", "seconds_global_relabel", "seconds_cut", "pushes",
                      "relabels", "global_relabels", "bfs_levels", "gaps", "iterations",
                      "kernel_launches", "capacity_bytes", "device"}
    assert res.stats.capacity_bytes == 4  # pr's residual records (gpu-pr: its upload)
    assert res.stats.seconds_total >= res.stats.seconds_phase1 >= 0
    st = res.stats
    assert 0 < st.seconds_global_relabel <= st.seconds_phase1 + st.seconds_phase2
    # pr's preflow ends on no exact labels, so phase 1 ends with the cut's search
    assert res.method == "pr" and 0 < st.seconds_cut <= st.seconds_phase1


def test_input_not_modified():
    g = sp.csr_array(np.array([[0, 5, 1], [0, 0, 4], [0, 0, 0]], dtype=np.int16))
    before = (g.data.copy(), g.indices.copy(), g.indptr.copy())
    maximum_flow(g, 0, 2, device="cpu")
    for a, b in zip(before, (g.data, g.indices, g.indptr)):
        assert_array_equal(a, b)
    assert g.dtype == np.int16


def test_gil_is_released():
    """A Python thread keeps running while another solves (CPU, phase 1)."""
    rng = np.random.default_rng(21)
    n, m = 200_000, 1_200_000
    g = sp.csr_array((rng.integers(1, 100, m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                     shape=(n, n))
    assert_gil_released(lambda: solve_flow(g, 0, n - 1, method="pr", device="cpu",
                                           return_flow=False), min_seconds=0.005)


# ---- SciPy's own tests, with our function swapped in -----------------------------

def _scipy_test_cases():
    """(name, kwargs) for every test of SciPy's test_flow.py that calls
    maximum_flow, expanded over its parametrize marks."""
    try:  # SciPy's tests ship with its wheels, not with every distribution
        from scipy.sparse.csgraph.tests import test_flow as module
    except ImportError:
        return None, []
    cases = []
    for name, func in vars(module).items():
        if not name.startswith("test_") or "maximum_flow" not in func.__code__.co_names:
            continue
        grids = []
        for mark in getattr(func, "pytestmark", []):
            if mark.name == "parametrize":
                names = [a.strip() for a in mark.args[0].split(",")]
                grids.append([dict(zip(names, v if len(names) > 1 else (v,)))
                              for v in mark.args[1]])
        for combo in itertools.product(*grids):
            kwargs = {k: v for d in combo for k, v in d.items()}
            label = "-".join(map(str, kwargs.values()))
            cases.append(pytest.param(name, kwargs, id=f"{name}-{label}"))
    return module, cases


_SCIPY_MODULE, _SCIPY_CASES = _scipy_test_cases()
# Maximum flows that are not unique: SciPy's expected array is its own
# algorithm's choice, which only SciPy's names ("dinic", "edmonds_karp")
# reproduce; the other methods' flows are certified on the same graph in
# test_clrs_example.
_NOT_UNIQUE = {"test_example_from_clrs_chapter_26_1"}


@pytest.mark.parametrize("method", [pytest.param(None, id="scipy-names")] + METHODS)
@pytest.mark.parametrize("name, kwargs", _SCIPY_CASES)
def test_scipy_suite(monkeypatch, name, kwargs, method):
    """method None: SciPy's method names pass through (SciPy's own
    algorithms: every assertion of SciPy's test holds as it is); else every
    call runs `method`, whatever name the SciPy test passes."""
    def ours(csgraph, source, sink, *, method="dinic"):
        chosen = forced or method
        device = "auto" if chosen in _flow.SCIPY_METHODS else device_of(chosen)
        return maximum_flow(csgraph, source, sink, method=chosen, device=device)

    forced = method
    monkeypatch.setattr(_SCIPY_MODULE, "maximum_flow", ours)
    if name in _NOT_UNIQUE and forced is not None:
        monkeypatch.setattr(_SCIPY_MODULE, "assert_array_equal",
                            lambda a, b: assert_array_equal(np.shape(a), np.shape(b)))
    getattr(_SCIPY_MODULE, name)(**kwargs)


@pytest.mark.parametrize("method", METHODS)
def test_clrs_example(method):
    g = sp.csr_array([[0, 16, 13, 0, 0, 0], [0, 0, 10, 12, 0, 0], [0, 4, 0, 0, 14, 0],
                      [0, 0, 9, 0, 0, 20], [0, 0, 0, 7, 0, 4], [0, 0, 0, 0, 0, 0]])
    res = solve(g, 0, 5, method)
    assert_max_flow(g, 0, 5, res, expected=23)
    assert_array_equal(res.source_side, [True, True, True, False, True, False])


# ---- SciPy's algorithms, flow for flow ----------------------------------------------

def _random_csr(rng, n, duplicates, unsorted):
    """A csr_matrix with (optionally) duplicate and unsorted entries, as SciPy accepts."""
    deg = rng.integers(0, 6, n)
    indptr = np.concatenate([[0], np.cumsum(deg)])
    rows = [rng.integers(0, n, d) for d in deg]
    if not duplicates:
        rows = [np.unique(r) for r in rows]
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    rows = [r if unsorted else np.sort(r) for r in rows]
    indices = np.concatenate(rows).astype(np.int32) if indptr[-1] else np.zeros(0, np.int32)
    data = rng.integers(0, 12, indptr[-1]).astype(np.int32)
    g = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    if unsorted:
        g.has_sorted_indices = False
    return g


@pytest.mark.parametrize("method", ["dinic", "edmonds_karp"])
@pytest.mark.parametrize("duplicates, unsorted", [(False, False), (True, False), (False, True)])
def test_scipy_methods_return_scipys_flow(method, duplicates, unsorted):
    """Naming SciPy's method gives SciPy's very flow matrix, not just a
    maximum flow: random graphs with self-loops, zeros, anti-parallel arcs."""
    from scipy.sparse.csgraph import maximum_flow as scipy_maxflow
    rng = np.random.default_rng(len(method) * 10 + 2 * duplicates + unsorted)
    for _ in range(150):
        n = int(rng.integers(2, 30))
        g = _random_csr(rng, n, duplicates, unsorted)
        s, t = (int(x) for x in rng.choice(n, 2, replace=False))
        want = scipy_maxflow(g.copy(), s, t, method=method)
        got = maximum_flow(g, s, t, method=method)
        assert got.flow_value == want.flow_value
        assert_array_equal(got.flow.toarray(), want.flow.toarray())
        assert isinstance(got.flow, sp.csr_matrix) and got.method == method
        cut_u, cut_v = got.cut_edges()
        assert got.source_side[s] and not got.source_side[t]
        caps = sp.csr_array(g)
        assert sum(int(caps[u, v]) for u, v in set(zip(cut_u, cut_v))) == got.flow_value


def test_scipy_methods_keep_the_array_kind_and_run_on_the_cpu():
    g = sp.csr_array([[0, 5, 0], [0, 0, 3], [0, 0, 0]])
    r = maximum_flow(g, 0, 2, method="dinic")
    assert isinstance(r.flow, sp.csr_array) and r.device == "cpu" and r.flow_value == 3
    assert solve_flow(g, 0, 2, method="edmonds_karp", return_flow=False).flow is None
    with pytest.raises(ValueError, match="runs on the CPU"):
        maximum_flow(g, 0, 2, method="dinic", device="cuda")


"""Maximum flow 'gpu-pr' (ECL-MaxFlow, paper 002) through the core binding.

Every answer is certified, not only compared: the flow is feasible
(0 <= f <= cap, conservation away from s and t), source_side is exactly the
set of vertices that cannot reach t in the residual graph (so no residual
s-t path exists), and the capacity of that cut equals the value.  The value
is also compared with SciPy (int32 capacities) or networkx (larger ones).
GPU races are resolved after the fact, so each input runs GPU_REPEATS times.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.csgraph import maximum_flow as scipy_maximum_flow

from conftest import GPU_REPEATS

pytestmark = pytest.mark.cuda

GPU_PR = 2
VARIANTS = [pytest.param(False, id="tuned"), pytest.param(True, id="paper")]


# ---- inputs --------------------------------------------------------------------

def to_csr(n, tails, heads, caps):
    """(ptr, heads, caps) in the binding's dtypes, arcs grouped by tail (stable)."""
    tails = np.asarray(tails, dtype=np.int64)
    order = np.argsort(tails, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(tails, minlength=n), out=ptr[1:])
    return (ptr, np.asarray(heads, dtype=np.int32)[order],
            np.asarray(caps, dtype=np.int64)[order])


def random_network(seed: int):
    """Small networks with parallel and anti-parallel arcs, self-loops, zero
    capacities and, for some seeds, huge capacities or s cut off from t."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 61))
    m = int(rng.integers(0, 6 * n))
    tails = rng.integers(0, n, size=m)
    heads = rng.integers(0, n, size=m)
    big = seed % 4 == 3
    caps = rng.integers(0, 2**40 if big else 50, size=m)
    caps[rng.random(m) < 0.1] = 0
    if m:  # some parallel and anti-parallel copies
        k = rng.integers(0, m, size=m // 4)
        tails = np.concatenate([tails, tails[k], heads[k]])
        heads = np.concatenate([heads, heads[k], tails[k]])
        caps = np.concatenate([caps, rng.integers(0, 50, size=2 * k.size)])
    s, t = (int(x) for x in rng.choice(n, size=2, replace=False))
    if seed % 7 == 5:  # no arc leaves the side of s: value 0
        half = rng.random(n) < 0.5
        half[s], half[t] = True, False
        keep = ~(half[tails] & ~half[heads])
        tails, heads, caps = tails[keep], heads[keep], caps[keep]
    return n, to_csr(n, tails, heads, caps), s, t


def grid_network(rows: int, cols: int, seed: int):
    """A rows x cols grid, arcs both ways between 4-neighbours; s feeds the
    first column, the last column feeds t."""
    rng = np.random.default_rng(seed)
    idx = np.arange(rows * cols).reshape(rows, cols)
    pairs = [(idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])]
    tails = np.concatenate([a.ravel() for a, b in pairs] + [b.ravel() for a, b in pairs])
    heads = np.concatenate([b.ravel() for a, b in pairs] + [a.ravel() for a, b in pairs])
    caps = rng.integers(1, 100, size=tails.size)
    s, t = rows * cols, rows * cols + 1
    tails = np.concatenate([tails, np.full(rows, s), idx[:, -1]])
    heads = np.concatenate([heads, idx[:, 0], np.full(rows, t)])
    caps = np.concatenate([caps, rng.integers(50, 200, size=2 * rows)])
    n = rows * cols + 2
    return n, to_csr(n, tails, heads, caps), s, t


def layered_network(layers: int, width: int, degree: int, seed: int):
    """Random arcs from each layer to the next (and a few back); s feeds the
    first layer, the last layer feeds t."""
    rng = np.random.default_rng(seed)
    n = layers * width + 2
    s, t = n - 2, n - 1
    src = np.repeat(np.arange((layers - 1) * width), degree)
    layer = src // width
    dst = (layer + 1) * width + rng.integers(0, width, size=src.size)
    back = rng.random(src.size) < 0.1
    tails = np.where(back, dst, src)
    heads = np.where(back, src, dst)
    caps = rng.integers(1, 30, size=src.size)
    first, last = np.arange(width), np.arange((layers - 1) * width, layers * width)
    tails = np.concatenate([tails, np.full(width, s), last])
    heads = np.concatenate([heads, first, np.full(width, t)])
    caps = np.concatenate([caps, rng.integers(1, 60, size=2 * width)])
    return n, to_csr(n, tails, heads, caps), s, t


def hub_network(hubs: int, fan: int, seed: int):
    """s feeds `hubs` vertices, each with an arc to every one of `fan` middle
    vertices, each of which has an arc to every one of `hubs` more that feed
    t; some middle arcs both ways.  Hubs and small vertices share cycles."""
    rng = np.random.default_rng(seed)
    s, t = 0, 1
    first, middle = 2 + np.arange(hubs), 2 + hubs + np.arange(fan)
    last = 2 + hubs + fan + np.arange(hubs)
    n = 2 + 2 * hubs + fan
    a, b = rng.integers(0, fan, size=(2, fan))
    tails = np.concatenate([np.full(hubs, s), np.repeat(first, fan), np.repeat(middle, hubs),
                            last, middle[a], middle[b]])
    heads = np.concatenate([first, np.tile(middle, hubs), np.tile(last, fan),
                            np.full(hubs, t), middle[b], middle[a]])
    caps = rng.integers(1, 12, size=tails.size)
    caps[:hubs] = rng.integers(fan, 5 * fan, size=hubs)
    caps[-2 * fan - hubs:-2 * fan] = rng.integers(fan, 5 * fan, size=hubs)
    return n, to_csr(n, tails, heads, caps), s, t


def dense_network(n: int, degree: int, seed: int):
    """Every vertex has `degree` random arcs out (parallel ones too), so
    every span holds about 2 * degree arcs."""
    rng = np.random.default_rng(seed)
    tails = np.repeat(np.arange(n), degree)
    heads = rng.integers(0, n, size=tails.size)
    caps = rng.integers(0, 100, size=tails.size)
    return n, to_csr(n, tails, heads, caps), 0, n - 1


# ---- oracles and certificate ---------------------------------------------------

def reference_value(n, ptr, heads, caps, s, t) -> int:
    tails = np.repeat(np.arange(n), np.diff(ptr))
    keep = tails != heads
    if caps.size and caps.max() < 2**31 - 1 and caps[keep].sum() < 2**31 - 1:
        g = sp.csr_array((caps[keep].astype(np.int32), (tails[keep], heads[keep])),
                         shape=(n, n))  # sums parallel arcs
        g.sum_duplicates()
        return int(scipy_maximum_flow(g, s, t).flow_value)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for u, v, c in zip(tails[keep].tolist(), heads[keep].tolist(), caps[keep].tolist()):
        if graph.has_edge(u, v):
            graph[u][v]["capacity"] += c
        else:
            graph.add_edge(u, v, capacity=c)
    return int(nx.maximum_flow_value(graph, s, t))


def cannot_reach_sink(n, tails, heads, caps, flow, t) -> np.ndarray:
    """Vertices with no residual path to t (BFS from t over reversed residual arcs)."""
    fwd = flow < caps
    bwd = flow > 0
    # Reversed residual arcs: (head -> tail) for forward residual, (tail -> head)
    # for backward residual.
    rows = np.concatenate([heads[fwd], tails[bwd]])
    cols = np.concatenate([tails[fwd], heads[bwd]])
    g = sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    reached = breadth_first_order(g, t, directed=True, return_predecessors=False)
    side = np.ones(n, dtype=bool)
    side[reached] = False
    return side


def certify(n, ptr, heads, caps, s, t, value, arc_flow, source_side):
    tails = np.repeat(np.arange(n), np.diff(ptr))
    assert source_side.dtype == np.bool_ and source_side.shape == (n,)
    assert source_side[s] and not source_side[t]
    cut = caps[source_side[tails] & ~source_side[heads]].sum()
    assert value == cut  # a cut of capacity = value: nothing larger exists
    if arc_flow is None:
        return
    assert arc_flow.shape == caps.shape
    assert np.all(arc_flow >= 0) and np.all(arc_flow <= caps)
    assert np.all(arc_flow[tails == heads] == 0)
    balance = np.zeros(n, dtype=np.int64)  # exact: capacities reach 2^40
    np.add.at(balance, heads, arc_flow)
    np.subtract.at(balance, tails, arc_flow)
    inner = np.ones(n, dtype=bool)
    inner[[s, t]] = False
    assert np.all(balance[inner] == 0)
    assert balance[t] == value
    np.testing.assert_array_equal(source_side,
                                  cannot_reach_sink(n, tails, heads, caps, arc_flow, t))


def solve(csr, s, t, return_flow=True, paper=False, freq=-1.0):
    from matchflow import _core
    ptr, heads, caps = csr
    return _core.maxflow(ptr, heads, caps, s, t, GPU_PR, 0, 0, return_flow, freq, paper)[:4]


def check(n, csr, s, t, paper, expected=None, repeats=GPU_REPEATS):
    ptr, heads, caps = csr
    if expected is None:
        expected = reference_value(n, ptr, heads, caps, s, t)
    for _ in range(repeats):
        value, arc_flow, side, stats = solve(csr, s, t, paper=paper)
        assert value == expected
        certify(n, ptr, heads, caps, s, t, value, arc_flow, side)
        assert stats["global_relabels"] >= 1 and stats["kernel_launches"] > 0
        assert stats["bfs_levels"] >= stats["global_relabels"]  # each BFS has a level 1
        in_phases = stats["seconds_phase1"] + stats["seconds_phase2"]
        assert 0 < stats["seconds_global_relabel"] <= in_phases
        assert stats["capacity_bytes"] == 8 or (stats["capacity_bytes"] == 4
                                                and caps.max(initial=0) < 2**31)
    return stats


# ---- tests ---------------------------------------------------------------------

@pytest.mark.parametrize("paper", VARIANTS)
@pytest.mark.parametrize("seed", range(60))
def test_random_small(seed, paper):
    n, csr, s, t = random_network(seed)
    check(n, csr, s, t, paper)


@pytest.mark.parametrize("paper", VARIANTS)
def test_degenerate(paper):
    empty = to_csr(2, [], [], [])
    check(2, empty, 0, 1, paper, expected=0)
    parallel = to_csr(2, [0, 0, 0, 1, 1], [1, 1, 0, 0, 1], [3, 2**40, 7, 5, 9])
    check(2, parallel, 0, 1, paper, expected=3 + 2**40)
    check(2, parallel, 1, 0, paper, expected=5)
    zero = to_csr(3, [0, 1], [1, 2], [0, 4])
    check(3, zero, 0, 2, paper, expected=0)


@pytest.mark.parametrize("paper", VARIANTS)
@pytest.mark.parametrize("shape", [(3, 4), (40, 40), (300, 300)])
def test_grid(shape, paper):
    n, csr, s, t = grid_network(*shape, seed=shape[0])
    check(n, csr, s, t, paper)


@pytest.mark.parametrize("paper", VARIANTS)
@pytest.mark.parametrize("layers,width,degree", [(5, 10, 3), (50, 200, 4), (100, 1000, 3)])
def test_layered(layers, width, degree, paper):
    n, csr, s, t = layered_network(layers, width, degree, seed=layers)
    check(n, csr, s, t, paper)


@pytest.mark.parametrize("paper", VARIANTS)
@pytest.mark.parametrize("seed", range(8))
def test_phase1_only(seed, paper):
    """return_flow=False: no flow, same value and the same cut."""
    n, csr, s, t = random_network(100 + seed)
    value, flow, side, _ = solve(csr, s, t, paper=paper)
    for _ in range(GPU_REPEATS):
        v1, f1, side1, _ = solve(csr, s, t, return_flow=False, paper=paper)
        assert v1 == value and f1 is None
        np.testing.assert_array_equal(side1, side)
        certify(n, *csr, s, t, v1, None, side1)


@pytest.mark.parametrize("make", [
    pytest.param(lambda: hub_network(3, 2000, seed=1), id="hubs-3x2000"),
    pytest.param(lambda: hub_network(40, 600, seed=2), id="hubs-40x600"),
    pytest.param(lambda: dense_network(700, 400, seed=3), id="dense-700x400"),
])
def test_hubs(make):
    """Vertices of more arcs than discharge.cuh's default_hub_arcs get a
    whole block (discharge_hub) while the others get a warp."""
    n, csr, s, t = make()
    check(n, csr, s, t, False)


@pytest.mark.parametrize("seed", range(40))
def test_block_discharge_of_short_spans(seed, monkeypatch):
    """MATCHFLOW_GPU_PR_HUB_ARCS=1: a vertex is a hub from k arcs when its
    chunk holds k entries with arcs, so most discharges take a whole block,
    in the cooperative and the one-block tail kernels (block-wide min and
    capped prefix over spans shorter and longer than a block)."""
    monkeypatch.setenv("MATCHFLOW_GPU_PR_HUB_ARCS", "1")
    n, csr, s, t = random_network(seed) if seed < 30 else hub_network(2, 700, seed)
    check(n, csr, s, t, False)


@pytest.mark.parametrize("short_arcs", ["0", "3", "64"])
@pytest.mark.parametrize("seed", range(20))
def test_short_span_discharge(seed, short_arcs, monkeypatch):
    """MATCHFLOW_GPU_PR_SHORT_ARCS: spans up to that many arcs take the
    one-scan discharge (discharge.cuh: scan_short, push_short), the rest the warp
    form; 0 is the warp form alone, 3 mixes both in one cycle, 64 (the
    default) covers every span of these graphs but the hubs'; a lift and the
    push it enables run in one cycle."""
    monkeypatch.setenv("MATCHFLOW_GPU_PR_SHORT_ARCS", short_arcs)
    if seed < 12:
        n, csr, s, t = random_network(200 + seed)
    elif seed < 16:
        n, csr, s, t = grid_network(30 + seed, 50, seed=seed)
    else:
        n, csr, s, t = hub_network(2, 300, seed)
    check(n, csr, s, t, False)


@pytest.mark.parametrize("stop", ["0", "1e9"])
@pytest.mark.parametrize("seed", range(16))
def test_lift_stop(seed, stop, monkeypatch):
    """MATCHFLOW_GPU_PR_LIFT_STOP: 0 stops the multi-cycle kernels as soon
    as n / 8 labels were lifted since the last relabel (the grid leaves
    together on a ring of per-cycle lift counts; the tail kernel on its
    block's count), 1e9 never (relabel_due() decides between launches)."""
    monkeypatch.setenv("MATCHFLOW_GPU_PR_LIFT_STOP", stop)
    if seed < 8:
        n, csr, s, t = random_network(300 + seed)
    elif seed < 12:
        n, csr, s, t = grid_network(20 + 10 * seed, 40, seed=seed)
    elif seed < 14:
        n, csr, s, t = hub_network(3, 500, seed)
    else:
        n, csr, s, t = dense_network(300, 200, seed=seed)
    check(n, csr, s, t, False)


def test_large_grid_staged_copies():
    """2.25M arcs: the upload (three arrays, one pass) goes through staged
    pinned chunks and the arc flows (17 MB, most of them nonzero) come back
    through three of them (cuda/src/common/host_copy.cuh); certified, value
    as pr's."""
    from matchflow import _core
    n, csr, s, t = grid_network(750, 750, seed=11)
    expected = _core.maxflow(*csr, s, t, 0, 0, 0, False, -1.0, False)[0]  # pr, phase 1
    check(n, csr, s, t, False, expected=expected, repeats=1)


@pytest.mark.parametrize("side", [750, 200, 20])
@pytest.mark.parametrize("huge", [None, 0, -1, "int32"])
def test_capacities_go_as_int32_when_they_fit(huge, side):
    """A staged upload (the 750 x 750 grid, several chunks; the 200 x 200
    one, 1.6 MB: under min_staged_copy, over copy_part.cuh's
    min_narrowed_copy) sends int64 capacities as int32 when every one fits
    (host_copy.cuh's int64_as_int32 parts), else, as when one capacity of
    2^40 is met in the first or the last chunk, as int64; a small one (20 x
    20) sends int64 as they are; int32 capacities go as they are always.
    Certified, value as pr's."""
    from matchflow import _core
    n, (ptr, heads, caps), s, t = grid_network(side, side, seed=11)
    expected = _core.maxflow(ptr, heads, caps, s, t, 0, 0, 0, False, -1.0, False)[0]  # pr
    if huge == "int32":
        caps = caps.astype(np.int32)
    elif huge is not None:
        caps = caps.copy()
        caps[huge] = 2**40
        expected = _core.maxflow(ptr, heads, caps, s, t, 0, 0, 0, False, -1.0, False)[0]
    stats = check(n, (ptr, heads, caps), s, t, False, expected=expected, repeats=GPU_REPEATS)
    narrowed = huge is None and side >= 200
    assert stats["capacity_bytes"] == (4 if narrowed or huge == "int32" else 8)


def test_relabel_frequency_option():
    n, csr, s, t = grid_network(60, 60, seed=3)
    expected = reference_value(n, *csr, s, t)
    for freq in (1e-6, 1.0):
        value, flow, side, stats = solve(csr, s, t, freq=freq)
        assert value == expected
        certify(n, *csr, s, t, value, flow, side)

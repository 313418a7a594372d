"""The CPU maximum-flow cores ("pr", "ppr") through `matchflow._core.maxflow`.

Every answer is checked twice: its value against SciPy (or networkx, when
capacities do not fit SciPy's int32), and its certificate: 0 <= f <= cap,
conservation, no residual s-t path, and a cut (`source_side`) whose capacity
equals the value and which is exactly the set of vertices that cannot reach
the sink in the residual graph.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from matchflow import _core

METHODS = {"pr": 0, "ppr": 1}


def to_csr(n, tails, heads, caps):
    """Arc lists -> (ptr int64, heads int32, caps int64, tails sorted), input order kept
    per tail."""
    order = np.argsort(tails, kind="stable")
    tails, heads, caps = tails[order], heads[order], caps[order]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, tails + 1, 1)
    return np.cumsum(ptr), heads.astype(np.int32), caps.astype(np.int64), tails


def solve(method, ptr, heads, caps, s, t, *, threads=2, return_flow=True, relabel_freq=-1.0):
    return _core.maxflow(ptr, heads, caps, int(s), int(t), METHODS[method], threads, 0,
                         return_flow, relabel_freq, False)[:4]


def reference_value(n, tails, heads, caps, s, t) -> int:
    """SciPy on the merged arcs (it needs int32 and rejects duplicates);
    networkx when merged capacities exceed int32."""
    keep = tails != heads
    merged = sp.coo_array((caps[keep].astype(np.int64), (tails[keep], heads[keep])),
                          shape=(n, n)).tocsr()
    merged.sum_duplicates()
    if merged.nnz == 0 or merged.data.max() < 2**31:
        merged.data = merged.data.astype(np.int32)
        return int(maximum_flow(merged, int(s), int(t)).flow_value)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    coo = merged.tocoo()
    for u, v, c in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        graph.add_edge(u, v, capacity=c)
    return int(nx.maximum_flow_value(graph, int(s), int(t)))


def reaches_sink(n, tails, heads, caps, flow, t) -> np.ndarray:
    """Vertices with a residual path to t (BFS from t over reversed residual arcs)."""
    forward = flow < caps  # u -> v residual, reversed: v -> u
    backward = flow > 0    # v -> u residual, reversed: u -> v
    rows = np.concatenate([heads[forward], tails[backward]])
    cols = np.concatenate([tails[forward], heads[backward]])
    rev = sp.csr_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    seen = np.zeros(n, dtype=bool)
    seen[breadth_first_order(rev, int(t), return_predecessors=False)] = True
    return seen


def check_certificate(n, tails, heads, caps, s, t, value, flow, side):
    assert side.dtype == np.bool_ and side.shape == (n,)
    assert side[s] and not side[t]
    crossing = side[tails] & ~side[heads]
    assert caps[crossing].sum() == value
    if flow is None:
        return
    assert flow.dtype == np.int64
    assert (flow >= 0).all() and (flow <= caps).all()
    assert (flow[tails == heads] == 0).all()
    balance = np.zeros(n, dtype=np.int64)
    np.add.at(balance, tails, -flow)
    np.add.at(balance, heads, flow)
    assert balance[t] == value and balance[s] == -value
    assert not np.delete(balance, [s, t]).any()
    # The cut is exactly the set that cannot reach t; in particular s cannot.
    np.testing.assert_array_equal(~reaches_sink(n, tails, heads, caps, flow, t), side)


def random_instance(rng, max_cap):
    n = int(rng.integers(2, 41))
    m = int(rng.integers(0, 3 * n * n // 4 + 1) * rng.random())
    tails = rng.integers(0, n, m)
    heads = rng.integers(0, n, m)
    if m and rng.random() < 0.5:  # anti-parallel copies of some arcs
        pick = rng.random(m) < 0.3
        tails, heads = np.concatenate([tails, heads[pick]]), np.concatenate([heads, tails[pick]])
    if len(tails) and rng.random() < 0.5:  # parallel copies
        pick = rng.random(len(tails)) < 0.3
        tails, heads = np.concatenate([tails, tails[pick]]), np.concatenate([heads, heads[pick]])
    caps = rng.integers(0, max_cap, len(tails), endpoint=True)
    caps[rng.random(len(tails)) < 0.1] = 0
    s, t = rng.choice(n, 2, replace=False)
    if rng.random() < 0.05:  # cut s off from t entirely
        keep = (tails != s) & (heads != t)
        tails, heads, caps = tails[keep], heads[keep], caps[keep]
    return n, tails, heads, caps, int(s), int(t)


def run_and_check(method, n, tails, heads, caps, s, t, expected=None, threads=2):
    ptr, h32, c64, tails = to_csr(n, tails, heads, caps)
    heads, caps = h32.astype(np.int64), c64
    value, flow, side, stats = solve(method, ptr, h32, c64, s, t, threads=threads)
    if expected is None:
        expected = reference_value(n, tails, heads, caps, s, t)
    assert value == expected
    check_certificate(n, tails, heads, caps, s, t, value, flow, side)
    value2, flow2, side2, _ = solve(method, ptr, h32, c64, s, t, threads=threads,
                                    return_flow=False)
    assert value2 == value and flow2 is None
    np.testing.assert_array_equal(side2, side)
    assert stats["seconds_phase2"] >= 0 and stats["pushes"] >= 0
    return stats


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("chunk", range(4))
def test_random_small_int32(method, chunk):
    rng = np.random.default_rng([chunk, 7])
    for _ in range(400):
        max_cap = int(rng.choice([1, 5, 100, 2**20]))
        run_and_check(method, *random_instance(rng, max_cap))


@pytest.mark.parametrize("method", METHODS)
def test_random_small_large_capacities(method):
    rng = np.random.default_rng(40)
    for _ in range(150):
        run_and_check(method, *random_instance(rng, 2**40))


@pytest.mark.parametrize("method", METHODS)
def test_tiny_cases(method):
    empty = np.zeros(0, dtype=np.int64)
    # n = 2, no arcs; one arc; parallel arcs; self-loops only.
    run_and_check(method, 2, empty, empty, empty, 0, 1, expected=0)
    run_and_check(method, 2, np.array([0]), np.array([1]), np.array([7]), 0, 1, expected=7)
    run_and_check(method, 2, np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([3, 4, 9]), 0, 1,
                  expected=7)
    run_and_check(method, 2, np.array([0, 1]), np.array([0, 1]), np.array([5, 5]), 0, 1,
                  expected=0)
    # Sink before source, capacity near 2^62 / 3 on a path.
    big = 2**60
    run_and_check(method, 3, np.array([2, 1]), np.array([1, 0]), np.array([big, big - 1]), 2, 0,
                  expected=big - 1)


@pytest.mark.parametrize("narrow", ["0", "1"])
def test_pr_capacities_at_the_narrow_limit(narrow, monkeypatch):
    """pr's residual records hold int32 capacities when every capacity is
    below 2^30 (the two records of a pair of anti-parallel arcs can hold
    their sum), else int64: capacities just under the limit, anti-parallel
    pairs among them; networks with one capacity at or over it, whose narrow
    build is dropped and done again (small ones on one thread, a grid of
    160k arcs on the team); MATCHFLOW_PR_NARROW=0 keeps int64 records.
    stats' capacity_bytes says which records were used."""
    monkeypatch.setenv("MATCHFLOW_PR_NARROW", narrow)
    limit = 2**30
    rng = np.random.default_rng(41)
    for k in range(150):
        n, tails, heads, caps, s, t = random_instance(rng, limit - 1)
        near = rng.random(caps.size) < 0.5
        caps[near] = limit - 1 - rng.integers(0, 3, int(near.sum()))
        if k % 3 == 0 and caps.size:
            caps[rng.integers(caps.size)] = limit if k % 2 else 2**40
        stats = run_and_check("pr", n, tails, heads, caps, s, t)
        kept = caps[tails != heads]  # self-loops get no records
        assert stats["capacity_bytes"] == (4 if narrow == "1" and kept.max(initial=0) < limit
                                           else 8)
    for over in (limit - 1, limit):
        n, tails, heads, caps, s, t = grid_instance(200, 200, rng)
        caps[rng.integers(caps.size)] = over
        stats = run_and_check("pr", n, tails, heads, caps, s, t)
        assert stats["capacity_bytes"] == (4 if narrow == "1" and over < limit else 8)


def grid_instance(rows, cols, rng):
    """4-connected grid with random capacities, source on the left column, sink on the right."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    pairs = [(idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])]
    tails = np.concatenate([a.ravel() for a, b in pairs] + [b.ravel() for a, b in pairs])
    heads = np.concatenate([b.ravel() for a, b in pairs] + [a.ravel() for a, b in pairs])
    s, t = rows * cols, rows * cols + 1
    tails = np.concatenate([tails, np.full(rows, s), idx[:, -1]])
    heads = np.concatenate([heads, idx[:, 0], np.full(rows, t)])
    caps = rng.integers(0, 100, len(tails))
    return rows * cols + 2, tails, heads, caps, s, t


def layered_instance(layers, width, degree, rng):
    """Random layered DAG plus some backward arcs; source feeds layer 0, the last layer feeds t."""
    n = layers * width + 2
    s, t = n - 2, n - 1
    tails = [np.full(width, s)]
    heads = [np.arange(width)]
    for layer in range(layers - 1):
        tails.append(np.repeat(np.arange(width), degree) + layer * width)
        heads.append(rng.integers(0, width, width * degree) + (layer + 1) * width)
    tails.append(np.arange(width) + (layers - 1) * width)
    heads.append(np.full(width, t))
    back = rng.integers(0, layers * width, layers * width // 4)
    tails.append(back)
    heads.append(np.maximum(back - width, 0))
    tails, heads = np.concatenate(tails), np.concatenate(heads)
    caps = rng.integers(1, 1000, len(tails))
    return n, tails, heads, caps, s, t


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(60, 60), (40, 300)])
def test_grid(method, shape):
    rng = np.random.default_rng(shape[1])
    run_and_check(method, *grid_instance(*shape, rng))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("layers, width", [(20, 500), (200, 50)])
def test_layered(method, layers, width):
    rng = np.random.default_rng(layers)
    run_and_check(method, *layered_instance(layers, width, 4, rng))


@pytest.mark.parametrize("threads", [1, 2, 3, 16])
@pytest.mark.parametrize("kind", ["grid", "tall", "wide"])
@pytest.mark.parametrize("epochs", ["default", "rounds", "sequential", "lock-free", "handover"])
def test_ppr_thread_counts_agree(threads, kind, epochs, monkeypatch):
    # "wide": over 4096 vertices (parallel_min_active) active at once, so
    # rounds run in parallel; "grid" and "tall": few, so epochs are lock-free
    # discharges on the team from 64 active vertices, hi_pr's sequential
    # discharge below (handing over to the team after a quarter of its
    # relabel work), unless MATCHFLOW_PPR_MIN_ACTIVE=1 makes every epoch
    # rounds; "sequential": every epoch sequential (lock-free ones from 10^9
    # active vertices, no handover); "lock-free": lock-free from one active
    # vertex; "handover": a sequential epoch hands over almost at once.  The
    # global relabel's BFS levels are the grid's columns: 50 vertices or 400,
    # both over bfs_narrow (32), so the team expands them (one thread:
    # test_ppr_bfs_narrow_width), and "tall" reaches over adopt_parallel_min
    # vertices, so the team fills the sequential epochs' buckets.  16
    # threads: more than the CI host's cores, so the lock-free epochs'
    # thieves and idle detection run with threads descheduled.
    monkeypatch.delenv("MATCHFLOW_PPR_MIN_ACTIVE", raising=False)
    for name in ("MATCHFLOW_PPR_LOCK_FREE_MIN", "MATCHFLOW_PPR_HANDOVER"):
        monkeypatch.delenv(name, raising=False)
    if epochs == "rounds":
        monkeypatch.setenv("MATCHFLOW_PPR_MIN_ACTIVE", "1")
    elif epochs == "sequential":
        monkeypatch.setenv("MATCHFLOW_PPR_LOCK_FREE_MIN", "1e9")
        monkeypatch.setenv("MATCHFLOW_PPR_HANDOVER", "1e9")
    elif epochs == "lock-free":
        monkeypatch.setenv("MATCHFLOW_PPR_LOCK_FREE_MIN", "1")
    elif epochs == "handover":
        monkeypatch.setenv("MATCHFLOW_PPR_HANDOVER", "0.001")
    rng = np.random.default_rng(5)
    instance = {"grid": lambda: grid_instance(50, 80, rng),
                "tall": lambda: grid_instance(400, 60, rng),
                "wide": lambda: layered_instance(6, 6000, 3, rng)}[kind]()
    expected = reference_value(instance[0], *instance[1:])
    stats = run_and_check("ppr", *instance, expected=expected, threads=threads)
    if epochs == "rounds" and threads > 1:
        assert stats["iterations"] > 0  # rounds ran


@pytest.mark.parametrize("value", ["abc", "-5", "0", ""])
def test_ppr_malformed_overrides_are_ignored(value, monkeypatch):
    """Path overrides read by the core that are not numbers in range change
    nothing: the run does what it does without them (an unparsed 0 would
    have made every epoch rounds)."""
    rng = np.random.default_rng(5)
    instance = grid_instance(50, 80, rng)
    expected = reference_value(instance[0], *instance[1:])
    overrides = ("MATCHFLOW_PPR_MIN_ACTIVE", "MATCHFLOW_PPR_LOCK_FREE_MIN",
                 "MATCHFLOW_PPR_HANDOVER", "MATCHFLOW_PPR_BFS_NARROW", "MATCHFLOW_PPR_BFS_WINDOW")
    for name in overrides + ("MATCHFLOW_PPR_CYCLE_ARCS",):
        monkeypatch.delenv(name, raising=False)
    plain = run_and_check("ppr", *instance, expected=expected, threads=2)
    # Each needs at least 1 (the handover: above 0).
    for name in overrides:
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MATCHFLOW_PPR_CYCLE_ARCS", value if value != "0" else "x")
    stats = run_and_check("ppr", *instance, expected=expected, threads=2)
    assert stats["iterations"] == plain["iterations"]


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("width", ["1", "100000000"])
@pytest.mark.parametrize("kind", ["grid", "tall"])
def test_ppr_bfs_narrow_width(threads, width, kind, monkeypatch):
    """MATCHFLOW_PPR_BFS_NARROW (parallel_bfs.hpp): from 1 every BFS level
    is expanded by the team, from 10^8 every level by one thread; the
    labels are the same distances, so the answer and its cut are too."""
    monkeypatch.setenv("MATCHFLOW_PPR_BFS_NARROW", width)
    rng = np.random.default_rng(7)
    instance = grid_instance(50, 80, rng) if kind == "grid" else grid_instance(400, 60, rng)
    run_and_check("ppr", *instance, threads=threads)


def necklace_instance(widths, rng):
    """Layers of the given widths, each joined both ways to the next by
    every pair (random capacities); the source feeds the first layer and the
    last feeds the sink: the sink's BFS levels have these widths."""
    starts = np.concatenate([[0], np.cumsum(widths)])
    n = int(starts[-1]) + 2
    s, t = n - 2, n - 1
    tails, heads = [np.arange(widths[0])], [np.full(widths[0], t)]
    for a, b in zip(range(len(widths) - 1), range(1, len(widths))):
        u = np.repeat(np.arange(starts[a], starts[a + 1]), widths[b])
        v = np.tile(np.arange(starts[b], starts[b + 1]), widths[a])
        tails += [u, v]
        heads += [v, u]
    last = np.arange(starts[-2], starts[-1])
    tails.append(np.full(len(last), s))
    heads.append(last)
    tails, heads = np.concatenate(tails), np.concatenate(heads)
    return n, tails, heads, rng.integers(1, 100, len(tails)), s, t


@pytest.mark.parametrize("threads", [3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_ppr_bfs_narrow_and_wide_levels_alternate(threads, seed, monkeypatch):
    """parallel_bfs.hpp with the narrow width at 8: levels of 1-3 and of
    9-40 vertices alternate at random, so narrow stretches on thread 0 come
    between wide levels and the wide levels' counter slots (three, rotating)
    are reused across them; the labels, hence the answer and its cut, are
    the sequential BFS's."""
    monkeypatch.setenv("MATCHFLOW_PPR_BFS_NARROW", "8")
    rng = np.random.default_rng(40 + seed)
    widths = np.where(rng.random(120) < 0.5, rng.integers(1, 4, 120), rng.integers(9, 41, 120))
    instance = necklace_instance(widths, rng)
    stats = run_and_check("ppr", *instance, threads=threads)
    # The first global relabel's BFS crosses the whole necklace (nothing is
    # saturated yet but the source's arcs): stats count its levels.
    assert stats["global_relabels"] > 0 and stats["bfs_levels"] >= len(widths)


@pytest.mark.parametrize("threads", [2, 3, 16])
@pytest.mark.parametrize("window", ["1", "2", "5", "1000000"])
@pytest.mark.parametrize("kind", ["grid", "tall"])
def test_ppr_bfs_window(threads, window, kind, monkeypatch):
    """MATCHFLOW_PPR_BFS_WINDOW (windowed_bfs.hpp): after a global relabel
    of narrow levels the next ones search that many levels a barrier,
    lowering labels found too high (1: never; 10^6: the whole search one
    window); the labels are the same distances, so the answer and its cut
    are too."""
    monkeypatch.setenv("MATCHFLOW_PPR_BFS_WINDOW", window)
    rng = np.random.default_rng(11)
    instance = grid_instance(50, 80, rng) if kind == "grid" else grid_instance(400, 60, rng)
    stats = run_and_check("ppr", *instance, threads=threads)
    assert stats["global_relabels"] > 1  # a windowed one among them, unless window is 1


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("freq", [0.05, 20.0])
def test_relabel_frequency_changes_work_not_answer(method, freq):
    rng = np.random.default_rng(9)
    instance = layered_instance(30, 100, 3, rng)
    expected = reference_value(instance[0], *instance[1:])
    n, tails, heads, caps, s, t = instance
    ptr, h32, c64, _ = to_csr(n, tails, heads, caps)
    base = solve(method, ptr, h32, c64, s, t)[3]["global_relabels"]
    value, _, _, stats = solve(method, ptr, h32, c64, s, t, relabel_freq=freq)
    assert value == expected
    # A higher frequency factor than the default (0.5 pr, 2 ppr) relabels globally more often.
    assert (stats["global_relabels"] > base) == (freq > 1) or stats["global_relabels"] == base


def hub_instance(n, m, rng):
    """Symmetric digraph whose degrees follow a power law (every arc has an
    anti-parallel twin): push-relabel leaves many flow cycles among the hubs
    for phase 2 to cancel."""
    weights = 1.0 / np.arange(1, n + 1) ** 0.9
    ends = rng.choice(n, (2, m), p=weights / weights.sum())
    tails, heads = np.concatenate([ends[0], ends[1]]), np.concatenate([ends[1], ends[0]])
    caps = rng.integers(1, 100, len(tails))
    return n, tails, heads, caps, 0, 1


@pytest.mark.parametrize("method", METHODS)
def test_flow_cycles_cancelled(method):
    # Phase 2 meets flow cycles here (checked: it never ends if it does not
    # cancel them) and must still return a valid flow.
    rng = np.random.default_rng(11)
    run_and_check(method, *hub_instance(2000, 20_000, rng))


def twin_grid_instance(side, rng):
    """Symmetric grid digraph (every arc has an anti-parallel twin, some
    doubled by a parallel arc) with the source's arcs too wide to drain:
    push-relabel leaves anti-parallel flows where excess is stranded."""
    ids = np.arange(side * side).reshape(side, side)
    right = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    ends = np.concatenate([right, down], axis=1)
    tails, heads = np.concatenate([ends[0], ends[1]]), np.concatenate([ends[1], ends[0]])
    extra = rng.choice(len(tails), len(tails) // 5, replace=False)
    tails, heads = np.concatenate([tails, tails[extra]]), np.concatenate([heads, heads[extra]])
    caps = rng.integers(1, 20, len(tails))
    s, t = 0, side * side - 1
    caps[tails == s] = 10_000
    return side * side, tails, heads, caps, s, t


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(3))
def test_anti_parallel_flows_cancelled(method, seed):
    # Low-degree vertices: phase 2 cancels their 2-cycles in one pass when it
    # first meets them, the parent's arc among them (a valid flow must result).
    n, tails, heads, caps, s, t = twin_grid_instance(40, np.random.default_rng([seed, 13]))
    # 33 zero-capacity self loops a vertex (no residual arcs) make every row too long for the
    # value-only build's pairing of anti-parallel arcs: both calls below get the same graph.
    loops = np.repeat(np.arange(n), 33)
    instance = (n, np.concatenate([tails, loops]), np.concatenate([heads, loops]),
                np.concatenate([caps, np.zeros(loops.size, caps.dtype)]), s, t)
    stats = run_and_check(method, *instance, threads=1)  # one thread: the same pushes each run
    # Few longer cycles are left: the search alone returns the excess (no phase-2 pushes).
    ptr, h32, c64, _ = to_csr(*instance[:4])
    preflow = solve(method, ptr, h32, c64, *instance[4:], threads=1, return_flow=False)[3]
    assert stats["pushes"] == preflow["pushes"] > 0


@pytest.mark.parametrize("method", METHODS)
def test_cycle_heavy_flow_returned_by_push_relabel(method):
    # Among hubs the search cancels more cycle arcs than 3 per vertex, gives
    # up, and a push-relabel pass returns the excess: its pushes are counted.
    instance = hub_instance(2000, 20_000, np.random.default_rng(11))
    stats = run_and_check(method, *instance, threads=1)
    ptr, h32, c64, _ = to_csr(*instance[:4])
    preflow = solve(method, ptr, h32, c64, *instance[4:], threads=1, return_flow=False)[3]
    assert stats["pushes"] > preflow["pushes"]


def stranded_instance(width, rng):
    """The source's arcs lead to `width` vertices with no path to the sink
    (random arcs among them and back to the source) and one arc to the sink:
    phase 1 pushes nothing, and all of the excess but the sink's is stranded."""
    n = width + 2
    s, t = 0, 1
    mid = np.arange(2, n)
    among = rng.integers(2, n, (2, 3 * width))
    tails = np.concatenate([np.zeros(width, np.int64), among[0], mid[::7], [s]])
    heads = np.concatenate([mid, among[1], np.zeros(len(mid[::7]), np.int64), [t]])
    caps = rng.integers(1, 50, len(tails))
    return n, tails, heads, caps, s, t


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("kind", ["stranded", "hub", "twin"])
def test_ppr_phase2_by_rounds(threads, kind, monkeypatch):
    # MATCHFLOW_PPR_CYCLE_ARCS=0: ppr's phase 2 skips the flow decomposition
    # and returns the excess by its synchronous rounds with the source as
    # target.  "stranded" holds over parallel_min_active (4096) vertices
    # with excess, so the rounds run in parallel; phase 1 pushes nothing
    # there, so every push and round counted is phase 2's.
    monkeypatch.setenv("MATCHFLOW_PPR_CYCLE_ARCS", "0")
    monkeypatch.delenv("MATCHFLOW_PPR_MIN_ACTIVE", raising=False)
    rng = np.random.default_rng(17)
    instance = {"stranded": lambda: stranded_instance(6000, rng),
                "hub": lambda: hub_instance(2000, 20_000, rng),
                "twin": lambda: twin_grid_instance(40, rng)}[kind]()
    stats = run_and_check("ppr", *instance, threads=threads)
    if kind == "stranded":
        assert stats["pushes"] > 0 and stats["iterations"] > 0


@pytest.mark.parametrize("method", METHODS)
def test_residual_graph_same_for_every_team(method):
    # Over 2^16 arcs (with self-loops and parallel arcs), so the residual
    # graph is built by the whole team: its layout, hence pr's whole run,
    # does not depend on the team size.
    rng = np.random.default_rng(12)
    n, tails, heads, caps, s, t = hub_instance(20_000, 40_000, rng)
    tails, heads = np.concatenate([tails, tails[:9000]]), np.concatenate([heads, tails[:9000]])
    caps = np.concatenate([caps, caps[:9000]])
    ptr, h32, c64, _ = to_csr(n, tails, heads, caps)
    runs = [solve(method, ptr, h32, c64, s, t, threads=k) for k in (1, 2, 3)]
    assert len({r[0] for r in runs}) == 1
    for r in runs[1:]:
        np.testing.assert_array_equal(r[2], runs[0][2])
        if method == "pr":
            np.testing.assert_array_equal(r[1], runs[0][1])
            assert r[3]["pushes"] == runs[0][3]["pushes"]


def graph_cut_instance(rng, pixels):
    """A graph cut's shape with adversarial details: the source linked to
    about half the pixels and about half linked to the sink (zero and
    parallel links among them), random pixel arcs both ways, and a few arcs
    into the source and out of the sink."""
    s, t = pixels, pixels + 1
    a, b = rng.integers(0, pixels, (2, 4 * pixels))
    links = rng.random(pixels)
    to_pix, from_pix = np.flatnonzero(links < 0.55), np.flatnonzero(links > 0.45)
    extra, back = rng.integers(0, pixels, 4), to_pix[:3]
    tails = np.concatenate([a, b, np.full(len(to_pix), s), from_pix, back, extra, [t, t]])
    heads = np.concatenate([b, a, to_pix, np.full(len(from_pix), t), np.full(len(back), s),
                            extra[::-1], extra[:2]])
    caps = rng.integers(0, 60, len(tails))
    caps[rng.random(len(tails)) < 0.05] = 0
    return pixels + 2, tails, heads, caps, s, t


@pytest.mark.parametrize("share", ["", "0", "1e9"])
@pytest.mark.parametrize("seed", range(10))
def test_pr_local_start(share, seed, monkeypatch):
    """pr starts at hi_pr's labels (1 everywhere, no first global update)
    when the preflow leaves excess at n / 8 vertices or more and as many arcs
    have room into t (MATCHFLOW_PR_LOCAL_START: 8 by default, 0 never, 1e9
    whenever one vertex is active and one arc enters t); phase 2's fallback
    loop may start so too.  Every answer certified, the value SciPy's."""
    monkeypatch.setenv("MATCHFLOW_PR_LOCAL_START", share)
    rng = np.random.default_rng(seed)
    instance = graph_cut_instance(rng, int(rng.integers(8, 300)))
    run_and_check("pr", *instance, threads=1)
    run_and_check("pr", *random_instance(rng, 40), threads=1)


def test_pr_local_start_skips_the_first_global_update(monkeypatch):
    """On an image's graph cut (value only) pr needs no global relabel at
    all from the local start; with it off, the first one runs."""
    from matchflow import generators
    inst = generators.segmentation_grid(64, 64, seed=3)
    g = inst.graph
    ptr, heads = g.indptr.astype(np.int64), g.indices.astype(np.int32)
    caps = g.data.astype(np.int64)
    runs = {}
    for share in ("", "0"):
        monkeypatch.setenv("MATCHFLOW_PR_LOCAL_START", share)
        value, _, _, stats = solve("pr", ptr, heads, caps, inst.source, inst.sink, threads=1,
                                   return_flow=False)
        runs[share] = (value, stats["global_relabels"])
    assert runs[""][0] == runs["0"][0]
    assert runs[""][1] == 0 and runs["0"][1] >= 1

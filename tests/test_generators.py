"""matchflow.generators: shapes, determinism, structure, known matching sizes, flow networks."""
import doctest

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import (breadth_first_order, maximum_bipartite_matching, maximum_flow,
                                  structural_rank)

from matchflow import generators as gen

RANDOM = {
    "uniform": lambda seed: gen.uniform_random(3000, degree=4.0, seed=seed),
    "rmat": lambda seed: gen.rmat(11, seed=seed),
    "powerlaw": lambda seed: gen.power_law(3000, 2000, degree=4.0, seed=seed),
    "delaunay": lambda seed: gen.delaunay(2000, seed=seed),
    "rgg": lambda seed: gen.random_geometric(3000, degree=8.0, seed=seed),
    "grid": lambda seed: gen.grid_road(40, 30, p_delete=0.2, seed=seed),
}
SYMMETRIC = ("delaunay", "rgg", "grid")


def _canonical(g):
    assert isinstance(g, sp.csr_array)
    assert g.has_canonical_format          # sorted, no duplicates
    assert np.all(g.data == 1)


@pytest.mark.parametrize("module,least", [(gen, 2), (gen.matching, 20), (gen.flow, 20)],
                         ids=["package", "matching", "flow"])
def test_doctests(module, least):
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried >= least and failures == 0


def test_package_reexports_both_modules():
    """`from matchflow import generators` keeps every name the old single module had."""
    for module in (gen.matching, gen.flow):
        public = {k for k, v in vars(module).items() if not k.startswith("_")
                  and callable(v) and getattr(v, "__module__", "") == module.__name__}
        assert public and public <= set(gen.__all__)
        assert all(getattr(gen, k) is getattr(module, k) for k in public)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_families_are_seeded_and_canonical(name):
    a, b, c = RANDOM[name](1), RANDOM[name](1), RANDOM[name](2)
    _canonical(a)
    assert (a != b).nnz == 0
    assert a.shape == c.shape and (a != c).nnz > 0
    if name in SYMMETRIC:
        assert (a != a.T).nnz == 0


def test_power_law_degrees_are_skewed_on_both_sides():
    g = gen.power_law(20_000, degree=4.0, exponent=2.1, seed=0)
    assert g.shape == (20_000, 20_000) and 0.5 * 80_000 < g.nnz <= 80_000
    for deg in (np.diff(g.indptr), np.diff(g.tocsc().indptr)):
        assert deg.max() > 100 * deg.mean()
        assert np.count_nonzero(deg == 0) > 0.2 * deg.size
    with pytest.raises(ValueError, match="exponent"):
        gen.power_law(10, exponent=1.0)


def test_rmat_degree_is_skewed():
    g = gen.rmat(12, seed=0)
    deg = np.diff(g.indptr)
    assert g.shape == (4096, 4096)
    assert 0.5 * 16 * 4096 < g.nnz <= 16 * 4096
    assert deg.max() > 20 * deg.mean()           # power-law-like hubs
    assert np.count_nonzero(deg == 0) > 0        # isolated vertices


def test_delaunay_is_a_triangulation():
    n = 3000
    g = gen.delaunay(n, seed=3, diagonal=False)
    # Planar triangulation: at most 3n - 6 undirected edges, average degree near 6.
    assert g.nnz // 2 <= 3 * n - 6
    assert 5.5 < g.nnz / n < 6.0
    assert np.all(g.diagonal() == 0)
    assert np.all(gen.delaunay(n, seed=3).diagonal() == 1)


def test_random_geometric_radius():
    g = gen.random_geometric(500, radius=0.0)
    assert g.nnz == 0
    g = gen.random_geometric(500, radius=2.0)      # everything within reach
    assert g.nnz == 500 * 499


def test_grid_road_deletions():
    full = gen.grid_road(20, 10, p_delete=0.0)
    assert full.nnz == 2 * (19 * 10 + 20 * 9)
    part = gen.grid_road(20, 10, p_delete=0.5, seed=0)
    assert 0 < part.nnz < full.nnz
    assert ((part - full) > 0).nnz == 0          # only grid edges


def test_random_permutation_keeps_structure():
    g = gen.uniform_random(400, 300, degree=2.0, seed=0)
    p = gen.random_permutation(g, seed=5)
    _canonical(p)
    assert p.shape == g.shape and p.nnz == g.nnz
    assert structural_rank(p) == structural_rank(g)
    assert sorted(np.diff(p.indptr)) == sorted(np.diff(g.indptr))


@pytest.mark.parametrize("levels,copies", [(1, 1), (2, 3), (7, 1), (12, 5)])
def test_layered_jacobian_shape_and_rank(levels, copies):
    g = gen.layered_jacobian(levels, copies)
    order = copies * (3 * levels + 1)
    assert g.shape == (order, order)
    assert g.nnz == copies * (8 * levels - 1)
    assert structural_rank(g) == order
    m = maximum_bipartite_matching(g, perm_type="column")
    assert np.count_nonzero(m >= 0) == order


def test_adversarial_families():
    assert structural_rank(gen.star(100)) == 2
    assert structural_rank(gen.star(100, diagonal=True)) == 100
    assert structural_rank(gen.star(1)) == 1
    path = gen.long_path(1000)
    assert path.nnz == 2 * 999 + 1 and structural_rank(path) == 1000
    blocks = gen.complete_bipartite_blocks(7, 5, 9)
    assert blocks.shape == (35, 63) and blocks.nnz == 7 * 45
    assert structural_rank(blocks) == 35


@pytest.mark.parametrize("bad", [lambda: gen.rmat(0), lambda: gen.long_path(1),
                                 lambda: gen.layered_jacobian(0)])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        bad()


# ----------------------------------------------------------------------------
# Flow networks (matchflow.generators.flow)
# ----------------------------------------------------------------------------

FLOW = {
    "acyclic": lambda seed: gen.acyclic_dense(60, seed=seed),
    "genrmf": lambda seed: gen.genrmf(5, 7, seed=seed),
    "genrmf-long": lambda seed: gen.genrmf_long(4, seed=seed),
    "genrmf-wide": lambda seed: gen.genrmf_wide(6, seed=seed),
    "wash": lambda seed: gen.washington_rlg(7, 9, seed=seed),
    "washlong": lambda seed: gen.washington_rlg_long(6, seed=seed),
    "washwide": lambda seed: gen.washington_rlg_wide(8, seed=seed),
    "grid": lambda seed: gen.grid_flow(20, 30, seed=seed),
    "rmat": lambda seed: gen.rmat_flow(9, seed=seed),
    "delaunay": lambda seed: gen.delaunay_flow(500, seed=seed),
    "road": lambda seed: gen.road_flow(30, 20, p_delete=0.3, seed=seed),
    "segmentation": lambda seed: gen.segmentation_grid(40, 30, seed=seed),
    "matching": lambda seed: gen.matching_flow(gen.uniform_random(300, 200, degree=3, seed=seed)),
    "segmentation8": lambda seed: gen.segmentation_grid(30, 25, seed=seed, connectivity=8),
    "segmentation3d": lambda seed: gen.segmentation_volume(6, 8, 10, seed=seed),
    "segmentation3d26": lambda seed: gen.segmentation_volume(5, 6, 7, seed=seed, connectivity=26),
}
UNDIRECTED = ("grid", "rmat", "delaunay", "road")


def _instances(x):
    return x if isinstance(x, list) else [x]


def _well_formed(inst):
    g = inst.graph
    assert isinstance(inst, gen.FlowInstance)
    assert isinstance(g, sp.csr_array) and g.shape[0] == g.shape[1]
    assert g.data.dtype == np.int64 and g.indices.dtype == np.int32
    assert g.has_canonical_format                     # sorted, no parallel arcs
    assert g.data.min() >= 1                          # no zero or negative capacities
    assert np.all(g.diagonal() == 0)                  # no self-loops
    assert 0 <= inst.source < g.shape[0] and 0 <= inst.sink < g.shape[0]
    assert inst.source != inst.sink
    assert isinstance(inst.source, int) and isinstance(inst.sink, int) and inst.name


@pytest.mark.parametrize("name", sorted(FLOW))
def test_flow_families_are_seeded_and_well_formed(name):
    a, b, c = (_instances(FLOW[name](s)) for s in (1, 1, 2))
    for inst in a + c:
        _well_formed(inst)
    assert [(i.source, i.sink, i.name) for i in a] == [(i.source, i.sink, i.name) for i in b]
    assert (a[0].graph != b[0].graph).nnz == 0
    assert a[0].graph.shape == c[0].graph.shape or name in UNDIRECTED  # components may differ
    differs = a[0].graph.shape != c[0].graph.shape or (a[0].graph != c[0].graph).nnz > 0
    assert differs
    if name in UNDIRECTED:
        assert len(a) == 5 and all(i.graph is a[0].graph for i in a)
        assert (a[0].graph != a[0].graph.T).nnz == 0   # both arcs, one capacity
        assert len({i.source for i in a} | {i.sink for i in a}) == 10


def test_flow_instance_is_frozen():
    inst = gen.acyclic_dense(3)
    with pytest.raises(AttributeError):
        inst.source = 1


def test_acyclic_dense_is_the_complete_dag():
    inst = gen.acyclic_dense(300, seed=4)
    g = inst.graph
    assert (inst.source, inst.sink, inst.name) == (0, 299, "ac_n300")
    assert g.nnz == 300 * 299 // 2
    assert sp.tril(g).nnz == 0                        # only i -> j with i < j, all of them
    assert np.array_equal(np.diff(g.indptr), np.arange(299, -1, -1))
    assert g.data.max() <= 10_000 and g.data.min() >= 1
    assert len(np.unique(g.data)) > 5000              # random, not constant


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4), (8, 5)])
def test_genrmf_structure(a, b):
    c1, c2 = 10, 50
    inst = gen.genrmf(a, b, c1=c1, c2=c2, seed=a + b)
    g, f = inst.graph, a * a
    assert g.shape == (f * b, f * b)
    assert g.nnz == 4 * a * (a - 1) * b + f * (b - 1)
    assert (inst.source, inst.sink) == (0, f * b - 1)
    coo = g.tocoo()
    frame_u, frame_v = coo.row // f, coo.col // f
    inside = frame_u == frame_v
    assert np.all(coo.data[inside] == c2 * f)
    cross = ~inside
    assert np.all(frame_v[cross] == frame_u[cross] + 1)   # only to the next frame
    assert np.all((coo.data[cross] >= c1) & (coo.data[cross] <= c2))
    # between frames: a permutation (one arc out of and one into every vertex)
    out_deg = np.bincount(coo.row[cross], minlength=f * b)
    in_deg = np.bincount(coo.col[cross], minlength=f * b)
    assert np.all(out_deg[: f * (b - 1)] == 1) and np.all(in_deg[f:] == 1)
    # inside a frame: arcs join grid neighbours, both ways
    ins = sp.csr_array((coo.data[inside], (coo.row[inside], coo.col[inside])), shape=g.shape)
    assert (ins != ins.T).nnz == 0
    d = np.abs(coo.row[inside] - coo.col[inside])
    assert set(np.unique(d)) <= {1, a}


def test_genrmf_table_sizes_and_names():
    long_, wide = gen.genrmf_long(3, seed=0), gen.genrmf_wide(5, seed=0)
    assert long_.name == "genrmf-long_a3_b24" and long_.n_vertices == 9 * 24
    assert wide.name == "genrmf-wide_a5_b5" and wide.n_arcs == 4 * 5 * 4 * 5 + 25 * 4


def test_washington_rlg_structure():
    rows, cols, c1 = 6, 5, 20
    inst = gen.washington_rlg(rows, cols, c1=c1, seed=7)
    g = inst.graph
    n = rows * cols + 2
    assert g.shape == (n, n) and (inst.source, inst.sink) == (0, n - 1)
    assert g.nnz == 3 * rows * (cols - 1) + 2 * rows
    assert np.array_equal(g.indices[g.indptr[0]:g.indptr[1]], np.arange(1, rows + 1))
    assert np.all(g[[0], :].data == 3 * c1)
    last = np.arange(1 + (cols - 1) * rows, 1 + cols * rows)
    assert np.all(g[:, [n - 1]].tocoo().row == last)
    coo = g.tocoo()
    mid = (coo.row != 0) & (coo.col != n - 1)
    level_u, level_v = (coo.row[mid] - 1) // rows, (coo.col[mid] - 1) // rows
    assert np.all(level_v == level_u + 1)
    assert np.all((coo.data[mid] >= 1) & (coo.data[mid] <= c1))
    deg = np.diff(g.indptr)[1:1 + rows * (cols - 1)]
    assert np.all(deg == 3)                           # three distinct heads each
    assert gen.washington_rlg_long(4).name == "washlong_r4_c8"
    assert gen.washington_rlg_wide(4).n_vertices == 18


def test_washington_heads_are_uniform():
    """The three distinct heads are spread over the whole next level."""
    inst = gen.washington_rlg(10, 2000, seed=0)
    coo = inst.graph.tocoo()
    mid = (coo.row != 0) & (coo.col != inst.sink)
    pos = (coo.col[mid] - 1) % 10
    counts = np.bincount(pos, minlength=10)
    assert counts.min() > 0.9 * counts.mean() and counts.max() < 1.1 * counts.mean()


def test_undirected_network_component_and_capacities():
    # two components: a triangle and a 5-cycle; plus a self-loop and a duplicate
    u = [0, 1, 2, 3, 4, 5, 6, 7, 1, 0]
    v = [1, 2, 0, 4, 5, 6, 7, 3, 1, 1]
    pattern = sp.coo_array((np.ones(10), (u, v)), shape=(8, 8))
    g = gen.undirected_network(pattern, low=5, high=9, seed=0)
    assert g.shape == (5, 5) and g.nnz == 10          # the 5-cycle, both directions
    assert (g != g.T).nnz == 0 and np.all(g.diagonal() == 0)
    assert g.data.min() >= 5 and g.data.max() <= 9
    whole = gen.undirected_network(pattern, seed=0, largest_component=False)
    assert whole.shape == (8, 8) and whole.nnz == 16
    with pytest.raises(ValueError, match="square"):
        gen.undirected_network(sp.csr_array((3, 4)))


def test_undirected_capacities_in_paper_range():
    g = gen.grid_flow(50, 40, seed=3)[0].graph
    assert g.data.min() >= 100 and g.data.max() <= 10_000
    assert g.nnz == 4 * 50 * 40 - 2 * (50 + 40)


def test_st_pairs_by_degree_takes_the_highest_degrees():
    pattern = gen.rmat(10, seed=5)
    pairs = gen.st_pairs_by_degree(gen.undirected_network(pattern, seed=5), k=5, name="r")
    g = pairs[0].graph
    deg = np.diff(g.indptr)
    chosen = [v for p in pairs for v in (p.source, p.sink)]
    assert [deg[v] for v in chosen] == sorted(deg, reverse=True)[:10]
    assert all(deg[p.source] >= deg[p.sink] for p in pairs)
    assert pairs[0].name == f"r_s{pairs[0].source}_t{pairs[0].sink}"


def test_st_pairs_uniform_degree_is_random_and_seeded():
    ring = sp.csr_array((np.ones(100), (np.arange(100), (np.arange(100) + 1) % 100)),
                        shape=(100, 100))
    g = gen.undirected_network(ring, seed=0)
    a, b = gen.st_pairs_by_degree(g, 5, seed=1), gen.st_pairs_by_degree(g, 5, seed=2)
    ends = [(p.source, p.sink) for p in a]
    assert ends == [(p.source, p.sink) for p in gen.st_pairs_by_degree(g, 5, seed=1)]
    assert ends != [(p.source, p.sink) for p in b]
    assert ends != [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]   # not by index
    with pytest.raises(ValueError):
        gen.st_pairs_by_degree(g, 51)


def test_matching_flow_value_is_the_matching():
    g = gen.uniform_random(400, 300, degree=2.5, seed=3)
    c = g.tocoo()
    dup = sp.coo_array((np.ones(2 * c.nnz), (np.r_[c.row, c.row], np.r_[c.col, c.col])),
                       shape=g.shape)  # every entry stored twice: still one unit each
    for pattern in (g, dup):
        inst = gen.matching_flow(pattern)
        assert np.all(inst.graph.data == 1)
        value = maximum_flow(inst.graph.astype(np.int32), inst.source, inst.sink).flow_value
        assert value == np.count_nonzero(maximum_bipartite_matching(g) >= 0)


def test_segmentation_grid_layout_and_cut():
    rows, cols = 48, 40
    inst = gen.segmentation_grid(rows, cols, seed=2)
    g, n_pix = inst.graph, rows * cols
    assert (inst.source, inst.sink) == (n_pix, n_pix + 1) and g.shape == (n_pix + 2,) * 2
    pix = g[:n_pix, :n_pix]
    assert (pix != pix.T).nnz == 0                    # n-links: same capacity both ways
    d = np.abs(pix.tocoo().row - pix.tocoo().col)
    assert set(np.unique(d)) <= {1, cols}             # 4-connected
    assert pix.nnz > 0.9 * 2 * (2 * rows * cols - rows - cols) and pix.data.max() <= 100
    to_src, to_snk = g[[inst.source], :], g[:, [inst.sink]]
    assert to_src.nnz > 0 and to_snk.nnz > 0 and g[[inst.sink], :].nnz == 0
    assert to_src.nnz + to_snk.nnz <= n_pix + 10      # mostly one t-link per pixel
    # the minimum cut recovers the synthetic object on most pixels
    res = maximum_flow(g.astype(np.int32), inst.source, inst.sink, method="dinic")
    residual = g - res.flow
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reach = breadth_first_order(residual, inst.source, return_predecessors=False)
    side = np.zeros(g.shape[0], dtype=bool)
    side[reach] = True
    _, obj = gen.flow._synthetic_image((rows, cols), gen.flow._rng(2, 0), 12, 0.15)
    assert 0.05 < obj.mean() < 0.95
    assert np.mean(side[:n_pix].reshape(rows, cols) == obj) > 0.9


@pytest.mark.parametrize("shape,connectivity,steps", [
    ((20, 30), 8, {1, 30 - 1, 30, 30 + 1}),
    ((4, 5, 6), 6, {1, 6, 30}),
    ((4, 5, 6), 26, {1, 5, 6, 7, 23, 24, 25, 29, 30, 31, 35, 36, 37})])
def test_segmentation_neighbours(shape, connectivity, steps):
    """8-connected grids and 6- or 26-connected volumes: n-links to exactly
    those neighbours (vertex-index steps), both ways, diagonals cheaper."""
    make = gen.segmentation_grid if len(shape) == 2 else gen.segmentation_volume
    inst = make(*shape, seed=1, connectivity=connectivity)
    n_pix = int(np.prod(shape))
    pix = inst.graph[:n_pix, :n_pix].tocoo()
    assert (inst.graph[:n_pix, :n_pix] != inst.graph[:n_pix, :n_pix].T).nnz == 0
    assert set(np.unique(np.abs(pix.row - pix.col))) == steps
    axis = np.abs(pix.row - pix.col) == 1
    assert pix.data[axis].max() == 100 and pix.data[~axis].min() >= 1
    with pytest.raises(ValueError, match="connectivity"):
        make(*shape, connectivity=5)


@pytest.mark.parametrize("name", ["acyclic", "genrmf", "wash", "grid", "segmentation"])
def test_flow_values_agree_between_scipy_methods(name):
    """The instances are solvable and their flows bounded by the obvious cuts."""
    for inst in _instances(FLOW[name](0))[:2]:
        g = inst.graph.astype(np.int32)
        v1 = maximum_flow(g, inst.source, inst.sink, method="dinic").flow_value
        v2 = maximum_flow(g, inst.source, inst.sink, method="edmonds_karp").flow_value
        assert v1 == v2 > 0
        assert v1 <= min(inst.graph[[inst.source], :].sum(), inst.graph[:, [inst.sink]].sum())


@pytest.mark.parametrize("bad", [lambda: gen.acyclic_dense(1), lambda: gen.genrmf(0, 3),
                                 lambda: gen.genrmf(3, 1), lambda: gen.genrmf(2, 2, c1=5, c2=4),
                                 lambda: gen.washington_rlg(2, 5),
                                 lambda: gen.segmentation_grid(1, 5)])
def test_flow_bad_arguments(bad):
    with pytest.raises(ValueError):
        bad()

"""matchflow.generators: shapes, determinism, structure, and known matching sizes."""
import doctest

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching, structural_rank

from matchflow import generators as gen

RANDOM = {
    "uniform": lambda seed: gen.uniform_random(3000, degree=4.0, seed=seed),
    "rmat": lambda seed: gen.rmat(11, seed=seed),
    "delaunay": lambda seed: gen.delaunay(2000, seed=seed),
    "rgg": lambda seed: gen.random_geometric(3000, degree=8.0, seed=seed),
    "grid": lambda seed: gen.grid_road(40, 30, p_delete=0.2, seed=seed),
}
SYMMETRIC = ("delaunay", "rgg", "grid")


def _canonical(g):
    assert isinstance(g, sp.csr_array)
    assert g.has_canonical_format          # sorted, no duplicates
    assert np.all(g.data == 1)


def test_doctests():
    failures, tried = doctest.testmod(gen, optionflags=doctest.ELLIPSIS)
    assert tried > 20 and failures == 0


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_families_are_seeded_and_canonical(name):
    a, b, c = RANDOM[name](1), RANDOM[name](1), RANDOM[name](2)
    _canonical(a)
    assert (a != b).nnz == 0
    assert a.shape == c.shape and (a != c).nnz > 0
    if name in SYMMETRIC:
        assert (a != a.T).nnz == 0


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

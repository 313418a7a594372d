"""Bipartite patterns for maximum matching: the papers' families (tests, benchmarks, demo).

Every generator takes a `seed` (where it is random) and returns a
`scipy.sparse.csr_array` whose stored entries are the edges of a bipartite
graph (rows x columns), duplicates removed, values all 1 (int8).  All of them
are vectorised numpy (no Python loop over edges) and seeded with
`numpy.random.default_rng`, so a (generator, arguments, seed) triple always
gives the same graph.

Families
--------
uniform_random          Erdos-Renyi-like, a fixed expected degree per row
power_law               Chung-Lu: power-law (Zipf) row and column degrees
rmat                    Graph500 Kronecker / R-MAT (a, b, c = 0.57, 0.19, 0.19)
delaunay                2-D Delaunay triangulation of random points (mesh-like)
random_geometric        random geometric graph in the unit square
grid_road               2-D grid with random edge deletions (road-like)
layered_jacobian        adversarial: exponential for SciPy's Hopcroft-Karp (gh-26147)
star                    adversarial: one dense row and one dense column
long_path               adversarial: one augmenting path through every vertex
complete_bipartite_blocks  dense blocks on the diagonal (many equal choices)
random_permutation      RCP: rows and columns randomly permuted (paper 004)

Memory: the random families keep O(nnz) int32/int64 arrays, generated in
chunks where the intermediate arrays would be large: about 25 bytes per
generated edge at the peak (rmat scale 21, 33.5 M edges: 0.77 GB measured;
so about 6-7 GB for scale 24, 268 M edges).  `delaunay` is the exception
in time, not memory: Qhull is single-threaded and takes minutes beyond
2^21 points (see its docstring).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# Edges generated per chunk by the chunked generators (bounds temporaries).
_CHUNK = 1 << 24


def _index_dtype(*extents: int) -> type[np.int32] | type[np.int64]:
    """int32 when every index fits (halves memory on big graphs), else int64."""
    return np.int32 if max(extents, default=0) < np.iinfo(np.int32).max else np.int64


def _pattern(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    """CSR pattern of the given coordinates, duplicates removed, values 1."""
    idx = _index_dtype(*shape)
    rows = np.asarray(rows).astype(idx, copy=False)
    cols = np.asarray(cols).astype(idx, copy=False)
    data = np.ones(rows.shape[0], dtype=np.int8)
    a = sp.coo_array((data, (rows, cols)), shape=shape).tocsr()
    del rows, cols, data
    a.sum_duplicates()          # sorts indices too
    a.data[:] = 1               # int8 sums of duplicates may have wrapped
    return a


def _symmetric(u: np.ndarray, v: np.ndarray, n: int, diagonal: bool) -> sp.csr_array:
    """Symmetric n x n pattern of undirected edges (u, v), optionally with the diagonal."""
    parts_r, parts_c = [u, v], [v, u]
    if diagonal:
        d = np.arange(n, dtype=_index_dtype(n))
        parts_r.append(d)
        parts_c.append(d)
    return _pattern(np.concatenate(parts_r), np.concatenate(parts_c), (n, n))


def uniform_random(n_rows: int, n_cols: int | None = None, degree: float = 3.0,
                   seed: int = 0) -> sp.csr_array:
    """Erdos-Renyi-like bipartite graph: about `degree` random columns per row.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape (n_cols defaults to n_rows).
    degree : float
        Edges drawn per row before duplicates are removed.
    seed : int

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.uniform_random(1000, degree=3.0, seed=1)
    >>> g.shape, 2900 < g.nnz <= 3000
    ((1000, 1000), True)
    """
    n_cols = n_rows if n_cols is None else n_cols
    rng = np.random.default_rng(seed)
    nnz = int(round(degree * n_rows))
    idx = _index_dtype(n_rows, n_cols)
    rows = rng.integers(0, n_rows, nnz, dtype=idx)
    cols = rng.integers(0, n_cols, nnz, dtype=idx)
    return _pattern(rows, cols, (n_rows, n_cols))


def power_law(n_rows: int, n_cols: int | None = None, degree: float = 4.0,
              exponent: float = 2.1, seed: int = 0) -> sp.csr_array:
    """Bipartite graph whose row and column degrees follow a power law (Zipf).

    Chung-Lu model: each of ``round(degree * n_rows)`` edges picks its row
    and its column independently, vertex k of a side with probability
    proportional to (k + 1)^(-1 / (exponent - 1)), so that the expected
    degrees have the tail P(deg >= d) ~ d^(1 - exponent); labels are then
    randomly permuted so that degree is not correlated with the index.
    A few hub rows and columns hold a large share of the edges and most
    vertices have one or none: the skew that load-balances badly on a GPU.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape (n_cols defaults to n_rows).
    degree : float
        Edges drawn per row before duplicates are removed.
    exponent : float
        The degree distribution's exponent, > 1 (2.1: a web-like skew).
    seed : int

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.power_law(10_000, degree=4.0, seed=1)
    >>> g.shape, g.nnz <= 40_000, int(g.sum(axis=1).max()) > 100
    ((10000, 10000), True, True)
    """
    if exponent <= 1:
        raise ValueError(f"exponent must be > 1; got {exponent}")
    n_cols = n_rows if n_cols is None else n_cols
    rng = np.random.default_rng(seed)
    nnz = int(round(degree * n_rows))
    idx = _index_dtype(n_rows, n_cols)

    def endpoints(n: int) -> np.ndarray:
        weight = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
        cdf = np.cumsum(weight)
        picks = np.searchsorted(cdf, rng.random(nnz) * cdf[-1], side="right")
        return rng.permutation(n).astype(idx)[np.minimum(picks, n - 1)]

    rows = endpoints(n_rows)
    cols = endpoints(n_cols)
    return _pattern(rows, cols, (n_rows, n_cols))


def random_permutation(graph, seed: int = 0) -> sp.csr_array:
    """RCP: the same graph with rows and columns randomly permuted (paper 004).

    Paper 004 (Deveci et al., Euro-Par 2013) runs every matrix both as given
    and with random row and column permutations, because the original order
    often lets a greedy initial matching find (nearly) everything.

    Parameters
    ----------
    graph : scipy sparse matrix or array
    seed : int

    Returns
    -------
    scipy.sparse.csr_array
        ``graph[p][:, q]`` for random permutations p, q (pattern only).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import generators
    >>> g = generators.random_permutation(sp.eye(4, format="csr"), seed=0)
    >>> g.nnz, bool((g.sum(axis=0) == 1).all()), bool((g.sum(axis=1) == 1).all())
    (4, True, True)
    """
    rng = np.random.default_rng(seed)
    coo = sp.coo_array(graph)
    idx = _index_dtype(*graph.shape)
    p = rng.permutation(graph.shape[0]).astype(idx)
    q = rng.permutation(graph.shape[1]).astype(idx)
    return _pattern(p[coo.row], q[coo.col], graph.shape)


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19,
         c: float = 0.19, seed: int = 0, permute: bool = True) -> sp.csr_array:
    """Graph500 Kronecker (R-MAT) graph as a 2^scale x 2^scale bipartite pattern.

    Each of ``edge_factor * 2**scale`` edges picks, bit by bit from the top,
    one quadrant of the adjacency matrix with probabilities a, b, c and
    d = 1 - a - b - c (Chakrabarti, Zhan, Faloutsos, SDM 2004; Graph500
    specification, section "Kronecker generator").  As in Graph500, vertex
    labels are then randomly permuted (``permute=True``) so that degree is
    not correlated with the index.  The edge (u, v) is the entry (u, v); the
    matrix is not symmetrised (a directed graph's pattern, as the papers'
    unsymmetric matrices).  Duplicate edges are merged, so nnz is somewhat
    below ``edge_factor * 2**scale``; many vertices are isolated, so the
    maximum matching is far from perfect.

    Parameters
    ----------
    scale : int
        log2 of the number of rows (= columns).
    edge_factor : int
        Edges generated per vertex (Graph500: 16).
    a, b, c : float
        Quadrant probabilities (Graph500: 0.57, 0.19, 0.19).
    seed : int
    permute : bool
        Randomly relabel vertices (Graph500 does).

    Returns
    -------
    scipy.sparse.csr_array

    Notes
    -----
    Memory is O(nnz): the edges are generated in chunks of 2^24, with
    float32 random draws; about 25 bytes per generated edge at the peak.
    Measured on two loaded cores: scale 21 in 27 s, 0.77 GB; scale 24
    (268 M edges) then needs about 6-7 GB and a few minutes.

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.rmat(10, seed=0)
    >>> g.shape, g.nnz <= 16 * 1024
    ((1024, 1024), True)
    """
    if not 0 < scale < 31:
        raise ValueError(f"scale must be in 1..30; got {scale}")
    n = 1 << scale
    m = edge_factor * n
    rng = np.random.default_rng(seed)
    # One uniform draw per bit picks the quadrant: [0, a) -> (0, 0),
    # [a, a+b) -> (0, 1), [a+b, a+b+c) -> (1, 0), [a+b+c, 1) -> (1, 1).
    # (Same distribution as the Graph500 reference's two draws per bit.)
    t_a, t_ab, t_abc = np.float32(a), np.float32(a + b), np.float32(a + b + c)
    rows_all = np.empty(m, dtype=np.int32)
    cols_all = np.empty(m, dtype=np.int32)
    for start in range(0, m, _CHUNK):
        k = min(_CHUNK, m - start)
        r = np.zeros(k, dtype=np.int32)
        q = np.zeros(k, dtype=np.int32)
        u = np.empty(k, dtype=np.float32)
        for _ in range(scale):
            rng.random(out=u, dtype=np.float32)
            r_bit = u >= t_ab
            c_bit = (u >= t_a) != r_bit
            c_bit ^= u >= t_abc
            r <<= 1
            r |= r_bit
            q <<= 1
            q |= c_bit
        rows_all[start:start + k] = r
        cols_all[start:start + k] = q
    if permute:
        perm = rng.permutation(n).astype(np.int32)
        rows_all = perm[rows_all]
        cols_all = perm[cols_all]
    return _pattern(rows_all, cols_all, (n, n))


def _random_points(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random((n, 2))


def delaunay(n_points: int, seed: int = 0, diagonal: bool = True) -> sp.csr_array:
    """Pattern of the 2-D Delaunay triangulation of random points (mesh-like).

    The points are uniform in the unit square, as in the DIMACS10
    ``delaunay_nXX`` matrices; entry (i, j) is stored when i and j share a
    triangle edge, both (i, j) and (j, i), plus the diagonal when
    `diagonal` is true (a square, structurally symmetric pattern, like a
    finite-element matrix).  Average degree is about 6.

    Parameters
    ----------
    n_points : int
        Rows (= columns), at least 3.
    seed : int
    diagonal : bool
        Store (i, i) for every i.

    Returns
    -------
    scipy.sparse.csr_array

    Notes
    -----
    Uses `scipy.spatial.Delaunay` (Qhull), which is single-threaded:
    2^19 points took 29 s (0.46 GB) on two loaded cores, so expect about
    a minute for 2^20 and several minutes for 2^22.  The benchmark harness
    skips this family above 2^20 points by default
    (``--delaunay-max-log2``).

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.delaunay(100, seed=0)
    >>> g.shape, (g != g.T).nnz, int(g.diagonal().sum())
    ((100, 100), 0, 100)
    """
    from scipy.spatial import Delaunay

    rng = np.random.default_rng(seed)
    tri = Delaunay(_random_points(n_points, rng)).simplices
    idx = _index_dtype(n_points)
    u = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]]).astype(idx)
    v = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]]).astype(idx)
    del tri
    return _symmetric(u, v, n_points, diagonal)


def random_geometric(n_points: int, degree: float = 8.0, radius: float | None = None,
                     seed: int = 0, diagonal: bool = False) -> sp.csr_array:
    """Random geometric graph: random points in the unit square, joined within a radius.

    Parameters
    ----------
    n_points : int
        Rows (= columns).
    degree : float
        Expected average degree; sets ``radius = sqrt(degree / (pi * n))``
        (boundary effects make the actual degree a little lower).
    radius : float, optional
        Connection radius; overrides `degree`.  The DIMACS10 ``rgg_n_2_X_s0``
        matrices use ``0.55 * sqrt(log(n) / n)``.
    seed : int
    diagonal : bool
        Store (i, i) for every i (off by default: isolated points then stay
        unmatched, as in the DIMACS10 matrices).

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric pattern.

    Notes
    -----
    Uses `scipy.spatial.cKDTree.query_pairs` with ``output_type="ndarray"``;
    memory is O(nnz).  2^21 points at degree 8 took 17 s (0.37 GB) on two
    loaded cores.

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.random_geometric(2000, degree=8.0, seed=0)
    >>> g.shape, (g != g.T).nnz, 6.0 < g.nnz / 2000 < 8.5
    ((2000, 2000), 0, True)
    """
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    if radius is None:
        radius = float(np.sqrt(degree / (np.pi * n_points)))
    pairs = cKDTree(_random_points(n_points, rng)).query_pairs(radius, output_type="ndarray")
    idx = _index_dtype(n_points)
    u = pairs[:, 0].astype(idx)
    v = pairs[:, 1].astype(idx)
    del pairs
    return _symmetric(u, v, n_points, diagonal)


def grid_road(width: int, height: int | None = None, p_delete: float = 0.1, seed: int = 0,
              diagonal: bool = False) -> sp.csr_array:
    """Road-like graph: a 2-D grid (5-point stencil) with random edge deletions.

    Vertex (x, y) is row ``y * width + x``; each grid edge is deleted with
    probability `p_delete`, which leaves degree-1 vertices, dead ends and
    isolated vertices, as in road networks (DIMACS10 ``*_osm``).

    Parameters
    ----------
    width, height : int
        Grid size (height defaults to width); rows = columns = width * height.
    p_delete : float
        Probability that a grid edge is removed.
    seed : int
    diagonal : bool
        Store (i, i) for every i.

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric pattern, average degree about ``4 * (1 - p_delete)``.

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.grid_road(30, p_delete=0.0)
    >>> g.shape, g.nnz == 2 * 2 * 30 * 29, (g != g.T).nnz
    ((900, 900), True, 0)
    """
    height = width if height is None else height
    n = width * height
    rng = np.random.default_rng(seed)
    idx = _index_dtype(n)
    ids = np.arange(n, dtype=idx).reshape(height, width)
    horiz_u, horiz_v = ids[:, :-1].ravel(), ids[:, 1:].ravel()
    vert_u, vert_v = ids[:-1, :].ravel(), ids[1:, :].ravel()
    u = np.concatenate([horiz_u, vert_u])
    v = np.concatenate([horiz_v, vert_v])
    del ids, horiz_u, horiz_v, vert_u, vert_v
    keep = rng.random(u.shape[0], dtype=np.float32) >= p_delete
    return _symmetric(u[keep], v[keep], n, diagonal)


def layered_jacobian(levels: int, copies: int = 1) -> sp.csr_array:
    """Adversarial layered pattern: exponential time for SciPy's Hopcroft-Karp.

    SciPy issue gh-26147: the depth-first phase of
    `scipy.sparse.csgraph.maximum_bipartite_matching` pushes a vertex once
    for every level-respecting path that reaches it and never marks dead
    ends, so a "ladder" whose every level has two rows adjacent to both
    columns of the next level is walked 2^levels times.  The issue's own
    matrices were not available to us; this construction follows its
    mechanism (its size grows like the issue's, 3 rows per level):

    * one chain of `levels` rows ``a_k`` (diagonal entry ``(a_k, a_k)`` and
      ``(a_k, a_{k+1})``; the last reaches a column no one else has),
    * a ladder of two rows ``b_k0, b_k1`` per level (diagonal entries, and
      both adjacent to both ladder columns of the next level), which ends
      in a dead end,
    * a last row adjacent to the first chain column and the first two
      ladder columns.

    SciPy's first phase is a row-order greedy matching that takes the
    diagonal and leaves the last row free; the next depth-first search
    walks the whole ladder (2^(levels+1) pushes) before it tries the chain.
    The matrix is square, of order ``3 * levels + 1`` per copy, with a
    perfect matching (its structural rank is full).  `copies` disjoint
    copies are placed on the block diagonal to make large inputs (each copy
    costs SciPy 2^levels again).  Around levels = 24 one copy takes SciPy
    seconds, and the time doubles per level.

    Parameters
    ----------
    levels : int
        Depth of the ladder (>= 1).
    copies : int
        Number of disjoint copies (block diagonal).

    Returns
    -------
    scipy.sparse.csr_array
        Order ``copies * (3 * levels + 1)``, ``copies * (8 * levels - 1)``
        entries.

    Examples
    --------
    >>> from matchflow import generators
    >>> from scipy.sparse.csgraph import structural_rank
    >>> g = generators.layered_jacobian(4)
    >>> g.shape, g.nnz, int(structural_rank(g))
    ((13, 13), 31, 13)
    >>> g.toarray()[-1, :4].tolist()   # the last row: chain head, two ladder heads
    [1, 1, 1, 0]
    """
    if levels < 1 or copies < 1:
        raise ValueError("levels and copies must be at least 1")
    L = levels
    order = 3 * L + 1
    k = np.arange(L)
    # Level k (0-based) uses rows/columns 3k (chain), 3k+1, 3k+2 (ladder);
    # order - 1 is the free row (rows) and the chain's private column (cols).
    diag = np.arange(3 * L)
    chain_next_r, chain_next_c = 3 * k, np.where(k < L - 1, 3 * k + 3, order - 1)
    lk = k[:-1]
    ladder_r = np.repeat(np.stack([3 * lk + 1, 3 * lk + 2], axis=1).ravel(), 2)
    ladder_c = np.tile(np.stack([3 * lk + 4, 3 * lk + 5], axis=1), (1, 2)).ravel()
    head_r, head_c = np.full(3, order - 1), np.array([0, 1, 2])
    r = np.concatenate([diag, chain_next_r, ladder_r, head_r])
    c = np.concatenate([diag, chain_next_c, ladder_c, head_c])
    offsets = (np.arange(copies, dtype=np.int64) * order)[:, None]
    idx = _index_dtype(copies * order)
    rows = (offsets + r[None, :]).ravel().astype(idx)
    cols = (offsets + c[None, :]).ravel().astype(idx)
    return _pattern(rows, cols, (copies * order, copies * order))


def star(n: int, diagonal: bool = False) -> sp.csr_array:
    """Adversarial star: row 0 and column 0 adjacent to everything.

    Without the diagonal the maximum matching has size 2 (for n >= 2):
    every edge touches row 0 or column 0.  It stresses load balance (one
    vertex of degree n) and vertices that all compete for the same mate.
    With the diagonal it is the "arrow" matrix, with a perfect matching.

    Parameters
    ----------
    n : int
        Rows (= columns).
    diagonal : bool
        Store (i, i) for every i.

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> from matchflow import generators
    >>> from scipy.sparse.csgraph import structural_rank
    >>> [int(structural_rank(generators.star(50, diagonal=d))) for d in (False, True)]
    [2, 50]
    """
    idx = _index_dtype(n)
    i = np.arange(n, dtype=idx)
    zero = np.zeros(n, dtype=idx)
    parts_r, parts_c = [zero, i], [i, zero]
    if diagonal:
        parts_r.append(i)
        parts_c.append(i)
    return _pattern(np.concatenate(parts_r), np.concatenate(parts_c), (n, n))


def long_path(n: int) -> sp.csr_array:
    """Adversarial path: a row-order greedy matching leaves one augmenting path of length 2n-1.

    Row i (< n-1) is adjacent to columns i and i+1, row n-1 to column 0
    only: the graph is a single path through all 2n vertices, with a unique
    perfect matching (row i - column i+1, row n-1 - column 0).  A greedy
    matching in row order takes (i, i) for i < n-1 and leaves row n-1 free;
    the only augmenting path then runs through every vertex.  Algorithms
    that grow one path per BFS level, or need many global relabels, take
    O(n) rounds.

    Parameters
    ----------
    n : int
        Rows (= columns), at least 2.

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.long_path(4)
    >>> g.toarray().tolist()
    [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 0]]
    """
    if n < 2:
        raise ValueError(f"n must be at least 2; got {n}")
    idx = _index_dtype(n)
    i = np.arange(n - 1, dtype=idx)
    rows = np.concatenate([i, i, np.array([n - 1], dtype=idx)])
    cols = np.concatenate([i, i + 1, np.array([0], dtype=idx)])
    return _pattern(rows, cols, (n, n))


def complete_bipartite_blocks(n_blocks: int, block_rows: int,
                              block_cols: int | None = None) -> sp.csr_array:
    """Block-diagonal pattern of dense (complete bipartite) blocks.

    Every row of a block may take any column of it: many equal choices and
    many conflicts for algorithms that match in parallel.  With
    ``block_cols < block_rows`` the matching is deficient (size
    ``n_blocks * min(block_rows, block_cols)``).

    Parameters
    ----------
    n_blocks : int
    block_rows : int
    block_cols : int, optional
        Defaults to block_rows.

    Returns
    -------
    scipy.sparse.csr_array
        Shape ``(n_blocks * block_rows, n_blocks * block_cols)``, with
        ``n_blocks * block_rows * block_cols`` entries.

    Examples
    --------
    >>> from matchflow import generators
    >>> from scipy.sparse.csgraph import structural_rank
    >>> g = generators.complete_bipartite_blocks(3, 4, 2)
    >>> g.shape, g.nnz, int(structural_rank(g))
    ((12, 6), 24, 6)
    """
    block_cols = block_rows if block_cols is None else block_cols
    shape = (n_blocks * block_rows, n_blocks * block_cols)
    idx = _index_dtype(*shape)
    rr, cc = np.meshgrid(np.arange(block_rows, dtype=idx), np.arange(block_cols, dtype=idx),
                         indexing="ij")
    blk = np.arange(n_blocks, dtype=idx)[:, None]
    rows = (blk * block_rows + rr.ravel()[None, :]).ravel()  # type: ignore[operator]
    cols = (blk * block_cols + cc.ravel()[None, :]).ravel()  # type: ignore[operator]
    return _pattern(rows, cols, shape)

"""Maximum-flow instances: paper 002's inputs, undirected networks, segmentation grids.

Paper 002 (ECL-MaxFlow, Section V-C) evaluates on two sets, both rebuilt here:

* Table I, three DIMACS families (first DIMACS Implementation Challenge),
  source and sink "the first and last vertex by index":
  `acyclic_dense`, `genrmf` (long a:b = 1:8, wide 1:1) and
  `washington_rlg` (Washington random level graphs, long r:c = 1:2, wide 1:1).
  Vertex and arc counts match Table I exactly (see each docstring).
* Table II, undirected graphs as flow networks: self-loops and duplicates
  removed, symmetrised, restricted to the largest connected component,
  capacities random in [100, 10000] (one per undirected edge, on both of its
  arcs), and 5 source/sink pairs picked by degree (`st_pairs_by_degree`).
  `undirected_network` does this to any pattern; `grid_flow`, `rmat_flow`,
  `delaunay_flow` and `road_flow` apply it to the families of
  `matchflow.generators.matching` (2d-2e20.sym, rmat22.sym, delaunay_n24,
  USA-road-d stand-ins).

`segmentation_grid` adds the classic computer-vision case (Boykov and Jolly,
ICCV 2001): a 4-connected pixel grid with a source (object) and a sink
(background) terminal.

Every generator returns a `FlowInstance` (or a list of them, one per s-t
pair, sharing one graph): an ``int64`` capacity matrix as a
``scipy.sparse.csr_array`` with ``int32`` indices (while the arc count fits),
canonical (sorted, no duplicate arcs), no self-loops, no zero capacities.
All of it is vectorised NumPy seeded with ``numpy.random.default_rng``.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import matching

# Paper 002, Section V-C: capacities of unweighted undirected graphs.
UNDIRECTED_CAPACITY = (100, 10_000)


@dataclass(frozen=True)
class FlowInstance:
    """A maximum-flow problem: capacities, source, sink and a name.

    Attributes
    ----------
    graph : scipy.sparse.csr_array
        n x n, int64 capacities; entry (u, v) is the arc u -> v.
    source, sink : int
    name : str
        Family and size, e.g. ``genrmf-long_a32_b256``.

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.acyclic_dense(5, seed=0)
    >>> inst.name, inst.source, inst.sink, inst.n_vertices, inst.n_arcs
    ('ac_n5', 0, 4, 5, 10)
    """

    graph: sp.csr_array
    source: int
    sink: int
    name: str

    @property
    def n_vertices(self) -> int:
        return int(self.graph.shape[0])

    @property
    def n_arcs(self) -> int:
        return int(self.graph.nnz)


def _network(tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, n: int) -> sp.csr_array:
    """Canonical int64 CSR of the arcs (tails -> heads); parallel arcs merged, zeros dropped."""
    g = sp.coo_array((caps.astype(np.int64, copy=False), (tails, heads)), shape=(n, n)).tocsr()
    del tails, heads, caps
    g.sum_duplicates()
    g.eliminate_zeros()
    return _narrow(g)


def _narrow(g: sp.csr_array) -> sp.csr_array:
    """int32 indices and offsets where they fit (what SciPy's maximum_flow reads)."""
    if g.nnz < np.iinfo(np.int32).max and g.indices.dtype != np.int32:
        g = sp.csr_array((g.data, g.indices.astype(np.int32), g.indptr.astype(np.int32)),
                         shape=g.shape)
    return g


def _rng(seed: int, stream: int) -> np.random.Generator:
    """Independent streams from one seed (pattern, capacities, pairs)."""
    return np.random.default_rng([seed, stream])


# ----------------------------------------------------------------------------
# Paper 002, Table I: DIMACS families
# ----------------------------------------------------------------------------

def acyclic_dense(n: int, seed: int = 0, cap_max: int = 10_000) -> FlowInstance:
    """Complete DAG: arc i -> j for every i < j, capacity random in [1, cap_max].

    Paper 002, Table I ``ac_nN``: N vertices, N (N - 1) / 2 arcs; source 0,
    sink N - 1 (first and last by index).

    Parameters
    ----------
    n : int
        Vertices (>= 2).
    seed : int
    cap_max : int
        Capacities are uniform integers in [1, cap_max] (paper: 10000).

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> g = generators.acyclic_dense(2000, seed=0).graph
    >>> g.nnz, int(g.data.min()) >= 1, int(g.data.max()) <= 10000
    (1999000, True, True)
    """
    if n < 2:
        raise ValueError(f"n must be at least 2; got {n}")
    counts = np.arange(n - 1, -1, -1, dtype=np.int64)       # row i has n - 1 - i arcs
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    m = int(ptr[-1])
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    heads = np.arange(m, dtype=np.int64) - ptr[rows] + rows + 1   # i+1, ..., n-1 per row
    del rows
    caps = _rng(seed, 0).integers(1, cap_max + 1, m, dtype=np.int64)
    g = _narrow(sp.csr_array((caps, heads, ptr), shape=(n, n)))
    return FlowInstance(g, 0, n - 1, f"ac_n{n}")


def genrmf(a: int, b: int, c1: int = 100, c2: int = 10_000, seed: int = 0) -> FlowInstance:
    """GENRMF (Goldfarb and Grigoriadis): b frames of a x a grids, linked by permutations.

    As paper 002 describes it (Section V-C): inside a frame every vertex has
    arcs to and from its 4 grid neighbours, capacity ``c2 * a * a``; every
    vertex of frame k has one arc to the vertex of frame k + 1 given by a
    random permutation (one per frame pair), capacity uniform in [c1, c2].
    The source is corner (0, 0) of the first frame (vertex 0), the sink the
    opposite corner of the last frame (vertex a*a*b - 1).  Vertex
    ``k*a*a + y*a + x`` is (x, y) in frame k.

    Sizes: ``a*a*b`` vertices, ``4*a*(a-1)*b + a*a*(b-1)`` arcs (Table I:
    a = 32, b = 256 gives 262,144 and 1,276,928).

    Parameters
    ----------
    a : int
        Frame side (>= 1).
    b : int
        Frames (>= 2).
    c1, c2 : int
        Range of the between-frame capacities; in-frame capacity is c2 a^2.
    seed : int

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.genrmf(32, 256, seed=0)
    >>> inst.n_vertices, inst.n_arcs, inst.source, inst.sink
    (262144, 1276928, 0, 262143)
    """
    if a < 1 or b < 2:
        raise ValueError(f"need a >= 1 and b >= 2; got a={a}, b={b}")
    if not 1 <= c1 <= c2:
        raise ValueError(f"need 1 <= c1 <= c2; got c1={c1}, c2={c2}")
    f = a * a
    n = f * b
    ids = np.arange(f, dtype=np.int64).reshape(a, a)            # [y, x] within a frame
    hu, hv = ids[:, :-1].ravel(), ids[:, 1:].ravel()
    vu, vv = ids[:-1, :].ravel(), ids[1:, :].ravel()
    u = np.concatenate([hu, hv, vu, vv])                         # both directions
    v = np.concatenate([hv, hu, vv, vu])
    base = (np.arange(b, dtype=np.int64) * f)[:, None]
    in_u, in_v = (base + u).ravel(), (base + v).ravel()
    rng = _rng(seed, 0)
    perms = rng.permuted(np.tile(np.arange(f, dtype=np.int64), (b - 1, 1)), axis=1)
    cross_u = np.arange(f * (b - 1), dtype=np.int64)
    cross_v = (base[1:] + perms).ravel()
    del perms
    cross_caps = rng.integers(c1, c2 + 1, cross_u.shape[0], dtype=np.int64)
    tails = np.concatenate([in_u, cross_u])
    heads = np.concatenate([in_v, cross_v])
    caps = np.concatenate([np.full(in_u.shape[0], c2 * f, dtype=np.int64), cross_caps])
    del in_u, in_v, cross_u, cross_v, cross_caps
    return FlowInstance(_network(tails, heads, caps, n), 0, n - 1, f"genrmf_a{a}_b{b}")


def genrmf_long(a: int, seed: int = 0, c1: int = 100, c2: int = 10_000) -> FlowInstance:
    """GENRMF-long (paper 002): a:b = 1:8, many small frames; ``genrmf(a, 8 * a)``.

    Examples
    --------
    >>> from matchflow import generators
    >>> generators.genrmf_long(4, seed=0).name
    'genrmf-long_a4_b32'
    """
    inst = genrmf(a, 8 * a, c1, c2, seed)
    return dataclasses.replace(inst, name=f"genrmf-long_a{a}_b{8 * a}")


def genrmf_wide(a: int, seed: int = 0, c1: int = 100, c2: int = 10_000) -> FlowInstance:
    """GENRMF-wide (paper 002): a:b = 1:1; ``genrmf(a, a)``.

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.genrmf_wide(64, seed=0)   # Table I: 262,144 and 1,290,240
    >>> inst.name, inst.n_vertices, inst.n_arcs
    ('genrmf-wide_a64_b64', 262144, 1290240)
    """
    inst = genrmf(a, a, c1, c2, seed)
    return dataclasses.replace(inst, name=f"genrmf-wide_a{a}_b{a}")


def _three_distinct(count: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """count x 3 distinct integers in [0, width) per row, uniform over ordered triples.

    Draw x0 in [0, w), x1 in [0, w-1), x2 in [0, w-2) and skip the values
    already taken, smallest first (the usual rank-to-value shift).
    """
    x0 = rng.integers(0, width, count, dtype=np.int64)
    x1 = rng.integers(0, width - 1, count, dtype=np.int64)
    x1 += x1 >= x0
    x2 = rng.integers(0, width - 2, count, dtype=np.int64)
    lo, hi = np.minimum(x0, x1), np.maximum(x0, x1)
    x2 += x2 >= lo
    x2 += x2 >= hi
    return np.stack([x0, x1, x2], axis=1)


def washington_rlg(rows: int, cols: int, c1: int = 10_000, seed: int = 0) -> FlowInstance:
    """Washington random level graph: `cols` levels of `rows` vertices each.

    Paper 002 (Section V-C): every vertex has arcs to 3 random (distinct)
    vertices of the next level, capacity uniform in [1, c1]; the source has
    an arc to every vertex of the first level and every vertex of the last
    level one to the sink, capacity ``3 * c1``.  Vertex 0 is the source,
    ``1 + l*rows + p`` is position p of level l, ``rows*cols + 1`` the sink.

    Sizes: ``rows*cols + 2`` vertices, ``3*rows*(cols-1) + 2*rows`` arcs
    (Table I, washlong_r512_c1024: 524,290 and 1,572,352).

    Parameters
    ----------
    rows : int
        Vertices per level (>= 3).
    cols : int
        Levels (>= 1).
    c1 : int
    seed : int

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.washington_rlg(512, 1024, seed=0)
    >>> inst.n_vertices, inst.n_arcs, inst.source, inst.sink
    (524290, 1572352, 0, 524289)
    """
    if rows < 3 or cols < 1:
        raise ValueError(f"need rows >= 3 and cols >= 1; got rows={rows}, cols={cols}")
    n = rows * cols + 2
    sink = n - 1
    level0 = np.arange(1, rows + 1, dtype=np.int64)
    rng = _rng(seed, 0)
    inner = rows * (cols - 1)                                    # vertices with a next level
    tails = np.repeat(np.arange(1, inner + 1, dtype=np.int64), 3)
    level_of_head = (tails - 1) // rows + 1
    heads = (1 + level_of_head * rows + _three_distinct(inner, rows, rng).ravel())
    del level_of_head
    caps = rng.integers(1, c1 + 1, heads.shape[0], dtype=np.int64)
    last = level0 + (cols - 1) * rows
    t = np.concatenate([np.zeros(rows, dtype=np.int64), tails, last])
    h = np.concatenate([level0, heads, np.full(rows, sink, dtype=np.int64)])
    c = np.concatenate([np.full(rows, 3 * c1, dtype=np.int64), caps,
                        np.full(rows, 3 * c1, dtype=np.int64)])
    del tails, heads, caps
    return FlowInstance(_network(t, h, c, n), 0, sink, f"wash_r{rows}_c{cols}")


def washington_rlg_long(rows: int, seed: int = 0, c1: int = 10_000) -> FlowInstance:
    """Washington-RLG-long (paper 002): r:c = 1:2; ``washington_rlg(rows, 2 * rows)``.

    Examples
    --------
    >>> from matchflow import generators
    >>> generators.washington_rlg_long(8, seed=0).name
    'washlong_r8_c16'
    """
    inst = washington_rlg(rows, 2 * rows, c1, seed)
    return dataclasses.replace(inst, name=f"washlong_r{rows}_c{2 * rows}")


def washington_rlg_wide(rows: int, seed: int = 0, c1: int = 10_000) -> FlowInstance:
    """Washington-RLG-wide (paper 002): r:c = 1:1; ``washington_rlg(rows, rows)``.

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.washington_rlg_wide(1024, seed=0)   # Table I: 1,048,578 / 3,144,704
    >>> inst.name, inst.n_vertices, inst.n_arcs
    ('washwide_r1024_c1024', 1048578, 3144704)
    """
    inst = washington_rlg(rows, rows, c1, seed)
    return dataclasses.replace(inst, name=f"washwide_r{rows}_c{rows}")


# ----------------------------------------------------------------------------
# Paper 002, Table II: undirected graphs as flow networks
# ----------------------------------------------------------------------------

def undirected_network(pattern, low: int = UNDIRECTED_CAPACITY[0],
                       high: int = UNDIRECTED_CAPACITY[1], seed: int = 0,
                       largest_component: bool = True) -> sp.csr_array:
    """An undirected graph as a flow network, prepared as paper 002 prepares Table II.

    Self-loops and duplicates are removed, missing back edges added, and
    (by default) only the largest connected component kept, relabelled
    0..n'-1 in the original order ("those vertices cannot contribute to
    the flow").  Each undirected edge gets one capacity, uniform in
    [low, high], on both of its arcs.

    Parameters
    ----------
    pattern : scipy sparse matrix or array, square
        Its stored entries are the edges (values ignored).
    low, high : int
        Capacity range (paper 002: 100 and 10000).
    seed : int
    largest_component : bool

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric, int64 capacities, no diagonal.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import generators
    >>> path = sp.csr_array(([1, 1, 1], ([0, 1, 3], [1, 2, 4])), shape=(5, 5))
    >>> g = generators.undirected_network(path, seed=0)   # keeps 0-1-2, drops 3-4
    >>> g.shape, g.nnz, bool((g != g.T).nnz == 0)
    ((3, 3), 4, True)
    """
    from scipy.sparse.csgraph import connected_components

    a = sp.csr_array(pattern, copy=False)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"pattern must be square; got shape {a.shape}")
    ones = sp.csr_array((np.ones(a.nnz, dtype=np.int8), a.indices, a.indptr), shape=a.shape)
    sym = (ones + ones.T).tocsr()
    del ones
    upper = sp.triu(sym, k=1, format="coo")                      # each undirected edge once
    u, v = upper.row.astype(np.int64), upper.col.astype(np.int64)
    del upper
    n = a.shape[0]
    if largest_component and n:
        _, labels = connected_components(sym, directed=False)
        keep = labels == np.bincount(labels).argmax()
        new_id = np.cumsum(keep, dtype=np.int64) - 1
        edge_kept = keep[u]                                      # both ends share a component
        u, v, n = new_id[u[edge_kept]], new_id[v[edge_kept]], int(keep.sum())
        del labels, keep, new_id, edge_kept
    del sym
    caps = _rng(seed, 1).integers(low, high + 1, u.shape[0], dtype=np.int64)
    return _network(np.concatenate([u, v]), np.concatenate([v, u]),
                    np.concatenate([caps, caps]), n)


def st_pairs_by_degree(graph, k: int = 5, seed: int = 0,
                       name: str | None = None) -> list[FlowInstance]:
    """k source/sink pairs, as paper 002 picks them for its undirected graphs.

    "The first pair is the highest and second-highest degree vertices, the
    second pair is the third-highest and fourth-highest degree vertices,
    and so on" (Section V-C; ties broken by the lower index).  On a
    uniform-degree graph (their 2d-2e20.sym grid) the pairs are random:
    here, whenever the 2k highest degrees are all equal, the 2k vertices
    are drawn at random (seeded) without replacement.  Degree is the
    number of stored arcs out of a vertex (its neighbours, on a symmetric
    network).

    Parameters
    ----------
    graph : scipy sparse matrix or array, or FlowInstance
    k : int
        Pairs (needs at least 2k vertices).
    seed : int
    name : str, optional
        Base of the instances' names (default: the instance's name, or "graph").

    Returns
    -------
    list of FlowInstance
        Sharing one graph; named ``{name}_s{source}_t{sink}``.

    Examples
    --------
    >>> from matchflow import generators
    >>> star = generators.undirected_network(generators.star(50), seed=0)
    >>> [(p.source, p.sink) for p in generators.st_pairs_by_degree(star, k=2)]
    [(0, 1), (2, 3)]
    """
    if isinstance(graph, FlowInstance):
        name = graph.name if name is None else name
        graph = graph.graph
    g = graph if isinstance(graph, sp.csr_array) else sp.csr_array(graph)
    name = "graph" if name is None else name
    n = g.shape[0]
    if k < 1 or 2 * k > n:
        raise ValueError(f"need 1 <= k <= n / 2 = {n // 2}; got k={k}")
    degree = np.diff(g.indptr)
    order = np.argsort(-degree, kind="stable")[:2 * k]
    if degree[order[0]] == degree[order[-1]]:                    # uniform degree: random pairs
        order = _rng(seed, 2).choice(n, 2 * k, replace=False)
    return [FlowInstance(g, int(s), int(t), f"{name}_s{s}_t{t}")
            for s, t in zip(order[0::2], order[1::2])]


def undirected_flow(pattern, name: str, k: int = 5, seed: int = 0,
                    low: int = UNDIRECTED_CAPACITY[0], high: int = UNDIRECTED_CAPACITY[1],
                    largest_component: bool = True) -> list[FlowInstance]:
    """`undirected_network` then `st_pairs_by_degree`: k instances on one graph.

    Examples
    --------
    >>> from matchflow import generators
    >>> pairs = generators.undirected_flow(generators.grid_road(10, p_delete=0.0), "grid",
    ...                                      k=2, seed=0)
    >>> len(pairs), pairs[0].graph is pairs[1].graph, pairs[0].n_arcs
    (2, True, 360)
    """
    g = undirected_network(pattern, low, high, seed, largest_component)
    return st_pairs_by_degree(g, k, seed, name)


def grid_flow(rows: int, cols: int, k: int = 5, seed: int = 0,
              low: int = UNDIRECTED_CAPACITY[0],
              high: int = UNDIRECTED_CAPACITY[1]) -> list[FlowInstance]:
    """2-D 4-connected grid (paper 002's 2d-2e20.sym), capacities in [low, high].

    ``rows * cols`` vertices, ``4*rows*cols - 2*(rows + cols)`` arcs; the
    degree is uniform, so the k pairs are random (as in the paper).

    Examples
    --------
    >>> from matchflow import generators
    >>> pairs = generators.grid_flow(1024, 1024, seed=0)   # Table II: 4,190,208 arcs
    >>> len(pairs), pairs[0].n_vertices, pairs[0].n_arcs, pairs[0].name[:13]
    (5, 1048576, 4190208, 'grid_1024x102')
    """
    pattern = matching.grid_road(cols, rows, p_delete=0.0)
    return undirected_flow(pattern, f"grid_{rows}x{cols}", k, seed, low, high)


def rmat_flow(scale: int, edge_factor: int = 16, k: int = 5, seed: int = 0) -> list[FlowInstance]:
    """R-MAT (Graph500) made undirected (paper 002's rmat22.sym), largest component.

    Examples
    --------
    >>> from matchflow import generators
    >>> pairs = generators.rmat_flow(10, seed=0)
    >>> len(pairs), pairs[0].n_vertices < 1024, pairs[0].name.startswith('rmat10_s')
    (5, True, True)
    """
    pattern = matching.rmat(scale, edge_factor=edge_factor, seed=seed)
    return undirected_flow(pattern, f"rmat{scale}", k, seed)


def delaunay_flow(n_points: int, k: int = 5, seed: int = 0) -> list[FlowInstance]:
    """Delaunay triangulation of random points (paper 002's delaunay_nXX).

    Slow beyond 2^21 points (Qhull; see `matchflow.generators.delaunay`).

    Examples
    --------
    >>> from matchflow import generators
    >>> pairs = generators.delaunay_flow(1000, k=1, seed=0)
    >>> pairs[0].n_vertices, 5.5 < pairs[0].n_arcs / 1000 < 6.0
    (1000, True)
    """
    pattern = matching.delaunay(n_points, seed=seed, diagonal=False)
    return undirected_flow(pattern, f"delaunay_n{n_points}", k, seed)


def road_flow(width: int, height: int | None = None, p_delete: float = 0.1, k: int = 5,
              seed: int = 0) -> list[FlowInstance]:
    """Road-like graph (a stand-in for paper 002's USA-road-d): a grid with edges deleted.

    `matchflow.generators.grid_road`, then the largest component; average
    degree just under ``4 * (1 - p_delete)`` (USA-road-d: about 2.4, so
    ``p_delete`` near 0.4 is closer to it).

    Examples
    --------
    >>> from matchflow import generators
    >>> pairs = generators.road_flow(100, p_delete=0.3, k=2, seed=0)
    >>> len(pairs), pairs[0].n_vertices < 100 * 100
    (2, True)
    """
    height = width if height is None else height
    pattern = matching.grid_road(width, height, p_delete=p_delete, seed=seed)
    return undirected_flow(pattern, f"road_{width}x{height}_p{p_delete:g}", k, seed)


# ----------------------------------------------------------------------------
# Maximum bipartite matching as a flow
# ----------------------------------------------------------------------------

def matching_flow(pattern) -> FlowInstance:
    """A bipartite pattern's maximum matching as a unit-capacity flow network.

    Row i is vertex i, column j is vertex ``n_rows + j``; the source has an
    arc to every row, every stored entry (i, j) is an arc row -> column, and
    every column has an arc to the sink, all of capacity 1.  The maximum
    flow's value is the maximum matching's size: the network a general flow
    code solves when it is used for matching (G-PR, paper 000, is
    push-relabel specialised to it).

    Parameters
    ----------
    pattern : sparse matrix
        The bipartite graph, rows x columns (its values are ignored).

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.matching_flow(generators.uniform_random(100, degree=3, seed=1))
    >>> inst.n_vertices, inst.source, inst.sink, inst.name
    (202, 200, 201, 'matching_100x100')
    """
    coo = sp.coo_array(pattern)
    m, n = coo.shape
    source, sink = m + n, m + n + 1
    rows = np.arange(m, dtype=np.int64)
    cols = m + np.arange(n, dtype=np.int64)
    tails = np.concatenate([np.full(m, source, dtype=np.int64), coo.row.astype(np.int64), cols])
    heads = np.concatenate([rows, m + coo.col.astype(np.int64), np.full(n, sink, dtype=np.int64)])
    caps = np.ones(tails.size, dtype=np.int64)
    g = _network(tails, heads, caps, m + n + 2)
    g.data = np.minimum(g.data, 1)  # duplicate entries merged: still one unit
    return FlowInstance(g, source, sink, f"matching_{m}x{n}")


# ----------------------------------------------------------------------------
# Image segmentation (Boykov and Jolly, ICCV 2001)
# ----------------------------------------------------------------------------

def _synthetic_image(shape: tuple[int, ...], rng: np.random.Generator,
                     blobs: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Smooth blobs (the object, intensity 0.7) on a background (0.3), plus
    noise: an image (2 axes) or a volume (3)."""
    axes = [np.arange(k, dtype=np.float32).reshape([-1 if b == a else 1 for b in range(len(shape))])
            for a, k in enumerate(shape)]
    field = np.zeros(shape, dtype=np.float32)
    centres = rng.random((blobs, len(shape))) * list(shape)
    radii = min(shape) * (0.04 + 0.12 * rng.random(blobs))
    for centre, r in zip(centres, radii):                       # a few blobs, not per pixel
        d2 = sum((ax - np.float32(c)) ** 2 for ax, c in zip(axes, centre))
        field += np.exp(-d2 / np.float32(2 * r * r))
    obj = field > 0.5
    img = np.where(obj, np.float32(0.7), np.float32(0.3))
    img += rng.normal(0.0, noise, shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0), obj


# Neighbour offsets, each pair of neighbours once (the n-links go both ways).
_NEIGHBOURS: dict[tuple[int, int], list[tuple[int, ...]]] = {
    (2, 4): [(0, 1), (1, 0)],
    (2, 8): [(0, 1), (1, 0), (1, 1), (1, -1)],
    (3, 6): [(0, 0, 1), (0, 1, 0), (1, 0, 0)],
    (3, 26): [o for o in itertools.product((-1, 0, 1), repeat=3) if o > (0, 0, 0)],
}


def _shifted(ids: np.ndarray, offset: tuple[int, ...]) -> tuple[tuple, tuple]:
    """Index tuples (p, q) selecting every pixel p whose neighbour q = p + offset exists."""
    p = tuple(slice(max(0, -o), k - max(0, o)) for o, k in zip(offset, ids.shape))
    q = tuple(slice(max(0, o), k - max(0, -o)) for o, k in zip(offset, ids.shape))
    return p, q


def _segmentation(img: np.ndarray, connectivity: int, noise: float, smoothness: int,
                  data_scale: int, name: str) -> FlowInstance:
    """Boykov and Jolly's network over the pixels (voxels) of `img` (see segmentation_grid)."""
    n_pix = img.size
    source, sink = n_pix, n_pix + 1
    ids = np.arange(n_pix, dtype=np.int64).reshape(img.shape)
    offsets = _NEIGHBOURS[(img.ndim, connectivity)]
    diffs = []
    for o in offsets:
        p, q = _shifted(ids, o)
        diffs.append(img[q] - img[p])
    # sigma^2 from the axis neighbours' differences alone, whatever the connectivity
    axis = [d.ravel() ** 2 for o, d in zip(offsets, diffs) if sum(map(abs, o)) == 1]
    sigma2 = max(float(np.concatenate(axis).mean()), 1e-12)
    w = [np.rint(smoothness * np.exp(-(d.ravel().astype(np.float64) ** 2) / (2 * sigma2))
                 / np.sqrt(sum(k * k for k in o))) for o, d in zip(offsets, diffs)]
    pu = np.concatenate([ids[_shifted(ids, o)[0]].ravel() for o in offsets])
    pv = np.concatenate([ids[_shifted(ids, o)[1]].ravel() for o in offsets])
    wn = np.concatenate(w).astype(np.int64)
    flat = img.ravel().astype(np.float64)
    cost_obj = (flat - 0.7) ** 2 / (2 * noise * noise)          # -log Pr(I | object) + const
    cost_bkg = (flat - 0.3) ** 2 / (2 * noise * noise)
    base = np.minimum(cost_obj, cost_bkg)
    to_src = np.rint(data_scale * (cost_bkg - base)).astype(np.int64)   # arc s -> p
    to_snk = np.rint(data_scale * (cost_obj - base)).astype(np.int64)   # arc p -> t
    pix = ids.ravel()
    tails = np.concatenate([pu, pv, np.full(n_pix, source, dtype=np.int64), pix])
    heads = np.concatenate([pv, pu, pix, np.full(n_pix, sink, dtype=np.int64)])
    caps = np.concatenate([wn, wn, to_src, to_snk])
    return FlowInstance(_network(tails, heads, caps, n_pix + 2), source, sink, name)


def segmentation_grid(rows: int, cols: int, seed: int = 0, blobs: int = 12,
                      noise: float = 0.15, smoothness: int = 100,
                      data_scale: int = 100, connectivity: int = 4) -> FlowInstance:
    """Binary image segmentation as max flow: a pixel grid with two terminals.

    The image is synthetic: smooth blobs (intensity 0.7) on a background
    (0.3), plus Gaussian noise.  Following Boykov and Jolly (ICCV 2001):

    * n-links, both directions between neighbours p, q (4-connected, or
      8-connected with the diagonals):
      ``smoothness * exp(-(I_p - I_q)^2 / (2 sigma^2)) / dist(p, q)``,
      sigma^2 the mean squared difference of 4-neighbours (cheap to cut
      across an edge);
    * t-links: ``data_scale * -log Pr(I_p | background)`` from the source
      (object terminal) and ``data_scale * -log Pr(I_p | object)`` to the
      sink, with Gaussian models N(0.3, noise) and N(0.7, noise); the
      smaller of the two is subtracted from both (the cut changes by a
      constant), so most pixels keep one t-link.

    All capacities are rounded to integers; zero arcs are dropped.
    Pixel (y, x) is vertex ``y * cols + x``; the source is ``rows * cols``,
    the sink ``rows * cols + 1``.

    Parameters
    ----------
    rows, cols : int
        Image size (>= 2 each).
    seed : int
    blobs : int
        Gaussian blobs summed to draw the object.
    noise : float
        Standard deviation of the pixel noise (and of the likelihood models).
    smoothness, data_scale : int
        Weights of the n-links and of the t-links.
    connectivity : {4, 8}
        Neighbours of a pixel.

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.segmentation_grid(64, 48, seed=0)
    >>> inst.n_vertices, inst.source, inst.sink, inst.name
    (3074, 3072, 3073, 'segmentation_64x48')
    >>> generators.segmentation_grid(64, 48, connectivity=8).name
    'segmentation8_64x48'
    """
    if rows < 2 or cols < 2:
        raise ValueError(f"need rows, cols >= 2; got {rows} x {cols}")
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity must be 4 or 8; got {connectivity}")
    img, _ = _synthetic_image((rows, cols), _rng(seed, 0), blobs, noise)
    name = f"segmentation{'' if connectivity == 4 else connectivity}_{rows}x{cols}"
    return _segmentation(img, connectivity, noise, smoothness, data_scale, name)


def segmentation_volume(depth: int, rows: int, cols: int, seed: int = 0, blobs: int = 12,
                        noise: float = 0.15, smoothness: int = 100, data_scale: int = 100,
                        connectivity: int = 6) -> FlowInstance:
    """Binary volume segmentation as max flow: segmentation_grid's network in 3-D.

    A synthetic volume (blobs in a noisy background, as segmentation_grid's
    image), its voxels 6-connected (faces) or 26-connected (faces, edges
    and corners, n-links divided by the distance), the same n-links and
    t-links.  Voxel (z, y, x) is vertex ``(z * rows + y) * cols + x``; the
    source and the sink follow the voxels.

    Parameters
    ----------
    depth, rows, cols : int
        Volume size (>= 2 each).
    seed, blobs, noise, smoothness, data_scale
        As segmentation_grid's.
    connectivity : {6, 26}
        Neighbours of a voxel.

    Returns
    -------
    FlowInstance

    Examples
    --------
    >>> from matchflow import generators
    >>> inst = generators.segmentation_volume(8, 10, 12, seed=0)
    >>> inst.n_vertices, inst.source, inst.name
    (962, 960, 'segmentation3d6_8x10x12')
    """
    if min(depth, rows, cols) < 2:
        raise ValueError(f"need depth, rows, cols >= 2; got {depth} x {rows} x {cols}")
    if connectivity not in (6, 26):
        raise ValueError(f"connectivity must be 6 or 26; got {connectivity}")
    img, _ = _synthetic_image((depth, rows, cols), _rng(seed, 0), blobs, noise)
    name = f"segmentation3d{connectivity}_{depth}x{rows}x{cols}"
    return _segmentation(img, connectivity, noise, smoothness, data_scale, name)

"""Maximum transversal, Dulmage-Mendelsohn and block triangular form.

Every output is checked structurally (permutations, zero-free diagonals,
block upper triangular with the declared blocks) and against independent
oracles: the structural rank and the coarse sets from SciPy's matching and
an alternating-path search written here (the coarse sets do not depend on
the matching), the fine blocks against networkx's (random inputs) or
SciPy's (real matrices) strongly connected components of the square part.
"""
from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

import matchflow
from matchflow import (_core, block_triangular_form, dulmage_mendelsohn,
                       generators, maximum_transversal)
from matchflow.io import read_graph

from conftest import assert_gil_released, data_dir

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


# ---- oracles --------------------------------------------------------------------

def pattern(A) -> sp.csr_array:
    """Canonical 0/1 CSR pattern of A (duplicates merged, explicit zeros kept)."""
    a = sp.csr_array(A, copy=True)
    a.sum_duplicates()
    return sp.csr_array((np.ones(a.nnz, dtype=np.int8), a.indices, a.indptr), shape=a.shape)


def scipy_mates(P: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """(col4row, row4col) of a maximum matching found by SciPy."""
    m, n = P.shape
    if m == 0 or n == 0:
        return np.full(m, -1), np.full(n, -1)
    return scipy_matching(P, perm_type="column"), scipy_matching(P, perm_type="row")


def alternating_reach(P: sp.csr_array, col4row, row4col, from_columns: bool):
    """Rows and columns reachable by alternating paths from the unmatched
    columns (or rows): a BFS on an explicit digraph, super source first."""
    m, n = P.shape
    if not from_columns:
        return alternating_reach(sp.csr_array(P.T), row4col, col4row, True)[::-1]
    # nodes: 0 source, 1..n columns, n+1..n+m rows
    coo = P.tocoo()
    src = [1 + coo.col, np.zeros(0, int), np.zeros(0, int)]
    dst = [1 + n + coo.row, np.zeros(0, int), np.zeros(0, int)]
    matched = np.flatnonzero(col4row >= 0)
    src[1], dst[1] = 1 + n + matched, 1 + col4row[matched]
    free = np.flatnonzero(row4col < 0)
    src[2], dst[2] = np.zeros(free.size, int), 1 + free
    s, d = np.concatenate(src), np.concatenate(dst)
    g = sp.csr_array((np.ones(s.size), (s, d)), shape=(1 + n + m, 1 + n + m))
    reached = breadth_first_order(g, 0, directed=True, return_predecessors=False)
    rows = {int(v) - 1 - n for v in reached if v > n}
    cols = {int(v) - 1 for v in reached if 0 < v <= n}
    return rows, cols


def block_of(bounds: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Block of each position given block starts (empty blocks allowed)."""
    return np.searchsorted(bounds, index, side="right") - 1


def assert_permutation(v, n: int) -> None:
    assert v.shape == (n,) and v.dtype == np.int64
    assert np.array_equal(np.sort(v), np.arange(n))


def assert_zero_free(B: sp.csr_array, r0: int, c0: int, k: int) -> None:
    """B[r0 + t, c0 + t] is stored for t < k."""
    coo = B.tocoo()
    stored = coo.row.astype(np.int64) * B.shape[1] + coo.col
    t = np.arange(k, dtype=np.int64)
    assert np.all(np.isin((r0 + t) * B.shape[1] + c0 + t, stored))


def assert_blocks_are_sccs(S: sp.csr_array, bounds: np.ndarray, use_networkx: bool) -> None:
    """The diagonal blocks of S (zero-free diagonal) are exactly its SCCs."""
    n = S.shape[0]
    if n == 0:
        return
    ours = block_of(bounds, np.arange(n))
    if use_networkx:
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        coo = S.tocoo()
        g.add_edges_from(zip(coo.row.tolist(), coo.col.tolist()))
        theirs = np.empty(n, dtype=np.int64)
        for k, comp in enumerate(nx.strongly_connected_components(g)):
            theirs[list(comp)] = k
    else:
        _, theirs = connected_components(S, directed=True, connection="strong")
    # Same partition: the pairs (ours, theirs) are in one-to-one correspondence.
    pairs = np.unique(np.stack([ours, theirs]), axis=1)
    assert pairs.shape[1] == len(np.unique(ours)) == len(np.unique(theirs))


def check_dm(A, res, use_networkx: bool = True) -> None:
    P = pattern(A)
    m, n = P.shape
    p, q, r, s, rr, cc = res
    assert_permutation(p, m)
    assert_permutation(q, n)
    assert rr.shape == cc.shape == (5,)
    assert rr[0] == cc[0] == 0 and rr[4] == m and cc[4] == n
    assert np.all(np.diff(rr) >= 0) and np.all(np.diff(cc) >= 0)
    # Matched parts pair up: |R1| = |C1|, |R2| = |C2|, |R3| = |C3|.
    assert rr[1] - rr[0] == cc[2] - cc[1]
    assert rr[2] - rr[1] == cc[3] - cc[2]
    assert rr[3] - rr[2] == cc[4] - cc[3]
    col4row, row4col = scipy_mates(P)
    rank = int(np.count_nonzero(col4row >= 0))
    assert res.structural_rank == rank
    B = P[p][:, q]
    assert_zero_free(B, rr[0], cc[1], rr[1] - rr[0])
    assert_zero_free(B, rr[1], cc[2], rr[2] - rr[1])
    assert_zero_free(B, rr[2], cc[3], rr[3] - rr[2])
    # Coarse sets (unique) equal those reached by alternating paths from SciPy's matching.
    r1, c1 = alternating_reach(P, col4row, row4col, from_columns=True)
    r3, c3 = alternating_reach(P, col4row, row4col, from_columns=False)
    assert set(p[:rr[1]].tolist()) == r1
    assert set(q[:cc[2]].tolist()) == c1 | set(np.flatnonzero(row4col < 0).tolist())
    assert set(q[cc[3]:].tolist()) == c3
    assert set(p[rr[2]:].tolist()) == r3 | set(np.flatnonzero(col4row < 0).tolist())
    # Which rows (columns) stay unmatched depends on the matching; how many does not.
    assert rr[4] - rr[3] == m - rank and cc[1] - cc[0] == n - rank
    # Fine blocks: declared as cs_dmperm does, and block upper triangular.
    assert r.shape == s.shape and r.shape[0] >= 1
    assert r[0] == s[0] == 0 and r[-1] == m and s[-1] == n
    assert np.all(np.diff(r) >= 0) and np.all(np.diff(s) >= 0)
    lead = int(cc[2] > 0)
    trail = int(rr[2] < m)
    if lead:
        assert r[1] == rr[1] and s[1] == cc[2]
    if trail:
        assert r[-2] == rr[2] and s[-2] == cc[3]
    square = slice(lead, len(r) - trail)
    assert r[square][0] == rr[1] and r[square][-1] == rr[2]
    assert np.array_equal(r[square] - rr[1], s[square] - cc[2])
    assert np.all(np.diff(r[square]) > 0)  # no empty block in the square part
    coo = B.tocoo()
    assert np.all(block_of(r, coo.row) <= block_of(s, coo.col))
    S = B[rr[1]:rr[2]][:, cc[2]:cc[3]]
    assert_blocks_are_sccs(sp.csr_array(S), r[square] - rr[1], use_networkx)


def check_btf(A, res, use_networkx: bool = True) -> None:
    P = pattern(A)
    n = P.shape[0]
    p, q, r = res
    assert_permutation(p, n)
    assert_permutation(q, n)
    assert r[0] == 0 and r[-1] == n and np.all(np.diff(r) > 0)
    B = P[p][:, q]
    assert_zero_free(B, 0, 0, n)
    coo = B.tocoo()
    assert np.all(block_of(r, coo.row) <= block_of(r, coo.col))
    assert_blocks_are_sccs(B, r, use_networkx)


def check_transversal(A, p, q) -> None:
    P = pattern(A)
    m, n = P.shape
    assert_permutation(p, m)
    assert_permutation(q, n)
    rank = int(np.count_nonzero(scipy_mates(P)[0] >= 0))
    assert_zero_free(P[p][:, q], 0, 0, rank)
    # nothing matched below the rank: the diagonal count is the rank
    assert np.count_nonzero(P[p][:, q].diagonal()) == rank


# ---- inputs ---------------------------------------------------------------------

def random_pattern(rng, m: int, n: int, density: float) -> sp.csr_array:
    return sp.random_array((m, n), density=density, format="csr", rng=rng,
                           data_sampler=lambda size: np.ones(size))


def reducible(rng, sizes, density=0.3, extra=0.02) -> sp.csr_array:
    """Square, nonsingular, with diagonal blocks of the given sizes (each
    strongly connected with high probability), random entries above them,
    then randomly permuted."""
    n = sum(sizes)
    blocks = [sp.random_array((k, k), density=density, rng=rng) + sp.eye_array(k)
              + sp.eye_array(k, k=1 if k > 1 else 0) for k in sizes]
    upper = sp.triu(random_pattern(rng, n, n, extra), k=1)
    A = sp.csr_array(sp.block_diag(blocks) + upper)
    return A[rng.permutation(n)][:, rng.permutation(n)]


def adversarial_cases():
    rng = np.random.default_rng(7)
    cases = {
        "empty-0x0": sp.csr_array((0, 0)),
        "empty-0x4": sp.csr_array((0, 4)),
        "empty-4x0": sp.csr_array((4, 0)),
        "no-entries-3x5": sp.csr_array((3, 5)),
        "one-entry": sp.csr_array(([1.0], ([2], [1])), shape=(4, 3)),
        "identity": sp.eye_array(6, format="csr"),
        "lower-bidiagonal": sp.csr_array(sp.eye_array(8) + sp.eye_array(8, k=-1)),
        "cycle": sp.csr_array(sp.eye_array(8) + sp.eye_array(8, k=1)
                              + sp.csr_array(([1.0], ([7], [0])), shape=(8, 8))),
        "dense-3x3": sp.csr_array(np.ones((3, 3))),
        "wide": random_pattern(rng, 20, 50, 0.08),
        "tall": random_pattern(rng, 50, 20, 0.08),
        "singular-square": random_pattern(rng, 60, 60, 0.03),
        "layered-26147": generators.layered_jacobian(8, 3),
        "star": generators.star(30),
        "reducible": reducible(rng, [5, 1, 7, 3, 1, 1, 10]),
    }
    # empty rows and columns inside
    a = random_pattern(rng, 40, 40, 0.1).tolil()
    a[[3, 17, 30], :] = 0
    a[:, [5, 6]] = 0
    cases["empty-rows-cols"] = sp.csr_array(a)
    # duplicate entries (scipy#26160) and explicit zeros
    rows, cols = rng.integers(0, 12, 60), rng.integers(0, 10, 60)
    dup = sp.coo_array((np.zeros(60), (rows, cols)), shape=(12, 10))
    cases["duplicates-explicit-zeros"] = dup
    return cases


ADVERSARIAL = adversarial_cases()


def real_matrices():
    root = data_dir()
    if root is None:
        return []
    records = json.loads((root / "MANIFEST.json").read_text())
    return [r["file"] for r in records if r["file"].endswith((".mtx", ".mtx.gz", ".txt.gz"))]


# ---- Dulmage-Mendelsohn -----------------------------------------------------------

@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_dm_adversarial(name):
    A = ADVERSARIAL[name]
    check_dm(A, dulmage_mendelsohn(A, device="cpu"))


@pytest.mark.parametrize("seed", range(40))
def test_dm_random(seed):
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 80, 2)
    density = rng.choice([0.01, 0.03, 0.06, 0.15])
    A = random_pattern(rng, int(m), int(n), float(density))
    check_dm(A, dulmage_mendelsohn(A, method="pr", device="cpu"))


@pytest.mark.parametrize("seed", range(10))
def test_dm_random_larger(seed):
    """A few thousand rows, near the density where the square part has many blocks."""
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(1000, 4000))
    n = m + int(rng.integers(-50, 50))
    A = random_pattern(rng, m, n, 1.3 / m)
    res = dulmage_mendelsohn(A, method="msbfs-graft", device="cpu")
    check_dm(A, res, use_networkx=seed < 3)


@pytest.mark.parametrize("method", ["pr", "pdbfs", "msbfs-graft"])
def test_dm_coarse_sets_do_not_depend_on_method(method):
    rng = np.random.default_rng(5)
    A = random_pattern(rng, 500, 520, 0.003)
    check_dm(A, dulmage_mendelsohn(A, method=method, device="cpu"))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_dm_every_format(fmt, kind):
    A = reducible(np.random.default_rng(3), [4, 2, 6, 1])[:, :-2]  # rectangular too
    A = (sp.csr_array if kind == "array" else sp.csr_matrix)(A).asformat(fmt)
    check_dm(A, dulmage_mendelsohn(A, device="cpu"))


def test_dm_int64_indices():
    A = random_pattern(np.random.default_rng(4), 30, 40, 0.05)
    A.indices = A.indices.astype(np.int64)
    A.indptr = A.indptr.astype(np.int64)
    check_dm(A, dulmage_mendelsohn(A, device="cpu"))


@pytest.mark.parametrize("device", DEVICES)
def test_dm_device(device):
    """Large enough for the GPU methods; the result is checked the same way."""
    rng = np.random.default_rng(11)
    A = random_pattern(rng, 30000, 30000, 1.5 / 30000)
    res = dulmage_mendelsohn(A, device=device)
    assert res.stats["device"].startswith(device)
    check_dm(A, res, use_networkx=False)


def grid_with_chains(rng, side: int, chain: int, cycles: int) -> sp.csr_array:
    """A square pattern with a zero-free diagonal, randomly permuted: a side x
    side grid (one strongly connected block), a chain of `chain` singleton
    blocks with arcs into the grid, and `cycles` 3-cycles hanging off the
    chain."""
    g = side * side
    n = g + chain + 3 * cycles
    idx = np.arange(g).reshape(side, side)
    left, right, up, down = idx[:, :-1], idx[:, 1:], idx[:-1], idx[1:]
    rows = [np.arange(n)] + [a.ravel() for a in (left, right, up, down)]
    cols = [np.arange(n)] + [a.ravel() for a in (right, left, down, up)]
    c = g + np.arange(chain)
    rows += [c[:-1], c]
    cols += [c[1:], rng.integers(0, g, chain)]
    for k in range(cycles):
        t = g + chain + 3 * k + np.arange(3)
        rows += [t, t[:1]]
        cols += [np.roll(t, 1), c[rng.integers(0, chain, 1)]]
    r, col = np.concatenate(rows), np.concatenate(cols)
    pr, pc = rng.permutation(n), rng.permutation(n)
    return sp.csr_array((np.ones(r.size), (pr[r], pc[col])), shape=(n, n))


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = np.unique(np.stack([a, b]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def row_blocks(res) -> np.ndarray:
    """Fine block of each original row."""
    block = np.empty(len(res.p), dtype=np.int64)
    block[res.p] = block_of(res.r, np.arange(len(res.p)))
    return block


@pytest.mark.cuda
@pytest.mark.parametrize("case", ["grid", "grid-chains", "random", "chain"])
def test_dm_gpu_pivot_scc(monkeypatch, case):
    """The square part's components with the GPU step (the pivot's component
    contracted before Tarjan), forced on small inputs: block triangular with
    networkx's SCCs as blocks, and the same blocks as the CPU's Tarjan."""
    monkeypatch.setattr(matchflow._preprocess, "GPU_SCC_MIN_VERTICES", 0)
    rng = np.random.default_rng(list(("grid", "grid-chains", "random", "chain")).index(case))
    A = {"grid": lambda: grid_with_chains(rng, 40, 0, 0),
         "grid-chains": lambda: grid_with_chains(rng, 30, 200, 20),
         "random": lambda: (random_pattern(rng, 3000, 3000, 1.2 / 3000)
                            + sp.eye_array(3000, format="csr")).tocsr(),
         "chain": lambda: grid_with_chains(rng, 1, 500, 0)}[case]()
    res = dulmage_mendelsohn(A, device="cuda")
    assert res.stats["device"].startswith("cuda") and res.stats["scc_pivot_size"] >= 1
    check_dm(A, res)
    cpu = dulmage_mendelsohn(A, device="cpu")
    assert cpu.stats["scc_pivot_size"] == -1
    assert res.n_blocks == cpu.n_blocks and same_partition(row_blocks(res), row_blocks(cpu))
    if case == "grid":
        assert res.stats["scc_pivot_size"] == A.shape[0] and res.n_blocks == 1
    if case == "grid-chains":
        assert res.stats["scc_pivot_size"] == 900
        check_btf(A, block_triangular_form(A, device="cuda"))


def test_dm_gpu_scc_step_out_of_memory_falls_back(monkeypatch):
    """device="auto": a GPU out of memory in the components' step leaves them
    to Tarjan, with a RuntimeWarning; an explicit device raises MemoryError.
    (The step's failure is simulated: no GPU is needed.)"""
    import matchflow._preprocess as pp
    real = pp._core.dmperm
    calls = []

    def dmperm(*args):
        calls.append(args[-2])
        if args[-2] >= 0:
            raise MemoryError("out of GPU memory")
        return real(*args)

    monkeypatch.setattr(pp._core, "dmperm", dmperm)
    monkeypatch.setattr(pp, "_scc_device", lambda device: 0)
    A = grid_with_chains(np.random.default_rng(5), 10, 20, 2)
    with pytest.warns(RuntimeWarning, match="components run on the CPU"):
        res = dulmage_mendelsohn(A)
    assert calls == [0, -1] and res.stats["scc_pivot_size"] == -1
    check_dm(A, res)
    with pytest.raises(MemoryError):
        dulmage_mendelsohn(A, device="cpu")


def test_dm_example_of_csparse_shape():
    """A hand-checked 5 x 6: one unmatched column (C0), a horizontal part, a
    2 x 2 irreducible square block and a 1 x 1 one, an unmatched row."""
    A = sp.csr_array(np.array([
        # c0 c1 c2 c3 c4 c5
        [1, 1, 0, 0, 0, 0],   # r0: only C0/C1 columns -> horizontal
        [0, 0, 1, 1, 0, 0],   # r1 \ a 2-cycle on c2, c3
        [0, 0, 1, 1, 1, 0],   # r2 /
        [0, 0, 0, 0, 1, 0],   # r3: c4 alone
        [0, 0, 0, 0, 0, 0],   # r4: empty -> R0
    ]))
    p, _, r, s, rr, cc = dulmage_mendelsohn(A, device="cpu")
    assert rr.tolist() == [0, 1, 4, 4, 5]
    assert cc.tolist() == [0, 2, 3, 6, 6]  # c5 empty, and c0 or c1, unmatched
    assert r.tolist() == [0, 1, 3, 4, 5] and s.tolist() == [0, 3, 5, 6, 6]
    assert sorted(p[1:3].tolist()) == [1, 2] and p[3] == 3 and p[4] == 4
    check_dm(A, dulmage_mendelsohn(A, device="cpu"))


@pytest.mark.parametrize("path", real_matrices())
def test_dm_real_matrices(path):
    A = read_graph(data_dir() / path)
    check_dm(A, dulmage_mendelsohn(A, device="cpu"), use_networkx=False)
    if A.shape[0] == A.shape[1] and matchflow.structural_rank(A) == A.shape[0]:
        check_btf(A, block_triangular_form(A, device="cpu"), use_networkx=False)


def test_real_matrices_present_or_skipped():
    if data_dir() is None:
        pytest.skip("../shared/data not found: real-matrix tests not run")
    assert len(real_matrices()) >= 40


# ---- block triangular form ----------------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_btf_random_reducible(seed):
    rng = np.random.default_rng(200 + seed)
    sizes = rng.integers(1, 12, rng.integers(1, 15)).tolist()
    A = reducible(rng, sizes)
    res = block_triangular_form(A, device="cpu")
    check_btf(A, res)
    dm = dulmage_mendelsohn(A, device="cpu")
    assert np.array_equal(dm.r, res.r) and np.array_equal(dm.s, res.r)


def test_btf_blocks_solve_one_at_a_time():
    """Solving A x = b block by block (back substitution over the BTF) gives
    the solution of the whole system."""
    rng = np.random.default_rng(9)
    A = reducible(rng, [6, 1, 9, 4, 1, 12])
    A = sp.csr_array((rng.uniform(1, 2, A.nnz), A.indices, A.indptr), shape=A.shape)
    x_true = rng.standard_normal(A.shape[0])
    b = A @ x_true
    p, q, r = block_triangular_form(A, device="cpu")
    B, c = A[p][:, q].tocsr(), b[p]
    y = np.zeros(A.shape[0])
    for k in reversed(range(len(r) - 1)):
        lo, hi = r[k], r[k + 1]
        rhs = c[lo:hi] - B[lo:hi, hi:] @ y[hi:]
        y[lo:hi] = np.linalg.solve(B[lo:hi, lo:hi].toarray(), rhs)
    x = np.empty_like(y)
    x[q] = y
    np.testing.assert_allclose(x, x_true, rtol=1e-8, atol=1e-10)


def test_btf_long_chain_no_recursion():
    """300k 1 x 1 blocks in one chain: a depth-first search this deep would
    overflow a recursive Tarjan."""
    n = 300_000
    A = sp.csr_array(sp.eye_array(n) + sp.eye_array(n, k=1))
    perm = np.random.default_rng(1).permutation(n)
    A = A[perm][:, perm]
    p, q, r = block_triangular_form(A, device="cpu")
    assert len(r) == n + 1
    B = A[p][:, q]
    assert sp.tril(B, k=-1).nnz == 0 and np.all(B.diagonal() != 0)


def test_btf_irreducible_is_one_block():
    A = ADVERSARIAL["cycle"]
    assert block_triangular_form(A, device="cpu").r.tolist() == [0, 8]


def test_btf_empty():
    p, q, r = block_triangular_form(sp.csr_array((0, 0)))
    assert p.size == q.size == 0 and r.tolist() == [0]


# ---- maximum transversal -------------------------------------------------------------

@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_transversal_adversarial(name):
    A = ADVERSARIAL[name]
    check_transversal(A, *maximum_transversal(A, device="cpu"))


@pytest.mark.parametrize("seed", range(20))
def test_transversal_random(seed):
    rng = np.random.default_rng(300 + seed)
    m, n = rng.integers(1, 200, 2)
    A = random_pattern(rng, int(m), int(n), float(rng.choice([0.005, 0.02, 0.1])))
    check_transversal(A, *maximum_transversal(A, method="pr", device="cpu"))


def test_transversal_identity_rows_when_full_row_rank():
    A = reducible(np.random.default_rng(2), [3, 4, 5])
    p, q = maximum_transversal(A, device="cpu")
    assert np.array_equal(p, np.arange(A.shape[0]))
    assert np.all(A[:, q].diagonal() != 0)


@pytest.mark.parametrize("device", DEVICES)
def test_transversal_device(device):
    A = random_pattern(np.random.default_rng(12), 40000, 30000, 2.5 / 30000)
    check_transversal(A, *maximum_transversal(A, device=device))


# ---- the SCC routine against networkx ------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_scc_against_networkx(seed):
    rng = np.random.default_rng(400 + seed)
    n = int(rng.integers(1, 300))
    G = random_pattern(rng, n, n, float(rng.choice([0.002, 0.005, 0.01, 0.03])))
    comp, count = _core.scc(G.indptr.astype(np.int64), G.indices.astype(np.int32))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    coo = G.tocoo()
    g.add_edges_from(zip(coo.row.tolist(), coo.col.tolist()))
    theirs = list(nx.strongly_connected_components(g))
    assert count == len(theirs)
    for c in theirs:
        assert len({int(comp[v]) for v in c}) == 1
    # reverse topological order: an arc between components goes to a lower id
    between = comp[coo.row] != comp[coo.col]
    assert np.all(comp[coo.row][between] > comp[coo.col][between])


def test_scc_empty_and_self_loops():
    comp, count = _core.scc(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32))
    assert count == 0 and comp.size == 0
    comp, count = _core.scc(np.array([0, 2, 3], dtype=np.int64),
                            np.array([0, 1, 1], dtype=np.int32))
    assert count == 2 and comp.tolist() == [1, 0]  # 0 -> 1, so 1 is the sink


# ---- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [maximum_transversal, dulmage_mendelsohn, block_triangular_form])
def test_dense_input_is_a_type_error(fn):
    with pytest.raises(TypeError, match="must be a scipy.sparse matrix or array"):
        fn(np.eye(3))


@pytest.mark.parametrize("fn", [maximum_transversal, dulmage_mendelsohn, block_triangular_form])
def test_unknown_method_and_device(fn):
    A = sp.eye_array(3, format="csr")
    with pytest.raises(ValueError, match="method must be one of"):
        fn(A, method="nope")
    with pytest.raises(ValueError):
        fn(A, device="tpu")


@pytest.mark.parametrize("fn", [maximum_transversal, dulmage_mendelsohn, block_triangular_form])
def test_malformed_structure(fn):
    A = sp.csr_array(sp.eye_array(3, format="csr"))
    A.indices[1] = 7  # column out of range
    with pytest.raises(ValueError):
        fn(A)


def test_cuda_without_gpu_is_a_runtime_error():
    if matchflow.cuda_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError):
        dulmage_mendelsohn(sp.eye_array(3, format="csr"), device="cuda")


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (0, 2)])
def test_btf_not_square(shape):
    with pytest.raises(ValueError, match="needs a square matrix.*use dulmage_mendelsohn"):
        block_triangular_form(sp.csr_array(shape))


def test_btf_structurally_singular():
    A = sp.csr_array(np.array([[1, 1, 1], [1, 0, 0], [1, 0, 0]]))  # rows 1, 2 share column 0
    with pytest.raises(ValueError, match=r"structurally singular \(structural rank 2 < 3\)"
                       ".*use dulmage_mendelsohn"):
        block_triangular_form(A)


# ---- results and docs --------------------------------------------------------------------

def test_results_unpack_and_report():
    A = ADVERSARIAL["reducible"]
    res = dulmage_mendelsohn(A, device="cpu")
    _, _, r, _, _, _ = res
    assert res.n_blocks == len(r) - 1 and res.structural_rank == A.shape[0]
    for key in ("seconds_matching", "seconds_coarse", "seconds_scc", "seconds_total"):
        assert res.stats[key] >= 0
    btf = block_triangular_form(A, device="cpu")
    assert btf.n_blocks == res.n_blocks


@pytest.mark.parametrize("seed", range(20))
def test_core_survives_a_matching_that_is_not_maximum(seed):
    """The core trusts its matching, but a wrong one (here: a greedy one with
    random pairs dropped) gives an error or a wrong answer, never a crash."""
    from matchflow._validation import as_bipartite
    rng = np.random.default_rng(500 + seed)
    A = random_pattern(rng, 60, 50, 0.05)
    g = as_bipartite(A)
    col4row = np.full(60, -1, dtype=np.int32)
    row4col = np.full(50, -1, dtype=np.int32)
    coo = A.tocoo()
    for i, j in zip(coo.row.tolist(), coo.col.tolist()):
        if col4row[i] < 0 and row4col[j] < 0 and rng.random() < 0.7:
            col4row[i], row4col[j] = j, i
    try:
        p, q, *_ = _core.dmperm(g.row_ptr, g.row_adj, 50, col4row, row4col, 1, -1, 0)
    except ValueError as exc:
        assert "not maximum" in str(exc)
    else:
        assert np.array_equal(np.sort(p), np.arange(60))
        assert np.array_equal(np.sort(q), np.arange(50))


@pytest.mark.parametrize("name", ["west0479", "west0067", "bayer10"])
def test_btf_solves_real_matrix_block_by_block(name):
    """On unsymmetric real matrices, back substitution over the BTF blocks
    (each factorised alone) solves A x = b as well as SuperLU on all of A."""
    import scipy.sparse.linalg as spla
    root = data_dir()
    files = sorted(root.glob(f"suitesparse/{name}.mtx*")) if root else []
    if not files:
        pytest.skip(f"{name} not in the data folder")
    A = sp.csc_array(read_graph(files[0]), dtype=np.float64)
    assert matchflow.structural_rank(A) == A.shape[0]  # all three are nonsingular (MANIFEST)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    p, q, r = block_triangular_form(A, device="cpu")
    assert len(r) > 2  # reducible: more than one block
    B, c = sp.csr_array(A[p][:, q]), b[p]
    y = np.zeros(A.shape[0])
    for k in reversed(range(len(r) - 1)):
        lo, hi = r[k], r[k + 1]
        y[lo:hi] = spla.splu(sp.csc_array(B[lo:hi, lo:hi])).solve(c[lo:hi] - B[lo:hi, hi:] @ y[hi:])
    x = np.empty_like(y)
    x[q] = y
    x_lu = spla.splu(A).solve(b)
    scale = spla.norm(A, 1) * np.abs(x).sum() + np.abs(b).sum()
    assert np.abs(A @ x - b).sum() / scale <= max(1e-12, 10 * np.abs(A @ x_lu - b).sum() / scale)


def test_decomposition_releases_the_gil():
    from matchflow._validation import as_bipartite
    A = generators.uniform_random(1 << 19, seed=3)
    g = as_bipartite(A)
    res = matchflow.maximum_matching(A, device="cpu")
    assert_gil_released(lambda: _core.dmperm(g.row_ptr, g.row_adj, g.n_cols, res.col4row,
                                             res.row4col, 1, -1, 0), min_seconds=0.02)

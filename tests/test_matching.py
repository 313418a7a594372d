"""Maximum bipartite matching: every method against SciPy, with certificates."""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

import matchflow
from matchflow import generators
from matchflow._matching import _METHOD_CODES, CPU_METHODS, GPU_METHODS
from matchflow.io import read_graph

from conftest import GPU_REPEATS, assert_gil_released, data_dir
from oracles import assert_maximum_matching, scipy_cardinality

METHODS = [pytest.param(m, id=m) for m in CPU_METHODS] + [
    pytest.param(m, id=m, marks=pytest.mark.cuda) for m in GPU_METHODS]


def solve(graph, method, **kwargs):
    device = "cuda" if method.startswith("gpu") else "cpu"
    return matchflow.maximum_matching(graph, method=method, device=device, **kwargs)


def check(graph, method, expected=None, **kwargs):
    """Solve (repeatedly for GPU methods) and certify every answer."""
    for _ in range(GPU_REPEATS if method.startswith("gpu") else 1):
        assert_maximum_matching(graph, solve(graph, method, **kwargs), expected=expected)


# ---- random families ---------------------------------------------------------

def random_graph(seed: int) -> sp.csr_array:
    """One of several families, chosen by the seed, with seeded structure."""
    rng = np.random.default_rng(seed)
    family = seed % 6
    n_rows, n_cols = (int(x) for x in rng.integers(1, 120, size=2))
    if family == 0:  # square, sparse to moderately dense
        n_cols = n_rows
        g = sp.random_array((n_rows, n_cols), density=rng.uniform(0.005, 0.2), rng=rng)
    elif family == 1:  # rectangular either way, very sparse (many isolated vertices)
        g = sp.random_array((n_rows, n_cols), density=rng.uniform(0.001, 0.03), rng=rng)
    elif family == 2:  # perfect: a hidden permutation plus noise
        n_cols = n_rows
        perm = sp.csr_array((np.ones(n_rows), (np.arange(n_rows), rng.permutation(n_rows))),
                            shape=(n_rows, n_rows))
        g = perm + sp.random_array((n_rows, n_rows), density=0.02, rng=rng)
    elif family == 3:  # deficient: a block of rows sharing few columns
        g = sp.random_array((n_rows, n_cols), density=0.05, rng=rng).tolil()
        few = rng.integers(0, n_cols, size=max(1, n_cols // 10))
        for r in rng.integers(0, n_rows, size=n_rows // 2):
            g.rows[r], g.data[r] = sorted(set(few.tolist())), [1.0] * len(set(few.tolist()))
    elif family == 4:  # a few dense rows and dense columns
        g = sp.random_array((n_rows, n_cols), density=0.01, rng=rng).tolil()
        g[int(rng.integers(n_rows)), :] = 1
        g[:, int(rng.integers(n_cols))] = 1
    else:  # uniform random with duplicate entries and unsorted indices
        nnz = int(rng.integers(1, 4 * (n_rows + n_cols)))
        r = rng.integers(0, n_rows, nnz)
        c = rng.integers(0, n_cols, nnz)
        g = sp.coo_array((np.ones(r[:5].size + nnz), (np.r_[r, r[:5]], np.r_[c, c[:5]])),
                         shape=(n_rows, n_cols)).tocsr()
        g.has_sorted_indices = False
        g.indices[: g.indptr[1]] = g.indices[: g.indptr[1]][::-1]
    return sp.csr_array(g)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("block", range(6))
def test_random_graphs_against_scipy(method, block):
    """300 seeded graphs per method (6 blocks of 50), six families."""
    for seed in range(block * 50, (block + 1) * 50):
        check(random_graph(seed), method)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("init", ["cheap", "karp-sipser", "none"])
def test_every_initial_matching(method, init):
    for seed in range(20):
        check(random_graph(1000 + seed), method, init=init)


@pytest.mark.cuda
@pytest.mark.parametrize("search", ["rows", "columns"])
@pytest.mark.parametrize("layout", ["ct", "mt"])
@pytest.mark.parametrize("bfs", ["gpubfs", "gpubfs-wr"])
@pytest.mark.parametrize("method", ["gpu-apfb", "gpu-apsb"])
def test_every_paper_004_variant(method, bfs, layout, search, monkeypatch):
    """Each variant searching from either side (MATCHFLOW_AP_SEARCH)."""
    monkeypatch.setenv("MATCHFLOW_AP_SEARCH", search)
    for seed in range(60):
        check(random_graph(2000 + seed), method, bfs=bfs, layout=layout)


@pytest.mark.cuda
@pytest.mark.parametrize("search", ["rows", "columns"])
@pytest.mark.parametrize("init", ["cheap", "none"])
def test_apfb_grafting(init, search, monkeypatch):
    """APFB with GPUBFS-WR keeps its live trees across phases (tree grafting)
    unless MATCHFLOW_AP_GRAFT=0; both certified, on random, R-MAT and
    power-law graphs.  The launch count tells which ran (with no start:
    two kernels after ALTERNATE per phase with grafting, one without), and the augmentations
    account for the whole growth of the matching."""
    monkeypatch.setenv("MATCHFLOW_AP_SEARCH", search)
    graphs = [random_graph(4000 + seed) for seed in range(40)]
    graphs += [generators.rmat(12, edge_factor=8, seed=s) for s in range(3)]
    graphs += [generators.power_law(5000, degree=4.0, seed=s) for s in range(3)]
    graphs += [_with_duplicates_unsorted((3000, 2000), 2, seed=7)]
    for g in graphs:
        other_launches = set()
        for graft, per_phase in (("1", 4), ("0", 3)):
            monkeypatch.setenv("MATCHFLOW_AP_GRAFT", graft)
            for _ in range(GPU_REPEATS):
                r = solve(g, "gpu-apfb", init=init)
                assert_maximum_matching(g, r)
                s = r.stats
                assert s.augmentations == r.cardinality - s.init_cardinality
                other_launches.add(s.kernel_launches - s.bfs_levels - per_phase * s.iterations)
        if init == "none":  # the transpose and the first INITBFSARRAY alone
            assert len(other_launches) == 1


@pytest.mark.cuda
def test_apfb_grafts_where_degrees_are_skewed(monkeypatch):
    """Left to itself, gpu-apfb grafts on power-law and R-MAT graphs (their
    degrees skewed, as `auto` reads them) and not on uniform random ones:
    each unforced solve's launches fit the forced setting's count."""
    def other_launches(g, per_phase, graft=None):
        if graft is None:
            monkeypatch.delenv("MATCHFLOW_AP_GRAFT", raising=False)
        else:
            monkeypatch.setenv("MATCHFLOW_AP_GRAFT", graft)
        r = solve(g, "gpu-apfb", init="none")
        assert_maximum_matching(g, r)
        s = r.stats
        assert s.iterations > 1
        return s.kernel_launches - s.bfs_levels - per_phase * s.iterations
    skewed = [generators.power_law(20000, degree=4.0, seed=1),
              generators.rmat(14, edge_factor=8, seed=1)]
    for g in skewed:
        assert other_launches(g, 4) == other_launches(g, 4, graft="1")
    g = generators.uniform_random(20000, degree=3.0, seed=1)
    assert other_launches(g, 3) == other_launches(g, 3, graft="0")


def _with_duplicates_unsorted(shape, per_side: int, seed: int) -> sp.csr_array:
    """per_side x the longer side random edges, 50 of them twice, and the
    first rows' indices reversed."""
    rng = np.random.default_rng(seed)
    nnz = per_side * max(shape)
    r, c = rng.integers(0, shape[0], nnz), rng.integers(0, shape[1], nnz)
    g = sp.coo_array((np.ones(nnz + 50), (np.r_[r, r[:50]], np.r_[c, c[:50]])),
                     shape=shape).tocsr()
    g.has_sorted_indices = False
    g.indices[: g.indptr[5]] = g.indices[: g.indptr[5]][::-1]
    return sp.csr_array(g)


@pytest.mark.cuda
@pytest.mark.parametrize("init", ["cheap", "none", "karp-sipser"])
@pytest.mark.parametrize("shape", [(3000, 3000), (1500, 7000), (5000, 2600), (7000, 1500)])
@pytest.mark.parametrize("method", ["gpu-apfb", "gpu-apsb"])
def test_gpu_ap_searches_from_the_stored_rows(method, shape, init):
    """APFB/APsB run on the transposed problem over the uploaded CSR (no
    device transpose) unless the graph is over twice as tall as wide, or the
    host built the CSC (Karp-Sipser); duplicates and unsorted indices."""
    n_rows, n_cols = shape
    g = _with_duplicates_unsorted(shape, 2, seed=n_rows + 3 * n_cols)
    expected = scipy_cardinality(g)
    for _ in range(GPU_REPEATS):
        res = solve(g, method, init=init)
        assert_maximum_matching(g, res, expected=expected)
        solved = res.stats.init_cardinality < min(shape)
        assert (res.stats.seconds_solve > 0) == solved
        if init == "karp-sipser":
            # The host builds the CSC for Karp-Sipser itself, unless a greedy
            # probe is perfect already; a solve then searches from the columns.
            assert res.stats.seconds_transpose > 0 or not solved
        else:  # a perfect start needs no CSC
            assert (res.stats.seconds_transpose > 0) == (n_rows > 2 * n_cols and solved)


@pytest.mark.cuda
@pytest.mark.parametrize("layout", ["ct", "mt"])
def test_gpu_ap_from_threads_at_once(layout):
    """Eight threads solving with APFB / APsB at once, each graph a size of
    its own (the mt layout's grids then differ; the power-law ones graft):
    each solve takes an instantiated CUDA graph of its shape or builds one,
    and hands it back; every answer is certified."""
    import threading
    graphs = [_with_duplicates_unsorted((n, n + 37 * k), 3, seed=k)
              for k, n in enumerate((900, 1500, 2500, 4000, 1200, 3000))]
    graphs += [generators.power_law(n, degree=4.0, seed=n) for n in (20000, 30000)]  # grafting
    expected = [scipy_cardinality(g) for g in graphs]
    errors: list[str] = []

    def work(k):
        try:
            for r in range(GPU_REPEATS):
                method = ("gpu-apfb", "gpu-apsb")[(k + r) % 2]
                for bfs in ("gpubfs-wr", "gpubfs"):
                    res = solve(graphs[k], method, layout=layout, bfs=bfs)
                    assert_maximum_matching(graphs[k], res, expected=expected[k])
        except Exception as exc:  # reported below: a thread's assert does not fail the test
            errors.append(f"graph {k}: {exc!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(graphs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.cuda
def test_gpu_pr_paper_structure():
    for seed in range(60):
        check(random_graph(3000 + seed), "gpu-pr", variant="paper")
    check(generators.uniform_random(20000, degree=2.0, seed=5), "gpu-pr", variant="paper")


@pytest.mark.parametrize("method", METHODS)
def test_larger_random_graphs(method):
    for seed, (n_rows, n_cols, degree) in enumerate([(20000, 20000, 2.0), (30000, 10000, 1.5),
                                                      (5000, 40000, 4.0)]):
        g = generators.uniform_random(n_rows, n_cols, degree=degree, seed=seed)
        check(g, method)
        check(generators.random_permutation(g, seed=seed), method)


@pytest.mark.cuda
@pytest.mark.parametrize("pinned_mb", ["0", "256"])
@pytest.mark.parametrize("method", GPU_METHODS)
def test_staged_copies_of_a_large_graph(method, pinned_mb, monkeypatch):
    """A CSR of 7.2 MB goes up through the staged copy (pinned ring, pieces
    shared by the workers and the caller), in chunks that cut both arrays at
    odd places; the mates (4.4 MB) come back the same way into pageable
    arrays (no page-locked results: cap 0), or by DMA into page-locked ones."""
    monkeypatch.setenv("MATCHFLOW_PINNED_RESULTS_MB", pinned_mb)
    check(generators.uniform_random(600_001, 500_003, degree=2.0, seed=11), method)


@pytest.mark.parametrize("method", METHODS)
def test_threads_and_relabel_frequency(method):
    g = generators.uniform_random(3000, degree=2.5, seed=7)
    expected = scipy_cardinality(g)
    for kwargs in ({"threads": 1}, {"threads": 2}, {"relabel_k": 0.1}, {"relabel_k": 4.0}):
        assert solve(g, method, **kwargs).cardinality == expected


# ---- adversarial families ----------------------------------------------------

ADVERSARIAL = {
    "star": generators.star(3000),
    "star-transposed": generators.star(3000).T.tocsr(),
    "star-with-diagonal": generators.star(3000, diagonal=True),
    "competing-rows": sp.csr_array(np.ones((500, 3))),
    "long-path": generators.long_path(20000),
    "long-path-rcp": generators.random_permutation(generators.long_path(20000), seed=1),
    "complete-blocks": generators.complete_bipartite_blocks(20, 30, 25),
    "complete-block-dense": sp.csr_array(np.ones((300, 200))),
    "layered-jacobian": generators.layered_jacobian(40, copies=3),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial(method, name):
    g = ADVERSARIAL[name]
    # The König cover proves maximality on its own; SciPy is not asked about
    # the layered pattern (its Hopcroft-Karp is exponential there, scipy#26147):
    # that pattern has full structural rank by construction.
    expected = g.shape[0] if name == "layered-jacobian" else None
    check(g, method, expected=expected)
    if method.startswith("gpu"):  # the solve alone (the start matches the long path perfectly)
        check(g, method, expected=expected, init="none")


# ---- real matrices -----------------------------------------------------------

def _manifest():
    root = data_dir()
    if root is None:
        return []
    records = json.loads((root / "MANIFEST.json").read_text())
    return [r for r in records if r["file"].endswith((".mtx", ".mtx.gz", ".txt.gz"))
            and r.get("sprank") is not None]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("record", _manifest(), ids=lambda r: r["file"])
def test_real_matrices(method, record):
    check(read_graph(data_dir() / record["file"]), method, expected=int(record["sprank"]))


def test_real_matrices_present_or_skipped():
    """Say loudly (as a skip) when the data folder is missing, rather than pass."""
    if data_dir() is None:
        pytest.skip("../shared/data not found: real-matrix tests not run")
    assert len(_manifest()) >= 40


# ---- the SciPy drop-ins ------------------------------------------------------

@pytest.mark.parametrize("perm_type", ["row", "column"])
def test_drop_in_return_convention(perm_type):
    g = sp.csr_array(np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]))
    ours = matchflow.maximum_bipartite_matching(g, perm_type=perm_type)
    theirs = scipy_mbm(g, perm_type=perm_type)
    assert ours.dtype == theirs.dtype == np.int32
    assert ours.shape == theirs.shape
    assert np.array_equal(ours >= 0, theirs >= 0)


def test_drop_in_default_perm_type_is_row():
    g = sp.csr_array(np.ones((2, 5)))
    assert matchflow.maximum_bipartite_matching(g).shape == (5,)


@pytest.mark.parametrize("seed", range(30))
def test_structural_rank_equals_scipy(seed):
    from scipy.sparse.csgraph import structural_rank as scipy_rank

    g = random_graph(seed)
    assert matchflow.structural_rank(g) == scipy_rank(g)


def test_structural_rank_of_dok_and_lil():
    g = sp.random_array((50, 70), density=0.05, rng=np.random.default_rng(3))
    expected = scipy_cardinality(g)
    for fmt in ("dok", "lil", "dia", "bsr"):
        assert matchflow.structural_rank(g.asformat(fmt)) == expected


def test_result_object():
    g = generators.uniform_random(2000, degree=3, seed=1)
    r = matchflow.maximum_matching(g, method="pr", device="cpu")
    assert r.method == "pr" and r.device == "cpu"
    assert 0 < r.stats.init_cardinality <= r.cardinality
    assert r.stats.global_relabels >= 1 and r.stats.pushes > 0
    assert r.stats.seconds_total >= r.stats.seconds_solve >= 0
    p = matchflow.maximum_matching(g, method="pdbfs", device="cpu", threads=2)
    assert p.stats.iterations >= 1 and p.cardinality == r.cardinality


def test_auto_runs_on_cpu_without_gpu():
    g = generators.uniform_random(500, degree=3, seed=2)
    r = matchflow.maximum_matching(g)
    assert r.method in CPU_METHODS + GPU_METHODS
    if not matchflow.cuda_available():
        assert r.device == "cpu"
    assert_maximum_matching(g, r)


def test_auto_falls_back_to_cpu_when_the_gpu_is_out_of_memory(monkeypatch):
    """device="auto" + MemoryError on the GPU: a warning and the CPU answer."""
    from matchflow import _core, _device

    real = _core.matching

    gpu_codes = {_METHOD_CODES[m] for m in GPU_METHODS}

    def fake_matching(row_ptr, row_adj, n_cols, method, *rest):
        if method in gpu_codes:
            raise MemoryError("the GPU cannot hold this problem: it needs 123 bytes")
        return real(row_ptr, row_adj, n_cols, method, *rest)

    def fake_raw(*args):  # a CSR goes to the GPU as SciPy holds it (_solve_raw)
        raise MemoryError("the GPU cannot hold this problem: it needs 123 bytes")

    monkeypatch.setattr(_core, "matching", fake_matching)
    monkeypatch.setattr(_core, "matching_raw", fake_raw)
    monkeypatch.setattr(_device, "cuda_available", lambda: True)
    g = generators.uniform_random(300_000, degree=1.0, seed=3)
    with pytest.warns(RuntimeWarning, match="falling back to the CPU"):
        r = matchflow.maximum_matching(g, device="auto")
    assert r.device == "cpu"
    assert r.cardinality == scipy_cardinality(g)
    with pytest.raises(MemoryError, match="123 bytes"):
        monkeypatch.setattr(_device, "_require_cuda", lambda ordinal: None)
        matchflow.maximum_matching(g, device="cuda")


@pytest.mark.parametrize("method", METHODS)
def test_perfect_greedy_start_skips_the_solve(method):
    """Upper triangular with a full diagonal: the row greedy matches row i to
    column i, so no method builds the transpose or runs its solve."""
    n = 5000
    g = sp.triu(sp.random_array((n, n), density=0.002, rng=np.random.default_rng(4))
                + sp.eye_array(n), format="csr")
    r = solve(g, method)
    assert r.cardinality == n
    assert r.stats.seconds_transpose == 0 and r.stats.seconds_solve == 0
    assert_maximum_matching(g, r, expected=n)


@pytest.mark.parametrize("init", ["karp-sipser", "cheap", "none"])
@pytest.mark.parametrize("shape", [(4000, 4000), (2000, 9000), (7000, 2000), (9000, 1500)])
def test_pdbfs_searches_from_the_stored_rows(shape, init):
    """P-DBFS runs over the CSR rows with roles swapped (no transpose) unless
    the graph is much taller than wide; Karp-Sipser then runs over the rows
    too (parallel, from column counts and row-id sums).  Both sides, with
    duplicates and unsorted indices, at 1 and 2 threads."""
    n_rows, n_cols = shape
    g = _with_duplicates_unsorted(shape, 3, seed=n_rows + n_cols)
    for threads in (1, 2):
        res = solve(g, "pdbfs", init=init, threads=threads)
        assert_maximum_matching(g, res)
        if n_rows <= 2 * n_cols:
            assert res.stats.seconds_transpose == 0


def test_parallel_transpose_feeds_every_method():
    """Over 2^20 edges the column orientation is built by the bucketed
    parallel sort: odd column count, duplicates, a dense row and column."""
    rng = np.random.default_rng(11)
    n_rows, n_cols, nnz = 300_001, 200_003, 1_300_000
    r, c = rng.integers(0, n_rows, nnz), rng.integers(0, n_cols, nnz)
    r = np.r_[r, np.zeros(5000, np.int64), rng.integers(0, n_rows, 5000), r[:1000]]
    c = np.r_[c, rng.integers(0, n_cols, 5000), np.full(5000, n_cols - 1), c[:1000]]
    g = sp.csr_array(sp.coo_array((np.ones(r.size), (r, c)), shape=(n_rows, n_cols)).tocsr())
    expected = scipy_cardinality(g)
    for method in ("pr", "msbfs-graft"):
        for threads in (1, 2):
            res = solve(g, method, threads=threads, init="karp-sipser")
            assert res.stats.seconds_transpose > 0
            assert_maximum_matching(g, res, expected=expected)


# ---- GPU: graph upload, device transpose, device greedy start -----------------

GPU_ONLY = [pytest.param(m, id=m, marks=pytest.mark.cuda) for m in GPU_METHODS]


def _with_empty_lines(seed: int) -> sp.csr_array:
    """Random graph whose first rows and last columns have no edges (the
    device transpose's row-start marks and column counts must skip them)."""
    rng = np.random.default_rng(seed)
    g = sp.random_array((400, 300), density=0.01, rng=rng).tolil()
    g[:37, :] = 0
    g[:, 250:] = 0
    g = sp.csr_array(g)
    g.eliminate_zeros()
    return g


@pytest.mark.parametrize("method", GPU_ONLY)
def test_gpu_greedy_start_on_perfect_graphs(method):
    """A hidden permutation plus noise: the device greedy start, then the
    device transpose and the solve when the start is not perfect."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        n = 3000
        perm = sp.csr_array((np.ones(n), (np.arange(n), rng.permutation(n))), shape=(n, n))
        g = sp.csr_array(perm + sp.random_array((n, n), density=0.001, rng=rng))
        r = solve(g, method)
        assert_maximum_matching(g, r, expected=n)
        assert 0 < r.stats.init_cardinality <= n
        assert r.stats.seconds_init > 0
        if r.stats.init_cardinality < n:  # APFB/APsB search the rows: no transpose
            assert (r.stats.seconds_transpose > 0) == (method == "gpu-pr")
            assert r.stats.kernel_launches > 1


@pytest.mark.parametrize("method", GPU_ONLY)
def test_gpu_greedy_start_on_deficient_graphs(method):
    for g in (generators.star(2000), generators.star(2000).T.tocsr(),
              sp.csr_array(np.ones((300, 4))), sp.csr_array(np.ones((4, 300)))):
        r = solve(g, method)
        assert_maximum_matching(g, r)
        assert 0 < r.stats.init_cardinality <= r.cardinality


@pytest.mark.parametrize("method", GPU_ONLY)
@pytest.mark.parametrize("init", ["cheap", "none", "karp-sipser"])
def test_gpu_empty_rows_and_columns(method, init):
    for seed in range(10):
        check(_with_empty_lines(seed), method, init=init)
    check(sp.csr_array((5, 7)), method, init=init, expected=0)


@pytest.mark.parametrize("method", GPU_ONLY)
def test_gpu_stats_split_the_time(method):
    """Transfer, transpose, init, solve and setup are timed apart; the launch
    cost is measured."""
    g = generators.uniform_random(20000, degree=2.0, seed=11)
    if method != "gpu-pr":  # the column search, which needs the transpose
        g = sp.csr_array(sp.vstack([g, g, g[:100]]))
    r = solve(g, method)
    assert_maximum_matching(g, r)
    s = r.stats
    assert s.seconds_transfer > 0 and s.seconds_transpose > 0 and s.seconds_init > 0
    assert s.seconds_solve > 0 and s.seconds_setup > 0 and s.seconds_per_launch > 0
    parts = (s.seconds_transfer + s.seconds_transpose + s.seconds_init + s.seconds_solve
             + s.seconds_setup)
    assert parts <= s.seconds_total
    assert s.kernel_launches > 8  # greedy + transpose (several) + solve


# Rows longer than this do not prefer their diagonal entry in the device start
# (graph_upload_kernels.cuh, diagonal_search_max).
DIAGONAL_SEARCH_MAX = 4096


def _greedy_start_size(g: sp.csr_array, by_degree: bool = True) -> int:
    """The device start, sequentially: rows by (degree, id), or by id alone,
    each takes its diagonal column when it has that entry, the column is free
    and the row holds at most DIAGONAL_SEARCH_MAX entries, else its first
    free column in stored order (the papers' cheap matching, but for the
    order and the diagonal's preference)."""
    degrees = np.diff(g.indptr)
    ids = np.arange(g.shape[0])
    order = np.lexsort((ids, degrees)) if by_degree else ids
    taken = np.zeros(g.shape[1], dtype=bool)
    for u in order:
        row = g.indices[g.indptr[u]:g.indptr[u + 1]]
        short = row.size <= DIAGONAL_SEARCH_MAX
        if short and u < g.shape[1] and u in row and not taken[u]:
            taken[u] = True
            continue
        for v in row:
            if not taken[v]:
                taken[v] = True
                break
    return int(taken.sum())


def _long_row_with_its_diagonal(n: int = 6000) -> sp.csr_array:
    """Row 10 holds columns 0..5000 (past DIAGONAL_SEARCH_MAX, its diagonal
    among them), row 11 column 10 alone, the other rows a sparse random
    block on columns 5001..: with the long row's diagonal preferred, row 11
    would stay unmatched in the start."""
    rng = np.random.default_rng(3)
    rest = sp.random_array((n - 12, n - 5001), density=0.001, rng=rng, format="coo")
    rows = np.r_[np.full(5001, 10), 11, rest.row + 12]
    cols = np.r_[np.arange(5001), 10, rest.col + 5001]
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))


@pytest.mark.parametrize("method", GPU_ONLY)
@pytest.mark.parametrize("order", ["degree", "id"])
def test_gpu_start_is_the_sequential_greedy(method, order, monkeypatch):
    """The device start (rounds of proposals, smallest (degree, id) wins, or
    smallest id, the papers' row order; MATCHFLOW_START_ORDER forces one) is
    exactly the sequential greedy in that order with the diagonal preferred:
    same size on random, permuted, mesh and duplicate-laden graphs (some
    with diagonal entries by chance, some with rows of hundreds of entries,
    one past the diagonal's search); perfect on a mesh with its diagonal,
    and on a banded matrix with its diagonal whose stored-order chains pass
    the round cap."""
    monkeypatch.setenv("MATCHFLOW_START_ORDER", order)
    rng = np.random.default_rng(7)
    graphs = [generators.uniform_random(3000, degree=3, seed=s) for s in range(3)]
    graphs += [generators.rmat(11, edge_factor=8, seed=1), generators.delaunay(2000, seed=2),
               generators.random_geometric(2000, degree=8, seed=3)]
    graphs += [generators.random_permutation(g, seed=5) for g in graphs[:1] + graphs[3:]]
    graphs.append(sp.csr_array(sp.random_array((500, 800), density=0.01, rng=rng)))
    # Rows of more than 32 entries, which a warp walks together: hubs, and
    # dense rows with diagonal entries.
    graphs += [generators.power_law(3000, degree=6.0, seed=4),
               sp.csr_array(sp.random_array((300, 300), density=0.3, rng=rng))]
    dup = sp.random_array((600, 400), density=0.01, rng=rng, format="coo")
    graphs.append(sp.csr_array(sp.coo_array(
        (np.r_[dup.data, dup.data], (np.r_[dup.row, dup.row], np.r_[dup.col, dup.col])),
        shape=dup.shape).tocsr()))
    graphs.append(_long_row_with_its_diagonal())
    for g in graphs:
        g = sp.csr_array(g)
        expected_start = _greedy_start_size(g, by_degree=order == "degree")
        for _ in range(GPU_REPEATS):
            r = solve(g, method)
            assert r.stats.init_cardinality == expected_start
            assert_maximum_matching(g, r)
    mesh = generators.delaunay(3000, seed=4)
    r = solve(mesh, method)
    assert r.stats.init_cardinality == 3000 and r.stats.seconds_solve == 0
    n = 3000
    banded = sp.csr_array(sum(sp.eye_array(n, k=k) for k in range(-20, 21)))
    r = solve(banded, method)
    assert r.stats.init_cardinality == n and r.stats.seconds_solve == 0


@pytest.mark.parametrize("method", GPU_ONLY)
def test_gpu_start_ranks_rows_by_degree_where_degrees_are_skewed(method, monkeypatch):
    """Left to itself, the device start ranks rows by (degree, id) on skewed
    degrees (power-law, R-MAT: rows of one entry keep their column) and by id
    on near-regular graphs (uniform random, a permuted grid); forced, the degree
    order matches the long path perfectly (its last row, of one entry,
    first), where the row order leaves its two ends to the solve."""
    monkeypatch.delenv("MATCHFLOW_START_ORDER", raising=False)
    skewed = [generators.power_law(4000, degree=4.0, seed=1), generators.rmat(12, edge_factor=8,
                                                                              seed=1)]
    # (Permuted: a natural grid's chains of displacements pass the round cap,
    # and the start is then not the sequential greedy.)
    regular = [generators.uniform_random(4000, degree=3.0, seed=1),
               generators.random_permutation(generators.grid_road(60, 60, p_delete=0.1, seed=1),
                                             seed=2)]
    for g, by_degree in [(g, True) for g in skewed] + [(g, False) for g in regular]:
        g = sp.csr_array(g)
        assert _greedy_start_size(g, True) != _greedy_start_size(g, False)
        r = solve(g, method)
        assert r.stats.init_cardinality == _greedy_start_size(g, by_degree)
        assert_maximum_matching(g, r)
    path = generators.long_path(50)  # a chain of 50 displacements, under the round cap
    for order, size in (("degree", 50), ("id", 49)):
        monkeypatch.setenv("MATCHFLOW_START_ORDER", order)
        r = solve(path, method)
        assert r.stats.init_cardinality == size
        assert_maximum_matching(path, r, expected=50)


@pytest.mark.parametrize("method", GPU_ONLY)
def test_gpu_start_past_the_round_cap(method):
    """Row u adjacent to columns u-1 and u, the columns shifted by 2 so that
    no row has its diagonal entry: row 1 loses its first column to row 0,
    displaces row 2 from its second, and so on, one row per round, far past
    the cap; the first-come greedy then finishes the start, and the answer
    is still maximum.  A naturally ordered grid has such chains too (its
    size comes from a CPU method: SciPy is exponential on natural grids,
    gh-26147; the König cover certifies it either way)."""
    n = 1000
    chain = sp.coo_array(sp.eye_array(n) + sp.eye_array(n, k=-1))
    shifted = sp.csr_array((chain.data, (chain.row, (chain.col + 2) % n)), shape=(n, n))
    assert not shifted.diagonal().any()
    check(shifted, method, expected=n)
    grid = generators.grid_road(300, 300, p_delete=0.1, seed=1)
    check(grid, method, expected=solve(grid, "msbfs-graft").cardinality)


def test_gpu_auto_method_by_edges_per_vertex():
    """On a GPU, "auto" runs G-PR below 4 edges per vertex, APFB above (the
    measured rule of _matching.GPU_AUTO_APFB_DEGREE); no GPU needed to pick."""
    from matchflow._matching import _auto_method
    from matchflow._validation import as_bipartite
    sparse = as_bipartite(generators.uniform_random(1000, degree=3, seed=0))
    dense = as_bipartite(generators.rmat(10, edge_factor=16, seed=0))
    assert _auto_method(sparse, "cuda") == "gpu-pr"
    assert _auto_method(dense, "cuda") == "gpu-apfb"
    assert _auto_method(as_bipartite(sp.csr_array((0, 0))), "cuda") == "gpu-pr"


@pytest.mark.parametrize("log2", [12, 16])
def test_gpu_auto_method_on_skewed_degrees(log2):
    """Below 4 edges per vertex "auto" still runs APFB on skewed degrees (many
    more empty rows than a uniform random graph of that density has), read
    from host offsets, SciPy's (CSR or CSC) or checked ones; G-PR on uniform
    random graphs, however sparse, and on a grid.  No GPU needed to pick."""
    from matchflow._matching import _auto_method, _raw_csr
    from matchflow._validation import as_bipartite
    n = 2 ** log2
    skewed = generators.power_law(n, degree=4.0, seed=log2)
    assert skewed.nnz < 4 * n
    for g in (skewed, sp.csc_array(skewed)):
        for form in (as_bipartite(g), _raw_csr(g)):
            assert _auto_method(form, "cuda") == "gpu-apfb"
    grid = sp.csr_array(sp.kron(sp.eye_array(n // 64), sp.diags_array(
        [1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(64, 64))))
    for g in (generators.uniform_random(n, degree=1.5, seed=1),
              generators.uniform_random(n, degree=3, seed=1), grid,
              generators.uniform_random(4 * n, n, degree=1.0, seed=1)):  # a tall one
        assert _auto_method(as_bipartite(g), "cuda") == "gpu-pr"
        assert _auto_method(_raw_csr(g), "cuda") == "gpu-pr"


def test_skewed_degrees_ask_for_grafting_and_the_degree_start():
    """Where `auto`'s skew test holds, the host tells the GPU methods that the
    degrees are skewed (the core then ranks the start's rows by degree, and
    gpu-apfb with GPUBFS-WR grafts); elsewhere, and to the CPU methods, not.
    No GPU needed to tell."""
    from matchflow._matching import _raw_csr, _skewed
    from matchflow._validation import as_bipartite
    skewed = generators.power_law(1 << 14, degree=4.0, seed=1)
    uniform = generators.uniform_random(1 << 14, degree=3.0, seed=1)
    for form in (as_bipartite, _raw_csr):
        for method in GPU_METHODS:
            assert _skewed(form(skewed), method)
            assert not _skewed(form(uniform), method)
        assert not _skewed(form(skewed), "msbfs-graft")


@pytest.mark.cuda
def test_device_graph_of_skewed_degrees(monkeypatch):
    """A graph in GPU memory is sampled for skew as a host one is (its sample's
    empty rows counted on the device): a power-law graph under 4 edges a row gets
    gpu-apfb from `auto`, the degree-ranked start, and grafting (from no
    start, its launches fit the count with grafting forced); a uniform
    random one gets gpu-pr and the row order."""
    cupy = pytest.importorskip("cupy")
    from types import SimpleNamespace
    monkeypatch.delenv("MATCHFLOW_START_ORDER", raising=False)
    monkeypatch.delenv("MATCHFLOW_AP_GRAFT", raising=False)

    def on_device(g, **kwargs):
        r = matchflow.maximum_matching((cupy.asarray(g.indptr), cupy.asarray(g.indices), g.shape),
                                       **kwargs)
        assert_maximum_matching(g, SimpleNamespace(
            col4row=r.col4row.get(), row4col=r.row4col.get(), cardinality=r.cardinality))
        return r

    skewed = generators.power_law(1 << 13, degree=4.0, seed=2)
    uniform = generators.uniform_random(1 << 13, degree=3.0, seed=2)
    for g, method, by_degree in ((skewed, "gpu-apfb", True), (uniform, "gpu-pr", False)):
        assert _greedy_start_size(g, True) != _greedy_start_size(g, False)
        for _ in range(GPU_REPEATS):
            r = on_device(g)
            assert r.method == method
            assert r.stats.init_cardinality == _greedy_start_size(g, by_degree)

    def other_launches(graft=None):
        if graft is not None:
            monkeypatch.setenv("MATCHFLOW_AP_GRAFT", graft)
        s = on_device(skewed, method="gpu-apfb", init="none").stats
        assert s.iterations > 1
        return s.kernel_launches - s.bfs_levels - 4 * s.iterations
    assert other_launches() == other_launches("1") != other_launches("0")


def test_gil_is_released():
    """A Python thread keeps running while another matches (CPU methods)."""
    g = generators.uniform_random(300_000, degree=3, seed=2)
    assert_gil_released(lambda: matchflow.maximum_matching(g, method="pr", device="cpu"),
                        min_seconds=0.005)

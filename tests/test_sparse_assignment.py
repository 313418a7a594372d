"""Sparse assignment and weighted transversals: against SciPy's
min_weight_full_bipartite_matching, against the dense linear_sum_assignment
with +inf for missing entries, with the dual certificate; weighted
transversals against brute force, their scalings, and splu on real matrices."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

import matchflow
from matchflow import (min_weight_full_bipartite_matching, solve_sparse_assignment,
                       weighted_transversal)

from matchflow import _core
from matchflow.io import read_graph

from conftest import GPU_REPEATS, data_dir, requires_cuda

ZERO_WARNING = "explicit zero weights are removed before matching"


def random_case(rng, max_dim=12):
    """A random sparse matrix: shape either way (empty included), integer
    weights with many ties or normal floats, every entry nonzero."""
    n_rows, n_cols = (int(d) for d in rng.integers(0, max_dim + 1, 2))
    mask = rng.random((n_rows, n_cols)) < rng.uniform(0.1, 1.0)
    if rng.random() < 0.5:
        values = rng.integers(1, int(rng.choice([3, 10, 1000])), (n_rows, n_cols))
        values *= rng.choice([-1, 1], (n_rows, n_cols))
    else:
        values = rng.normal(size=(n_rows, n_cols))
    dense = np.where(mask, values, 0)
    return sp.csr_array(dense), dense, mask


def outcome(solver, graph, maximize):
    """(row_ind, col_ind) or the ValueError message."""
    try:
        return solver(graph, maximize=maximize)
    except ValueError as exc:
        return str(exc)


def assert_valid(graph, mask, row_ind, col_ind):
    assert len(row_ind) == len(col_ind) == min(graph.shape)
    assert np.all(np.diff(row_ind) > 0)
    assert len(np.unique(col_ind)) == len(col_ind)
    assert mask[row_ind, col_ind].all()  # every pair is an edge


@pytest.mark.parametrize("block", range(10))
def test_against_scipy(block):
    """4,000 seeded cases: the same error, or a valid matching of SciPy's
    weight, with SciPy's index dtypes."""
    rng = np.random.default_rng(1000 + block)
    infeasible = 0
    for _ in range(400):
        graph, dense, mask = random_case(rng)
        maximize = bool(rng.random() < 0.3)
        expected = outcome(scipy_mwfbm, graph, maximize)
        got = outcome(min_weight_full_bipartite_matching, graph, maximize)
        if isinstance(expected, str):
            assert got == expected == "no full matching exists"
            infeasible += 1
            continue
        assert not isinstance(got, str), got
        assert [a.dtype for a in got] == [a.dtype for a in expected]
        assert_valid(graph, mask, *got)
        assert np.isclose(dense[got].sum(), dense[expected].sum(), rtol=1e-12, atol=1e-9)
    assert 0 < infeasible < 400  # both kinds were exercised


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("container", [sp.csr_array, sp.csr_matrix])
def test_formats(fmt, container):
    rng = np.random.default_rng(7)
    for _ in range(50):
        graph, dense, _ = random_case(rng)
        graph = container(graph).asformat(fmt)
        expected = outcome(scipy_mwfbm, graph, False)
        got = outcome(min_weight_full_bipartite_matching, graph, False)
        if isinstance(expected, str):
            assert got == expected
        else:
            assert np.isclose(dense[got].sum(), dense[expected].sum())


def test_against_dense_lsap():
    """The dense solver with +inf for missing entries: both raise, or the same cost."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        graph, dense, mask = random_case(rng, max_dim=15)
        cost = np.where(mask, dense, np.inf).astype(float)
        try:
            r, c = scipy_lsa(cost)
        except ValueError as exc:
            assert str(exc) == "cost matrix is infeasible"
            with pytest.raises(ValueError, match="no full matching exists"):
                solve_sparse_assignment(graph)
            continue
        result = solve_sparse_assignment(graph)
        assert np.isclose(result.cost, cost[r, c].sum())


def assert_certificate(graph, mask, dense, result, maximize):
    """Duals feasible on every stored entry, tight on the matched pairs,
    sign-constrained on the longer side, and summing to the cost (exactly
    for integer weights)."""
    rows, cols = np.nonzero(mask)
    slack = dense[rows, cols] - result.u[rows] - result.v[cols]
    if maximize:
        slack = -slack
    exact = np.issubdtype(result.u.dtype, np.integer)
    tol = 0 if exact else 1e-9
    assert slack.min(initial=0) >= -tol
    matched = dense[result.row_ind, result.col_ind] - result.u[result.row_ind] \
        - result.v[result.col_ind]
    assert np.abs(matched).max(initial=0) <= tol
    longer = result.v if graph.shape[0] <= graph.shape[1] else result.u
    free = np.ones(len(longer), bool)
    free[result.col_ind if graph.shape[0] <= graph.shape[1] else result.row_ind] = False
    assert (-longer if maximize else longer).max(initial=0) <= tol
    assert np.abs(longer[free]).max(initial=0) <= tol
    total = result.u.sum() + result.v.sum()
    assert total == result.cost if exact else np.isclose(total, result.cost)


@pytest.mark.parametrize("maximize", [False, True])
def test_duals(maximize):
    rng = np.random.default_rng(21 + maximize)
    checked = 0
    for _ in range(600):
        graph, dense, mask = random_case(rng, max_dim=14)
        try:
            result = solve_sparse_assignment(graph, maximize)
        except ValueError:
            continue
        assert_certificate(graph, mask, dense, result, maximize)
        assert result.cost == dense[result.row_ind, result.col_ind].sum() or np.isclose(
            result.cost, dense[result.row_ind, result.col_ind].sum())
        checked += 1
    assert checked > 200


def permutation_graph(rng, n, k, weights="float"):
    """n x n, k entries per row, one of them on a random permutation (so a
    full matching exists)."""
    cols = rng.integers(0, n, (n, k))
    cols[:, 0] = rng.permutation(n)
    data = rng.random(n * k) if weights == "float" else rng.integers(1, 20, n * k)
    graph = sp.csr_array((data, (np.repeat(np.arange(n), k), cols.ravel())), shape=(n, n))
    graph.sum_duplicates()
    return graph


@pytest.mark.parametrize("weights", ["float", "int"])
@pytest.mark.parametrize("shape", ["square", "wide", "tall"])
def test_larger_against_scipy(weights, shape):
    """Past the initial assignment: the searches and the bounded row reduction."""
    rng = np.random.default_rng(31)
    graph = permutation_graph(rng, 3000, 5, weights)
    if shape == "wide":
        graph = graph[:2500]
    elif shape == "tall":
        graph = graph[:, :2500]
    expected = graph[scipy_mwfbm(graph)].sum()
    result = solve_sparse_assignment(graph)
    assert np.isclose(result.cost, expected, rtol=1e-12)
    dense_mask = graph.toarray() != 0
    assert_certificate(graph, dense_mask, graph.toarray(), result, False)


@pytest.mark.parametrize("block", range(4))
def test_auction_start_against_scipy(block):
    """Square problems start from the auction's duals (sparse_auction.cpp):
    300 seeded square cases of 50-400 rows, 1-8 entries per row, float
    weights, integer weights with ties and integers of a wide range, each
    checked against SciPy's cost and by its dual certificate, with the
    auction seen to run (and to give up on the infeasible ones)."""
    rng = np.random.default_rng(4100 + block)
    ran = 0
    for case in range(75):
        n = int(rng.integers(50, 401))
        graph = square_case(rng, n, kind=case % 3, p_full=0.8)
        expected = outcome(scipy_mwfbm, graph, False)
        if isinstance(expected, str):
            with pytest.raises(ValueError, match="no full matching exists"):
                solve_sparse_assignment(graph)
            continue
        result = solve_sparse_assignment(graph)
        want = graph[expected].sum()
        assert np.isclose(result.cost, want, rtol=1e-12), (case, result.cost, want)
        dense = graph.toarray()
        assert_certificate(graph, dense != 0, dense, result, False)
        stats = _core.lsap_sparse(graph.indptr.astype(np.int64), graph.indices.astype(np.int32),
                                  graph.data, n, 0, -1)[3]
        ran += stats["auction_phases"] > 0
    assert ran > 20


def square_case(rng, n, kind=None, p_full=0.9):
    """n x n, 1-8 entries per row, a full matching with probability p_full;
    float weights (kind 0), integers with many ties (1), or integers of a
    wide range (2); kind None: drawn."""
    cols = rng.integers(0, n, (n, int(rng.integers(1, 9))))
    if rng.random() < p_full:
        cols[:, 0] = rng.permutation(n)
    kind = int(rng.integers(0, 3)) if kind is None else kind
    data = (rng.random(cols.size) if kind == 0 else
            rng.integers(1, 4, cols.size) if kind == 1 else
            rng.integers(-10**12, 10**12, cols.size))
    graph = sp.csr_array((data, (np.repeat(np.arange(n), cols.shape[1]), cols.ravel())),
                         shape=(n, n))
    graph.sum_duplicates()
    graph.eliminate_zeros()
    return graph


def assert_as_scipy(graph, threads=None, method="auto"):
    """Both raise, or the same cost, with matchflow's dual certificate."""
    expected = outcome(scipy_mwfbm, graph, False)
    if isinstance(expected, str):
        with pytest.raises(ValueError, match="no full matching exists"):
            solve_sparse_assignment(graph, threads=threads, method=method)
        return
    result = solve_sparse_assignment(graph, threads=threads, method=method)
    assert result.method == method or method == "auto"
    assert np.isclose(result.cost, graph[expected].sum(), rtol=1e-12)
    dense = graph.toarray()
    assert_certificate(graph, dense != 0, dense, result, False)


@pytest.mark.parametrize("block", range(4))
def test_many_square_cases_against_scipy(block):
    """3000 seeded square cases of 1-40 rows (the auction's Gauss-Seidel
    form, single entries, ties) and 40 of 256-2000 rows (its Jacobi rounds,
    parallel from 1024 free rows), each against SciPy with its duals."""
    rng = np.random.default_rng(5200 + block)
    for _ in range(750):
        assert_as_scipy(square_case(rng, int(rng.integers(1, 41))))
    for _ in range(10):
        assert_as_scipy(square_case(rng, int(rng.integers(256, 2001))), threads=2)


@requires_cuda
@pytest.mark.parametrize("block", range(4))
def test_gpu_auction_start_against_scipy(block):
    """gpu-sparse-sap (the auction start on the GPU, sparse_auction.cu): 600
    seeded square cases of 1-40 rows and 20 of 256-2000 rows (ties, single
    entries, infeasible ones), each solved GPU_REPEATS times against SciPy
    with the dual certificate, and the GPU's auction seen to run."""
    rng = np.random.default_rng(6300 + block)
    graphs = [square_case(rng, int(rng.integers(1, 41))) for _ in range(150)]
    graphs += [square_case(rng, int(rng.integers(256, 2001))) for _ in range(5)]
    ran = 0
    for graph in graphs:
        for _ in range(GPU_REPEATS):
            assert_as_scipy(graph, method="gpu-sparse-sap")
        if graph.nnz and np.ptp(graph.data) > 0 and not isinstance(
                outcome(scipy_mwfbm, graph, False), str):
            stats = _core.lsap_sparse(graph.indptr.astype(np.int64),
                                      graph.indices.astype(np.int32), graph.data,
                                      graph.shape[1], 0, 0)[3]
            ran += stats["auction_phases"] > 0
    assert ran > 100


def assert_sparse_certificate(graph, result, rtol=1e-9):
    """u_i + v_j <= w_ij on every stored entry, equality on the assigned
    pairs, v <= 0 (no dense copy: for large graphs)."""
    coo = graph.tocoo()
    scale = max(1.0, float(np.abs(coo.data).max()))
    slack = coo.data - result.u[coo.row] - result.v[coo.col]
    assert slack.min() >= -rtol * scale
    r, k = result.row_ind, result.col_ind
    tight = graph[r, k] - result.u[r] - result.v[k]
    assert np.abs(tight).max() <= rtol * scale
    assert result.v.max() <= 0


@requires_cuda
@pytest.mark.parametrize("weights", ["float", "int"])
def test_gpu_auction_start_large(weights):
    """2^17 rows with 5 entries: the GPU start's cost equals the CPU
    solver's, certified, on GPU_REPEATS runs; device="auto" picks it."""
    rng = np.random.default_rng(88)
    graph = permutation_graph(rng, 1 << 17, 5, weights)
    cpu = solve_sparse_assignment(graph, method="sparse-sap")
    for _ in range(GPU_REPEATS):
        gpu = solve_sparse_assignment(graph, method="gpu-sparse-sap")
        assert gpu.cost == cpu.cost if weights == "int" else np.isclose(gpu.cost, cpu.cost,
                                                                         rtol=1e-12)
        assert gpu.device.startswith("cuda")
        assert_sparse_certificate(graph, gpu)
    assert solve_sparse_assignment(graph).method == "gpu-sparse-sap"
    assert solve_sparse_assignment(graph, device="cpu").method == "sparse-sap"


def test_same_answer_for_any_thread_count():
    """The auction's Jacobi rounds resolve every column by the lowest bid and
    then the lowest row, so the duals, and the whole solve, do not depend on
    the thread count: the same assignment and duals on 1, 2 and 3 threads."""
    rng = np.random.default_rng(77)
    cases = [permutation_graph(rng, 20000, 5), permutation_graph(rng, 20000, 8, "int")]
    cases += [square_case(rng, 5000) for _ in range(4)]
    for graph in cases:
        try:
            runs = [solve_sparse_assignment(graph, threads=t) for t in (1, 2, 3)]
        except ValueError:
            continue
        for r in runs[1:]:
            assert r.cost == runs[0].cost
            np.testing.assert_array_equal(r.col_ind, runs[0].col_ind)
            np.testing.assert_array_equal(r.u, runs[0].u)
            np.testing.assert_array_equal(r.v, runs[0].v)
        if graph.shape[0] <= 5000:  # dense enough to check densely
            dense = graph.toarray()
            assert_certificate(graph, dense != 0, dense, runs[0], False)


def test_integer_weights_exact():
    """Weights float64 cannot tell apart: the int64 solve still can."""
    big = 2 ** 53
    graph = sp.csr_array(np.array([[big + 1, big], [big, big + 2]], dtype=np.int64))
    result = solve_sparse_assignment(graph)
    assert result.cost == 2 * big and result.col_ind.tolist() == [1, 0]
    assert result.u.dtype == np.int64


def test_weights_near_float64_max():
    """Weights near 1e308: path sums would overflow in the core, so it
    solves them scaled by a power of two; the same optimum as SciPy, finite
    duals, and the cost summed exactly (the 3 x 3 case: -1e308)."""
    g = sp.csr_array(np.array([[1e308, -1e308, 5.0], [-1e308, 1e308, 2.0], [3.0, 1.0, 1e308]]))
    r = solve_sparse_assignment(g)
    assert r.cost == -1e308 and r.col_ind.tolist() == [2, 0, 1]
    assert np.isfinite(r.u).all() and np.isfinite(r.v).all()
    rng = np.random.default_rng(12)
    for _ in range(20):
        graph = square_case(rng, int(rng.integers(2, 60)), kind=0)
        graph.data = rng.normal(size=graph.nnz) * 1e305  # sums of < 60 stay finite
        expected = outcome(scipy_mwfbm, graph, False)
        if isinstance(expected, str):
            continue
        result = solve_sparse_assignment(graph)
        assert np.isfinite(result.u).all() and np.isfinite(result.v).all()
        assert np.isclose(result.cost, math.fsum(graph[expected]), rtol=1e-9)


def test_overflow_falls_back_to_float64():
    graph = sp.csr_array(np.array([[2 ** 62, 1], [1, 2 ** 62]], dtype=np.int64))
    assert min_weight_full_bipartite_matching(graph)[1].tolist() == [1, 0]


def test_explicit_zeros_and_infinities_removed_as_scipy():
    data = np.array([0.0, 1.0, 2.0, np.inf, 3.0])
    graph = sp.csr_array((data, [0, 1, 0, 1, 1], [0, 2, 4, 5]), shape=(3, 2))
    for solver in (scipy_mwfbm, min_weight_full_bipartite_matching):
        with pytest.warns(UserWarning, match=ZERO_WARNING):
            row_ind, col_ind = solver(graph)
        assert (row_ind.tolist(), col_ind.tolist()) == ([0, 1], [1, 0])
    # an infinite weight is no edge: without it no full matching exists
    graph = sp.csr_array(np.array([[np.inf, 1.0], [0.0, 2.0]]))
    for solver in (scipy_mwfbm, min_weight_full_bipartite_matching):
        with pytest.raises(ValueError, match="no full matching exists"):
            solver(graph)
        with pytest.raises(ValueError, match="no full matching exists"):
            solver(-graph, maximize=True)
    # maximize: -inf entries are the missing ones
    graph = sp.csr_array(np.array([[-np.inf, 2.0], [3.0, 4.0]]))
    assert min_weight_full_bipartite_matching(graph, maximize=True)[1].tolist() == [1, 0]


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_invalid_weights(bad):
    graph = sp.csr_array(np.array([[bad, 2.0], [3.0, 4.0]]))
    with pytest.raises(ValueError, match="matrix contains invalid numeric entries"):
        min_weight_full_bipartite_matching(graph)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3)])
def test_empty(shape):
    graph = sp.csr_array(shape)
    got = min_weight_full_bipartite_matching(graph)
    expected = scipy_mwfbm(graph)
    assert [a.dtype for a in got] == [a.dtype for a in expected]
    assert all(a.size == 0 for a in got)


def test_errors_as_scipy():
    for graph, exc in ((np.eye(2), TypeError), (sp.lil_array(np.eye(2)), TypeError),
                       (sp.bsr_array(np.eye(2)), TypeError),
                       (sp.csr_array(np.array([[1.0, 0], [1, 0]])), ValueError)):
        with pytest.raises(exc) as theirs:
            scipy_mwfbm(graph)
        with pytest.raises(exc) as ours:
            min_weight_full_bipartite_matching(graph)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="method must be one of"):
        min_weight_full_bipartite_matching(sp.eye_array(2, format="csr"), method="lapjv")
    with pytest.raises(ValueError, match="runs on a GPU"):
        min_weight_full_bipartite_matching(sp.eye_array(2, format="csr"),
                                           method="gpu-sparse-sap", device="cpu")


@pytest.mark.skipif(matchflow.cuda_available(), reason="needs a machine without CUDA")
def test_gpu_method_without_cuda():
    """Asked for explicitly, the GPU method raises; "auto" stays on the CPU."""
    graph = sp.eye_array(2, format="csr")
    with pytest.raises(RuntimeError, match="CUDA"):
        solve_sparse_assignment(graph, method="gpu-sparse-sap")
    with pytest.raises(RuntimeError, match="CUDA"):
        solve_sparse_assignment(graph, device="cuda")
    assert solve_sparse_assignment(graph).method == "sparse-sap"


def test_complex_warns_as_scipy():
    graph = sp.csr_array(np.array([[1 + 1j, 2], [3, 4]]))
    with pytest.warns(np.exceptions.ComplexWarning):
        assert min_weight_full_bipartite_matching(graph)[1].tolist() == [1, 0]


def test_duplicates_are_summed():
    # (0, 0): 5 - 4 = 1, so the cheaper matching is the diagonal (1 + 1)
    graph = sp.csr_array((np.array([5.0, -4.0, 3.0, 3.0, 1.0]),
                          np.array([0, 0, 1, 0, 1]), np.array([0, 3, 5])), shape=(2, 2))
    assert solve_sparse_assignment(graph).cost == 2.0


def test_gil_released():
    from conftest import assert_gil_released

    # 0.2 s on an idle 2-core dev host (20000 rows took 0.045 s, under the 0.05 s the
    # check needs to tell)
    graph = permutation_graph(np.random.default_rng(3), 60000, 10)
    assert_gil_released(lambda: solve_sparse_assignment(graph), 0.05)


# ---- weighted transversal ----------------------------------------------------------

def brute_force(dense, score):
    """The best permutation under score(magnitudes on the diagonal)."""
    n = dense.shape[0]
    best, best_q = -math.inf, None
    for q in itertools.permutations(range(n)):
        diag = np.abs(dense[np.arange(n), q])
        if (diag == 0).any():
            continue
        s = score(diag)
        if s > best:
            best, best_q = s, q
    return best, best_q


SCORES = {"product": lambda d: float(np.log(d).sum()), "bottleneck": lambda d: float(d.min()),
          "sum": lambda d: float(d.sum())}


def random_square(rng, n):
    mask = rng.random((n, n)) < rng.uniform(0.3, 1.0)
    values = rng.lognormal(0, 3, (n, n)) * rng.choice([-1, 1], (n, n))
    return np.where(mask, values, 0.0)


@pytest.mark.parametrize("objective", list(SCORES))
def test_weighted_transversal_brute_force(objective):
    rng = np.random.default_rng(41)
    for _ in range(150):
        n = int(rng.integers(1, 7))
        dense = random_square(rng, n)
        best, _ = brute_force(dense, SCORES[objective])
        if best == -math.inf:
            with pytest.raises(ValueError, match="structurally singular"):
                weighted_transversal(sp.csr_array(dense), objective)
            continue
        t = weighted_transversal(sp.coo_array(dense), objective)
        assert sorted(t.q.tolist()) == list(range(n))
        diag = np.abs(dense[np.arange(n), t.q])
        assert np.isclose(SCORES[objective](diag), best, rtol=1e-12, atol=1e-12)
        if objective != "product":
            assert t.row_scale is None and t.col_scale is None


def assert_scaled(A, t, tol=1e-10):
    S = (sp.diags_array(t.row_scale) @ sp.csr_array(A) @ sp.diags_array(t.col_scale)).tocsc()
    S = S[:, t.q]
    assert np.allclose(np.abs(S.diagonal()), 1, rtol=tol)
    assert np.abs(S.data).max(initial=0) <= 1 + tol


def test_weighted_transversal_scaling():
    rng = np.random.default_rng(43)
    for n in (1, 5, 40, 300):
        dense = random_square(rng, n) + np.diag(rng.lognormal(0, 3, n))
        assert_scaled(dense, weighted_transversal(sp.csr_array(dense)))
    assert weighted_transversal(sp.eye_array(3), scale=False).row_scale is None


def test_weighted_transversal_wide_scalings():
    """Upper bidiagonal, 1 on the diagonal and e^10 above: the only
    transversal is the diagonal, and its duals must grow by 10 per row, a
    spread of 1,000 in log scale that only fits exp's range once centred
    (an overflow would raise here: warnings are errors)."""
    n = 100
    A = sp.diags_array([np.ones(n), np.full(n - 1, np.exp(10.0))], offsets=[0, 1]).tocsr()
    t = weighted_transversal(A)
    assert t.q.tolist() == list(range(n))
    assert np.log(t.row_scale).max() - np.log(t.row_scale).min() > 900
    assert_scaled(A, t, tol=1e-9)


def test_weighted_transversal_large_against_scipy():
    """Past the auction's Jacobi rounds: the product and sum objectives
    reach SciPy's optimum on the log and plain magnitudes, the scalings hold,
    and 1 and 2 threads give the same permutation and scalings."""
    rng = np.random.default_rng(47)
    A = permutation_graph(rng, 4000, 6)
    A.data = rng.lognormal(0, 4, A.nnz)
    n = A.shape[0]
    for objective, w in (("product", np.log(A.data)), ("sum", A.data)):
        W = sp.csr_array((w - w.min() + 1, A.indices, A.indptr), shape=A.shape)
        want = W[scipy_mwfbm(W, maximize=True)].sum()
        runs = [weighted_transversal(A, objective, threads=t) for t in (1, 2)]
        np.testing.assert_array_equal(runs[0].q, runs[1].q)
        assert np.isclose(W[np.arange(n), runs[0].q].sum(), want, rtol=1e-12)
    t1, t2 = (weighted_transversal(A, threads=t) for t in (1, 2))
    np.testing.assert_array_equal(t1.row_scale, t2.row_scale)
    np.testing.assert_array_equal(t1.col_scale, t2.col_scale)
    assert_scaled(A, t1)


def test_weighted_transversal_inputs():
    """Dense and complex input: magnitudes count; the same answer as sparse."""
    dense = np.array([[1e-3, 4.0, 0.0], [2.0, 0.5, 1.0], [0.0, 3.0, 1e-2]])
    t = weighted_transversal(dense)
    assert t.q.tolist() == weighted_transversal(sp.csc_array(dense)).q.tolist()
    t_complex = weighted_transversal(sp.csr_array(dense * 1j))
    assert t_complex.q.tolist() == t.q.tolist()
    assert np.allclose(t_complex.row_scale, t.row_scale)


def test_weighted_transversal_errors():
    with pytest.raises(ValueError, match="square"):
        weighted_transversal(sp.csr_array((2, 3)))
    with pytest.raises(ValueError, match="structurally singular"):
        weighted_transversal(sp.csr_array(np.array([[1.0, 2.0], [0.0, 0.0]])))
    with pytest.raises(ValueError, match="objective must be one of"):
        weighted_transversal(sp.eye_array(2), objective="max")
    with pytest.raises(ValueError, match="invalid numeric entries"):
        weighted_transversal(sp.csr_array(np.array([[np.nan]])))


def test_weighted_transversal_through_explicit_zeros_only():
    """A pattern whose only transversal uses stored zeros: the error says
    so (zeros cannot be scaled to 1), not that the pattern is singular."""
    A = sp.csr_array((np.array([1.0, 2.0, 0.0]), np.array([0, 0, 1]), np.array([0, 1, 3])),
                     shape=(2, 2))                      # [[1, .], [2, 0 (stored)]]
    for objective in ("product", "bottleneck", "sum"):
        with pytest.raises(ValueError, match="only through some of its 1 explicit zero"):
            weighted_transversal(A, objective)
    B = sp.csr_array((np.array([1.0, 0.0]), np.array([0, 0]), np.array([0, 1, 2])),
                     shape=(2, 2))                      # column 1 empty: truly singular
    with pytest.raises(ValueError, match="structurally singular"):
        weighted_transversal(B)


def test_weighted_transversal_zenios():
    """HB/zenios: 25,877 of its 27,191 stored entries (symmetric, expanded)
    are explicit zeros; its nonzeros have no transversal, its pattern has."""
    from conftest import data_dir
    root = data_dir()
    path = root / "suitesparse" / "zenios.mtx.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip("suitesparse/zenios.mtx.gz not in the data folder")
    from matchflow.io import read_matrix
    A = sp.csr_array(read_matrix(path))
    assert np.count_nonzero(A.data == 0) > 0
    with pytest.raises(ValueError, match="explicit zero entries"):
        weighted_transversal(A)


def scipy_bottleneck(A) -> float:
    """The bottleneck value by the plain search: the largest magnitude t
    whose pattern {|a_ij| >= t} has a perfect matching by SciPy's
    maximum_bipartite_matching (-inf when none has: structurally singular)."""
    from scipy.sparse.csgraph import maximum_bipartite_matching

    m = sp.csr_array(abs(sp.csr_array(A)))
    m.eliminate_zeros()
    n = m.shape[0]

    def perfect(t):
        keep = sp.csr_array(m >= t, dtype=np.int8)
        return (maximum_bipartite_matching(keep, perm_type="column") >= 0).all()

    levels = np.unique(m.data)
    if n == 0:
        return math.inf
    if levels.size == 0 or not perfect(levels[0]):
        return -math.inf
    lo, hi = 0, levels.size - 1  # levels[lo] works; find the last that does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if perfect(levels[mid]) else (lo, mid - 1)
    return float(levels[lo])


def assert_bottleneck(A, want):
    """weighted_transversal(A, "bottleneck") is a transversal of nonzeros with
    smallest magnitude `want`, or the singularity error when want is -inf."""
    A = sp.csr_array(A)
    if want == -math.inf:
        with pytest.raises(ValueError, match="structurally singular"):
            weighted_transversal(A, "bottleneck")
        return
    t = weighted_transversal(A, "bottleneck")
    n = A.shape[0]
    assert sorted(t.q.tolist()) == list(range(n))
    assert t.row_scale is None and t.col_scale is None
    if n == 0:
        return
    diag = np.abs(A[np.arange(n), t.q]).astype(float)
    assert (diag > 0).all()
    assert diag.min() == want


def test_bottleneck_against_scipy_search():
    """Thousands of small matrices, ties (a few integer magnitudes), empty
    rows and columns and structurally singular ones among them: the same
    value as the plain search (and as brute force up to 5 x 5), the same
    error when there is none."""
    rng = np.random.default_rng(53)
    singular = 0
    for case in range(3000):
        n = int(rng.integers(0, 13))
        density = rng.uniform(0.05, 1.0)
        mask = rng.random((n, n)) < density
        if case % 2:
            values = rng.integers(1, 5, (n, n)).astype(float)  # many ties
        else:
            values = rng.lognormal(0, 3, (n, n))
        dense = np.where(mask, values * rng.choice([-1, 1], (n, n)), 0.0)
        want = scipy_bottleneck(dense)
        if 0 < n <= 5:
            assert want == brute_force(dense, SCORES["bottleneck"])[0]
        singular += want == -math.inf
        assert_bottleneck(dense, want)
    assert 300 < singular < 2700  # both kinds well represented


def test_bottleneck_large_random():
    """Past the first threshold: a weak row forces the search below the
    rows' and columns' largest magnitudes, over many tests."""
    rng = np.random.default_rng(59)
    for n in (200, 3000):
        A = permutation_graph(rng, n, 4)
        A.data = rng.lognormal(0, 2, A.nnz)
        A.data[A.indptr[0]:A.indptr[1]] *= 1e-3  # row 0: weak everywhere
        assert_bottleneck(A, scipy_bottleneck(A))
        A.data = rng.integers(1, 20, A.nnz).astype(float)
        assert_bottleneck(A, scipy_bottleneck(A))


def test_bottleneck_hidden_permutation():
    """Large entries on a random permutation among small ones: a first
    matching of the whole pattern holds many small entries, so the first
    raise frees many rows at once (the push-relabel repair, not the
    depth-first one); the answer is the permutation's smallest entry or
    better."""
    rng = np.random.default_rng(61)
    for n, k in ((3000, 4), (500, 8)):
        A = permutation_graph(rng, n, k)
        A.data = rng.uniform(0.1, 1.0, A.nnz)
        strong = rng.permutation(n)
        A = sp.csr_array(A + sp.csr_array((rng.uniform(10, 20, n), (np.arange(n), strong)),
                                          shape=(n, n)))
        want = scipy_bottleneck(A)
        assert want >= np.abs(A[np.arange(n), strong]).min()
        assert_bottleneck(A, want)


def test_weighted_transversal_leaves_input_alone():
    """Explicit zeros and duplicates, in CSR: the caller's arrays are
    unchanged (magnitudes are taken on copies)."""
    A = sp.csr_array((np.array([-2.0, 0.0, 3.0, 1.0, 1.0]), np.array([0, 1, 1, 0, 0]),
                      np.array([0, 2, 5])), shape=(2, 2))
    before = [x.copy() for x in (A.data, A.indices, A.indptr)]
    for objective in SCORES:
        weighted_transversal(A, objective)
    for x, y in zip(before, (A.data, A.indices, A.indptr)):
        np.testing.assert_array_equal(x, y)
    # int8's -128 has magnitude 128, not abs()'s overflowed -128
    B = np.array([[-128, 1], [1, -128]], dtype=np.int8)
    for objective in SCORES:
        assert weighted_transversal(B, objective).q.tolist() == [0, 1]


# Square matrices of ../shared/data (some structurally singular).
BOTTLENECK_MATRICES = ["bayer10", "bcsstk16", "arrow", "Pd", "cryg2500", "west0067",
                       "west0479", "rajat01", "impcol_a", "olm1000", "gent113", "mbeacxc"]


@pytest.mark.parametrize("name", BOTTLENECK_MATRICES)
def test_bottleneck_real_matrices(name):
    A = read_matrix(name)
    if A.shape[0] != A.shape[1]:
        pytest.fail(f"{name} is not square")
    A = A.tocsr()
    assert_bottleneck(A, scipy_bottleneck(A))


# ---- the worked example: MC64-style preprocessing before splu --------------------

# Square, structurally nonsingular, real unsymmetric matrices of ../shared/data.
SPLU_MATRICES = ["west0067", "west0479", "bayer10", "impcol_a", "cryg2500", "olm1000"]


def read_matrix(name):
    root = data_dir()
    paths = sorted(root.glob(f"**/{name}.mtx*")) if root else []
    if not paths:
        pytest.skip(f"{name} not in the data folder")
    return sp.csc_array(read_graph(paths[0]))


def backward_error(A, x, b):
    """Normwise backward error ||Ax - b|| / (||A|| ||x|| + ||b||), max norms."""
    if x is None:
        return math.inf
    return np.abs(A @ x - b).max() / (abs(A).sum(axis=1).max() * np.abs(x).max()
                                      + np.abs(b).max())


def splu_solve(A, b):
    """SuperLU with static pivoting (diagonal pivots preferred, as with
    LargeDiag_MC64); None when it fails."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu = scipy.sparse.linalg.splu(sp.csc_array(A), permc_spec="MMD_AT_PLUS_A",
                                          diag_pivot_thresh=0.0)
            x = lu.solve(b)
    except RuntimeError:
        return None
    return x if np.isfinite(x).all() else None


@pytest.mark.parametrize("name", SPLU_MATRICES)
def test_splu_after_weighted_transversal(name):
    A = read_matrix(name)
    n = A.shape[0]
    b = A @ np.ones(n)
    raw = backward_error(A, splu_solve(A, b), b)
    t = weighted_transversal(A)
    B = (sp.diags_array(t.row_scale) @ A @ sp.diags_array(t.col_scale)).tocsc()[:, t.q]
    y = splu_solve(B, t.row_scale * b)
    assert y is not None
    z = np.empty(n)
    z[t.q] = y
    pre = backward_error(A, t.col_scale * z, b)
    rounding = 100 * n * np.finfo(float).eps
    assert pre <= max(raw, rounding)  # as good, or at the level of rounding
    if name == "west0067":  # zeros on its diagonal: static pivoting on it loses digits
        # (1.2e-15 with the auction-started solver's optimal transversal, 4.6e-16
        # with an earlier one of the same product: both at the rounding level)
        assert raw > 1e-10 and pre < 1e-14
    assert_scaled(A, t)

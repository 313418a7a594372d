"""gpu-auction (epsilon-scaling auction, exact shortest-path finish) against
SciPy, with the dual certificate; and int32 costs passed to the core as they
are.  tests/test_lsap.py runs its whole suite on gpu-auction too (it is in
GPU_METHODS); these add sizes where the auction's phases matter, schedules
that leave most rows to the exact finish, and the int32 route."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow
from matchflow import linear_sum_assignment, solve_assignment
from matchflow._lsap import _as_cost_array

from oracles import assert_certificate
from test_lsap import assert_same_optimum, solve

needs_gpu = pytest.mark.skipif(not matchflow.cuda_available(), reason="no usable CUDA device")
gpu = [pytest.mark.cuda, needs_gpu]
METHOD = "gpu-auction"


def family(seed: int):
    """A seeded float32 / float64 / integer / tied / forbidden / rectangular instance."""
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(50, 400))
    kind = seed % 8
    shape = (n, int(rng.integers(n + 1, 2 * n))) if kind == 7 else (n, n)
    if kind == 0:
        return rng.random(shape)
    if kind == 1:
        return rng.random(shape).astype(np.float32)
    if kind == 2:
        return rng.integers(0, 100 * n, shape)                  # few ties
    if kind == 3:
        return rng.integers(0, max(2, n // 10), shape)          # many ties
    if kind == 4:
        return rng.integers(-10**6, 10**6, shape, dtype=np.int32)
    if kind == 5:  # forbidden entries, a feasible diagonal kept
        c = rng.random(shape) * 1000
        c[rng.random(shape) < 0.7] = np.inf
        c[np.arange(n), rng.permutation(n)] = rng.random(n) * 1000
        return c
    if kind == 6:  # geometric, large scale
        a, b = rng.random((n, 2)), rng.random((n, 2))
        return 1e6 * np.hypot(*(a[:, None, :] - b[None, :, :]).transpose(2, 0, 1))
    return rng.random(shape)


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("maximize", [False, True])
def test_against_scipy(seed, maximize):
    c = family(seed)
    if maximize:  # forbidden pairs are -inf when maximising
        c = np.where(np.isinf(c), -np.inf, c)
    result = solve(c, METHOD, maximize)
    assert_same_optimum(c, result, maximize)
    assert_certificate(c, result, maximize)
    st = result.stats
    assert result.method == METHOD
    assert len(st.paths_per_iteration) == st.iterations == st.augmenting_paths
    assert (st.paths_per_iteration == 1).all()
    if c.shape[0] == c.shape[1]:
        assert st.auction_phases >= 1 and st.auction_bids >= c.shape[0]
    else:  # rectangular: no auction, the augmenting row reduction from v = 0
        assert st.auction_phases == 0


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("schedule", [
    "8,1,1,0,0",     # a cap of n bids per phase, no row reduction: the searches do the rest
    "2,1e-6,4096,0",  # coarse final eps, no row reduction
    "16,100,4096,1000",
    "3,1,1024,64,1000",  # phases end at once (n <= 1000 free rows): all left to the exact steps
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_schedules_leave_exact_answers(schedule, dtype, monkeypatch):
    """Whatever the auction leaves (a capped phase, a coarse eps), the exact
    finish reaches the optimum with a certificate."""
    monkeypatch.setenv("MATCHFLOW_GPU_AUCTION", schedule)
    rng = np.random.default_rng(len(schedule))
    for n in (1, 2, 37, 300):
        c = (rng.random((n, n)) * 1000).astype(dtype)
        result = solve(c, METHOD)
        assert_same_optimum(c, result)
        assert_certificate(c, result)
        if schedule == "8,1,1,0,0" and n == 300:  # ~110 rows lose their first column
            assert result.stats.auction_phases == 1  # capped: no later phase


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("n", [1000, 1500])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_uniform(n, dtype):
    c = np.random.default_rng(n).random((n, n)).astype(dtype)
    result = solve(c, METHOD)
    assert_same_optimum(c, result)
    assert_certificate(c, result)


@pytest.mark.cuda
@needs_gpu
def test_ties_and_structure():
    n = 200
    rng = np.random.default_rng(5)
    cases = [np.zeros((n, n)), np.ones((n, n), dtype=np.float32),
             np.add.outer(np.arange(n), np.arange(n)).astype(float),
             rng.integers(0, 3, (n, n)), 1 - np.eye(n, dtype=np.int32),
             np.full((n, n), 1e300), np.triu(np.full((n, n), np.inf), 1) + 1]
    for c in cases:
        for maximize in (False, True):
            if maximize and np.isinf(c).any():
                c = np.where(np.isinf(c), -np.inf, c)
            result = solve(c, METHOD, maximize)
            assert_same_optimum(c, result, maximize)
            assert_certificate(c, result, maximize)


@pytest.mark.cuda
@needs_gpu
def test_integers_beyond_float64_go_to_the_exact_int64_solve():
    rng = np.random.default_rng(9)
    c = rng.integers(0, 2**52, (60, 60), dtype=np.int64)  # 60 * 2^52 > 2^50, < 2^62
    result = solve(c, METHOD)
    assert result.u.dtype == np.int64
    assert result.cost <= int(c[scipy_lsa(c)].sum())  # SciPy rounds these to float64
    assert_certificate(c, result)  # exact: integer duals, tolerance 0


@pytest.mark.cuda
@needs_gpu
def test_infeasible_raises():
    c = np.full((5, 5), np.inf)
    c[:, 0] = 1
    with pytest.raises(ValueError, match="^cost matrix is infeasible$"):
        solve_assignment(c, method=METHOD, device="cuda")


# ---- int32 costs reach the core as they are --------------------------------------

def test_int32_is_not_widened_on_the_host():
    c = np.random.default_rng(0).integers(0, 100, (30, 40), dtype=np.int32)
    arr = _as_cost_array(c)
    assert arr.dtype == np.int32 and np.shares_memory(arr, c)
    assert _as_cost_array(c.astype(np.int16)).dtype == np.int32
    assert _as_cost_array(c.astype(bool)).dtype == np.int32
    assert _as_cost_array(c.astype(np.uint32)).dtype == np.int64


@pytest.mark.parametrize("method", ["omp-tree", pytest.param("gpu-tree", marks=gpu),
                                    pytest.param("gpu-classic", marks=gpu),
                                    pytest.param(METHOD, marks=gpu)])
@pytest.mark.parametrize("maximize", [False, True])
def test_int32_costs_exact(method, maximize):
    rng = np.random.default_rng(3)
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    for shape in ((40, 40), (30, 55), (55, 30)):
        c = rng.integers(lo, hi, shape, dtype=np.int32, endpoint=True)
        c[0, 0] = lo  # negated under maximize: needs int64
        result = solve(c, method, maximize)
        assert result.u.dtype == result.v.dtype == np.int64
        ref = c.astype(np.int64)[scipy_lsa(c.astype(np.float64), maximize)].sum()
        assert result.cost == int(ref)
        assert_certificate(c, result, maximize)
        if method.startswith("gpu") and not maximize:  # -(-2**31) needs int64
            assert result.stats.narrow_costs
        r, k = linear_sum_assignment(c, maximize, method=method,
                                     device="cuda" if method.startswith("gpu") else "cpu")
        assert int(c.astype(np.int64)[r, k].sum()) == result.cost

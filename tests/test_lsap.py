"""Linear sum assignment: every method against SciPy, with the dual certificate."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse import random_array

import matchflow
from matchflow import linear_sum_assignment, solve_assignment
from matchflow._lsap import CPU_METHODS, GPU_METHODS

from conftest import GPU_REPEATS, assert_gil_released
from oracles import assert_certificate

_no_cuda = pytest.mark.skipif(not matchflow.cuda_available(), reason="no usable CUDA device")
METHODS = [pytest.param(m, id=m) for m in CPU_METHODS] + [
    pytest.param(m, id=m, marks=[pytest.mark.cuda, _no_cuda]) for m in GPU_METHODS]


def device_of(method: str) -> str:
    return "cuda" if method.startswith("gpu") else "cpu"


def solve(c, method, maximize=False, **kwargs):
    """Solve; GPU methods GPU_REPEATS times, every run a valid assignment of
    the same cost (the caller certifies the last one, hence all)."""
    runs = GPU_REPEATS if method.startswith("gpu") else 1
    results = [solve_assignment(c, maximize, method=method, device=device_of(method), **kwargs)
               for _ in range(runs)]
    for r in results:
        assert len(np.unique(r.row_ind)) == len(r.row_ind) == len(np.unique(r.col_ind))
        assert r.cost == results[-1].cost
    return results[-1]


# ---- oracles -------------------------------------------------------------------

def scipy_cost(c, maximize=False):
    """SciPy's optimum, or the ValueError it raises."""
    c = np.asarray(c)
    r, k = scipy_lsa(c, maximize)
    return c[r, k].sum()


def assert_same_optimum(c, result, maximize=False):
    ref = scipy_cost(c, maximize)
    got = np.asarray(c)[result.row_ind, result.col_ind].sum()
    if np.asarray(c).dtype.kind in "biu":
        assert int(got) == int(ref) == result.cost
    else:
        assert got == pytest.approx(ref, rel=1e-6 if np.asarray(c).dtype == np.float32 else 1e-12,
                                    abs=1e-9)
        assert result.cost == pytest.approx(float(ref), rel=1e-6, abs=1e-9)


def assert_solved(c, method, maximize=False):
    """solve(), then SciPy's optimum and the dual certificate; the result."""
    result = solve(c, method, maximize)
    assert_same_optimum(c, result, maximize)
    assert_certificate(np.asarray(c), result, maximize)
    return result


# ---- random families --------------------------------------------------------------

def random_costs(seed: int):
    """A seeded instance of one of several families; returns (c, family)."""
    rng = np.random.default_rng(seed)
    family = seed % 9
    n = int(rng.integers(1, 90))
    shape = [(n, n), (n, int(rng.integers(n, 130))), (int(rng.integers(n, 130)), n)][seed % 3]
    if family == 0:  # Date & Nagi: [0, n/10]
        c = rng.integers(0, max(1, n // 10) + 1, shape)
    elif family == 1:  # [0, n]
        c = rng.integers(0, n + 1, shape)
    elif family == 2:  # [0, 10n]
        c = rng.integers(0, 10 * n + 1, shape)
    elif family == 3:  # uniform floats
        c = rng.random(shape)
    elif family == 4:  # very many ties
        c = rng.integers(0, 3, shape).astype(np.float64)
    elif family == 5:  # negative and positive integers
        c = rng.integers(-10**6, 10**6, shape)
    elif family == 6:  # forbidden entries, usually still feasible
        c = rng.random(shape) * 100
        c[rng.random(shape) < rng.uniform(0.2, 0.8)] = np.inf
    elif family == 7:  # float32
        c = rng.random(shape).astype(np.float32)
    else:  # geometric (Euclidean distances), large scale
        a, b = rng.random((shape[0], 2)), rng.random((shape[1], 2))
        c = 1e6 * np.hypot(*(a[:, None, :] - b[None, :, :]).transpose(2, 0, 1))
    return c, family


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(90))
def test_random_against_scipy(method, seed):
    c, family = random_costs(seed)
    for maximize in (False, True):
        try:
            scipy_cost(c, maximize)
        except ValueError as exc:  # infeasible: we raise the same
            with pytest.raises(ValueError, match=str(exc)):
                solve(c, method, maximize)
            continue
        assert assert_solved(c, method, maximize).method == method


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n,hi", [(300, 30), (300, 300), (300, 3000), (250, None)])
def test_date_nagi_families(method, n, hi):
    """The paper's instance families (costs in [0, n/10], [0, n], [0, 10n]) and floats."""
    rng = np.random.default_rng(n + (hi or 0))
    c = rng.integers(0, hi + 1, (n, n)) if hi else rng.random((n, n))
    result = solve(c, method)
    assert_same_optimum(c, result)
    assert_certificate(c, result)
    assert result.stats.augmenting_paths > 0 or result.stats.iterations == 0


@pytest.mark.parametrize("method", METHODS)
def test_many_ties_and_structured(method):
    n = 60
    cases = [
        np.zeros((n, n)),
        np.ones((n, n + 7)),
        np.add.outer(np.arange(n), np.arange(n)).astype(float),     # every assignment optimal
        np.multiply.outer(np.arange(n), np.arange(n)).astype(float),  # anti-sorted optimum
        np.tril(np.ones((n, n))) * 5 + np.eye(n),                     # one forced structure
        (np.arange(n * n).reshape(n, n) % 7).astype(np.int64),
    ]
    for c in cases:
        for maximize in (False, True):
            assert_solved(c, method, maximize)


@pytest.mark.parametrize("method", METHODS)
def test_forbidden_entries_and_infeasible(method):
    rng = np.random.default_rng(7)
    feasible = infeasible = 0
    for _ in range(40):
        n, m = (int(x) for x in rng.integers(2, 40, 2))
        c = rng.integers(1, 100, (n, m)).astype(float)
        c[rng.random((n, m)) < 0.85] = np.inf
        try:
            ref = scipy_cost(c)
        except ValueError:
            infeasible += 1
            with pytest.raises(ValueError, match="^cost matrix is infeasible$"):
                solve(c, method)
            with pytest.raises(ValueError, match="^cost matrix is infeasible$"):
                linear_sum_assignment(c, method=method, device=device_of(method))
            continue
        feasible += 1
        result = solve(c, method)
        assert result.cost == ref
        assert_certificate(c, result)
    assert feasible and infeasible


def test_scipy_both_raise_or_agree():
    """SciPy's cross-check (test_two_methods_give_same_result_on_many_sparse_inputs)."""
    rng = np.random.default_rng(12342309)
    for _ in range(100):
        sparse = random_array((100, 100), density=0.06, rng=rng,
                              data_sampler=lambda size: rng.integers(1, 100, size))
        dense = np.full(sparse.shape, np.inf)
        dense[sparse.row, sparse.col] = sparse.data
        try:
            expected = scipy_cost(dense)
        except ValueError:
            with pytest.raises(ValueError, match="cost matrix is infeasible"):
                linear_sum_assignment(dense)
            continue
        r, k = linear_sum_assignment(dense)
        assert dense[r, k].sum() == expected


# ---- SciPy's own cases (scipy/sparse/csgraph/tests/test_matching.py) ---------

SCIPY_CASES = [
    ([[400, 150, 400], [400, 450, 600], [300, 225, 300]], [150, 400, 300]),
    ([[400, 150, 400, 1], [400, 450, 600, 2], [300, 225, 300, 3]], [150, 2, 300]),
    ([[10, 10, 8], [9, 8, 1], [9, 7, 4]], [10, 1, 7]),
    ([[10, 10, 8, 11], [9, 8, 1, 1], [9, 7, 4, 10]], [10, 1, 4]),
    ([[10, np.inf, np.inf], [np.inf, np.inf, 1], [np.inf, 7, np.inf]], [10, 1, 7]),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sign", [-1, 1])
@pytest.mark.parametrize("case", range(len(SCIPY_CASES)))
def test_scipy_small_inputs(method, sign, case):
    cost, expected = SCIPY_CASES[case]
    maximize = sign == -1
    c = sign * np.array(cost)
    expected = sign * np.array(expected)
    for matrix, want in ((c, expected), (c.T, np.sort(expected))):
        r, k = linear_sum_assignment(matrix, maximize=maximize, method=method,
                                     device=device_of(method))
        assert_array_equal(r, np.sort(r))
        got = matrix[r, k]
        assert_array_equal(want, got if matrix is c else np.sort(got))


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_scipy_input_object():
    c = [[1, 2, 3], [4, 5, 6]]
    assert_array_equal(linear_sum_assignment(c), linear_sum_assignment(np.asarray(c)))
    assert_array_equal(linear_sum_assignment(c), linear_sum_assignment(np.asmatrix(c)))


def test_scipy_input_bool():
    eye = np.identity(3)
    assert_array_equal(linear_sum_assignment(eye.astype(np.bool_)), linear_sum_assignment(eye))


@pytest.mark.parametrize("method", METHODS)
def test_constant_cost_matrix_gives_identity(method):
    """scipy#11602: a constant matrix gets the identity, also rectangular."""
    for shape in ((8, 8), (5, 9), (9, 5)):
        r, k = linear_sum_assignment(np.ones(shape), method=method, device=device_of(method))
        n = min(shape)
        assert_array_equal(r, np.arange(n))
        assert_array_equal(k, np.arange(n))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3)])
def test_trivial_shapes(shape):
    for dtype in (np.float64, np.int64, np.float32, bool):
        c = np.empty(shape, dtype=dtype)
        r, k = linear_sum_assignment(c)
        assert r.dtype == k.dtype == np.int64 and len(r) == len(k) == 0
        result = solve_assignment(c, maximize=True)
        assert result.cost == 0 and result.u.shape == (shape[0],) and result.v.shape == (shape[1],)


@pytest.mark.parametrize("method", METHODS)
def test_one_by_one_and_single_row(method):
    for c in ([[5]], [[-3.5]], [[3, 1, 2]], [[3], [1], [2]], [[np.inf, 2]]):
        for maximize in (False, True):
            arr = np.asarray(c, dtype=float)
            if maximize and np.isinf(arr).any():
                continue
            assert_solved(c, method, maximize)


# ---- dtypes ------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_dtypes(method):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 50, (40, 55))
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64, bool):
        c = base.astype(dtype)
        result = solve(c, method)
        kind = np.dtype(dtype).kind
        expected_dtype = {"b": np.int64, "i": np.int64, "u": np.int64}.get(
            kind, np.float32 if dtype in (np.float16, np.float32) else np.float64)
        assert result.u.dtype == result.v.dtype == expected_dtype
        assert_same_optimum(c, result)
        assert isinstance(result.cost, int if kind in "biu" else float)


def test_integers_are_exact():
    """Costs near 2**53 that float64 cannot tell apart are solved exactly."""
    big = 2**53
    c = np.array([[big, big + 1], [big + 1, big + 3]], dtype=np.int64)
    result = solve_assignment(c)
    assert result.cost == 2 * big + 2
    assert result.u.dtype == np.int64


def test_cost_near_float64_max():
    """The cost is the exact sum rounded once: a pairwise sum of the picked
    entries overflows here (-1e308 - 1e308 + 1e308) where the total does not."""
    c = np.array([[1e308, -1e308, 5.0], [-1e308, 1e308, 2.0], [3.0, 1.0, 1e308]])
    assert solve_assignment(c, device="cpu").cost == -1e308


def test_integer_overflow_guard():
    c = np.array([[2**61, 0], [0, 2**61]], dtype=np.int64)
    with pytest.raises(OverflowError, match="too large to solve exactly"):
        solve_assignment(c)
    # The drop-in does what SciPy does: solve in float64.
    assert_array_equal(linear_sum_assignment(c)[1], scipy_lsa(c)[1])


@pytest.mark.parametrize("method", METHODS)
def test_integer_overflow_guard_in_every_core(method):
    """The exact-int64 bound is checked by the solvers themselves (their
    first pass over the costs), including after a narrow int32 upload fails."""
    big = np.random.default_rng(4).integers(0, 50, (40, 40), dtype=np.int64)
    big[-1, -1] = 2**60  # the last entry: a GPU's int32 upload fails at its end
    with pytest.raises(OverflowError, match="too large to solve exactly"):
        solve_assignment(big, method=method, device=device_of(method))
    r, k = linear_sum_assignment(big, method=method, device=device_of(method))
    assert len(np.unique(k)) == len(k) == 40
    if method in CPU_METHODS:
        sr, sk = scipy_lsa(big)
        assert big[r, k].sum() == big[sr, sk].sum()
    else:  # float64 on the GPU: tightness tolerance 16 eps max|c| (~4096 here)
        assert big[r, k].sum() < 2**60


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("hi", [100, 2**31 - 1, 2**31, 2**40])
def test_int32_upload_when_costs_fit(method, hi):
    """GPU methods read int64 costs as int32 when every value fits (exact:
    duals stay int64), else as int64; the optimum is the same."""
    rng = np.random.default_rng(hi % 97)
    c = rng.integers(0, 100, (70, 90), dtype=np.int64)
    c[rng.integers(0, 70), rng.integers(0, 90)] = hi
    c[-1, -1] = -hi if hi > 2**31 else -(2**31)  # the int32 minimum still fits
    result = solve(c, method)
    assert_same_optimum(c, result)
    assert_certificate(c, result)
    fits = hi <= 2**31 - 1
    assert result.stats.narrow_costs == (fits and method.startswith("gpu"))
    # int16 is for staged (large) uploads only: test_staged_narrow_upload
    assert result.stats.narrow_cost_bytes == (4 if fits and method.startswith("gpu") else 0)


# Entries (flat index: value) set in the staged-upload test's matrix, and
# the width gpu-tree reads the costs at (bytes; 0: as int64).  int16 is not
# tried when the first 4096 values do not fit it ("int16-head"), is
# abandoned in its first chunk ("int16-chunk0") or in its last, the int16
# head then widened on the device ("int16-last").
STAGED_CASES = {"int16": ({0: -(2**15), -1: 2**15 - 1}, 2),
                "int16-head": ({0: -(2**15) - 1}, 4),
                "int16-chunk0": ({10_000: 2**15}, 4),
                "int16-last": ({-1: 2**15}, 4),
                "int32": ({0: -(2**31), -1: 2**31 - 1}, 4),
                "int64-first": ({0: -(2**31) - 1}, 0),
                "int64-last": ({-1: 2**31}, 0)}


@pytest.mark.cuda
@_no_cuda
@pytest.mark.parametrize("method", ["gpu-tree", "gpu-auction"])
@pytest.mark.parametrize("case", list(STAGED_CASES))
def test_staged_narrow_upload(method, case):
    """int64 matrices past 32 MB go up through the pinned staging, narrowed
    by host threads one slice each (odd sizes: slices that start off 16-byte
    alignment) to the narrowest of int16 (gpu-tree only), int32 and int64
    that holds every value; one entry outside a width, first or last,
    abandons it early or late and the next width takes over."""
    rng = np.random.default_rng(len(case))
    c = rng.integers(0, 101, (3001, 3011), dtype=np.int64)  # 72 MB; 2 int16, 3 int32 chunks
    entries, width = STAGED_CASES[case]
    for k, value in entries.items():
        c.flat[k] = value
    result = solve(c, method)
    assert_certificate(c, result)
    if method == "gpu-tree":
        assert result.stats.narrow_cost_bytes == width
    assert result.stats.narrow_costs == (width > 0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", ["zeros", "ones-wide", "ints-n/10", "ints", "floats",
                                  "tall", "identity"])
def test_paths_per_iteration(method, case):
    """stats.paths_per_iteration: one entry (>= 1) per iteration, summing to
    the paths augmented after the initial assignment."""
    rng = np.random.default_rng(len(case))
    n = 120
    c = {"zeros": np.zeros((n, n)), "ones-wide": np.ones((n, n + 30)),
         "ints-n/10": rng.integers(0, n // 10 + 1, (n, n)),
         "ints": rng.integers(0, n + 1, (n, n)), "floats": rng.random((n, n)),
         "tall": rng.integers(0, 50, (n + 40, n)), "identity": 1 - np.eye(n)}[case]
    result = solve(c, method)
    assert_certificate(c, result)
    st = result.stats
    paths = st.paths_per_iteration
    assert paths.dtype == np.int64 and paths.ndim == 1
    assert len(paths) == st.iterations
    assert (paths >= 1).all()
    assert paths.sum() == st.augmenting_paths <= min(c.shape)
    if case in ("zeros", "identity") and method == "omp-tree":
        # its initial (greedy) assignment is already complete; the GPU
        # methods have none: their first iteration assigns every row
        assert st.iterations == 0 and st.augmenting_paths == 0


def test_paths_per_iteration_count_from_the_initial_assignment():
    """The paths augmented are exactly the rows that omp-tree's initial
    assignment (Algorithm 1's reductions, then each row takes its first free
    zero-reduced-cost column) leaves free: recomputed here."""
    n = 50
    c = np.random.default_rng(12).integers(0, 21, (n, n))
    result = solve_assignment(c, method="omp-tree")
    u = c.min(axis=1)
    v = (c - u[:, None]).min(axis=0)
    taken, free = set(), 0
    for i in range(n):
        j = next((j for j in range(n) if j not in taken and c[i, j] - u[i] - v[j] == 0), None)
        free += j is None
        taken.add(j)
    assert free >= 1
    assert result.stats.paths_per_iteration.sum() == result.stats.augmenting_paths == free


# ---- small inputs: the compiled shortest augmenting path behind method="auto" ----

@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (4, 1), (5, 5), (10, 20), (20, 10),
                                   (50, 50), (100, 100)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8,
                                   np.bool_])
def test_small_auto_agrees_with_scipy(shape, dtype):
    rng = np.random.default_rng(shape[0] * 31 + shape[1])
    c = (rng.random(shape) * 100).astype(dtype)
    for maximize in (False, True):
        r, k = linear_sum_assignment(c, maximize)
        sr, sk = scipy_lsa(c, maximize)
        assert r.dtype == sr.dtype and k.dtype == sk.dtype
        assert_array_equal(r, np.sort(r))
        assert c[r, k].astype(np.float64).sum() == c[sr, sk].astype(np.float64).sum()


def test_small_auto_keeps_large_integers_exact():
    """float64 would round 2**53 + 1 to a tie: such integers take the exact path."""
    c = np.array([[2**53 + 1, 2**53], [0, 0]], dtype=np.int64)
    r, k = linear_sum_assignment(c)
    assert int(c[r, k].sum()) == 2**53


@pytest.mark.parametrize("bad", [
    np.array([[np.nan, 1.0], [1.0, 2.0]]), np.array([[-np.inf, 1.0], [1.0, 2.0]]),
    np.array([[np.inf, np.inf], [1.0, 2.0]]), np.zeros(3), np.zeros((2, 2, 2)),
    np.array([["a", "b"]]), np.array([[1 + 1j]]), np.array([[None]], dtype=object),
    np.array(3.0)])
def test_small_auto_errors_are_scipy_errors(bad):
    try:
        scipy_lsa(bad)
    except Exception as exc:  # noqa: BLE001 - whatever SciPy raises, we raise
        with pytest.raises(type(exc), match=None):
            linear_sum_assignment(bad)
        with pytest.raises(type(exc)):
            linear_sum_assignment(bad, method="omp-tree")
    else:
        linear_sum_assignment(bad)


def test_huge_uint64_solved_as_float_like_scipy():
    c = np.array([[2**64 - 1, 0], [5, 2**63 + 7]], dtype=np.uint64)
    r, k = linear_sum_assignment(c)
    sr, sk = scipy_lsa(c)
    assert c[r, k].astype(float).sum() == c[sr, sk].astype(float).sum()


@pytest.fixture
def route(monkeypatch):
    """What the compiled shortest path of `linear_sum_assignment` answered:
    one entry per call, True where it solved, False where it declined."""
    from matchflow import _lsap

    answers = []
    solver = _lsap._shortest_path

    def spy(c, maximize):
        solved = solver(c, maximize)
        answers.append(solved is not None)
        return solved

    monkeypatch.setattr(_lsap, "_shortest_path", spy)
    return answers


def _small_inputs():
    """(id, cost) for every dtype, layout and edge case the small route takes."""
    rng = np.random.default_rng(3)
    dtypes = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
              np.uint64, np.uint32, np.uint16, np.uint8, np.bool_]
    for dtype in dtypes:
        for shape in [(1, 1), (2, 2), (3, 7), (7, 3), (20, 20), (10, 30), (40, 40)]:
            hi = 2 if dtype is np.bool_ else 10  # ties: the assignment SciPy picks matters
            c = rng.integers(0, hi, shape).astype(dtype)
            yield f"{np.dtype(dtype).name}-{shape[0]}x{shape[1]}", c
    yield "float64-random", rng.random((8, 8))
    yield "float64-constant", np.full((6, 6), 3.0)  # the identity (scipy gh-11602)
    yield "float64-negative", -rng.random((4, 6))
    yield "float64-inf-feasible", np.array([[np.inf, 1.0], [2.0, np.inf]])
    yield "float64-inf-40x60", np.where(rng.random((40, 60)) < 0.5, np.inf, rng.random((40, 60)))
    yield "float64-transposed-view", rng.random((5, 9)).T
    yield "float64-fortran", np.asfortranarray(rng.random((6, 6)))
    yield "float32-tall-copied", rng.integers(0, 9, (60, 30)).astype(np.float32)
    yield "int64-transposed-view", rng.integers(-9, 9, (5, 9)).T
    yield "int64-strided-view", rng.integers(-9, 9, (6, 12))[:, ::2]
    yield "float64-reversed-view", rng.integers(0, 5, (7, 9)).astype(float)[::-1, ::-2]
    yield "float64-broadcast-view", np.broadcast_to(rng.random(6), (4, 6))  # zero row stride
    yield "float32-reversed-40x50", rng.random((40, 50)).astype(np.float32)[::-1, ::-1]
    yield "longlong-6x9", rng.integers(-9, 9, (6, 9)).astype(np.longlong)  # NPY_LONGLONG
    yield "ulonglong-9x6", rng.integers(0, 9, (9, 6)).astype(np.ulonglong)
    yield "int64-byteswapped", rng.integers(-9, 9, (4, 4)).astype(">i8")
    yield "float64-byteswapped", rng.random((3, 5)).astype(">f8")
    unaligned = np.zeros(8 * 6 + 1, dtype=np.uint8)[1:].view(np.float64).reshape(2, 3)
    unaligned[...] = rng.integers(0, 3, (2, 3))
    yield "float64-unaligned", unaligned
    yield "int64-negative", rng.integers(-10**6, 0, (6, 6))
    yield "int64-at-the-bound", np.array([[2**47, -2**47], [-2**47, 2**47]])
    yield "uint64-at-the-bound", np.array([[2**47, 0], [1, 2**47]], dtype=np.uint64)
    yield "int64-60x80", rng.integers(0, 60, (60, 80))
    yield "int64-200x250", rng.integers(0, 10**6, (200, 250))  # 50k entries: the limit
    yield "float64-300x200", rng.integers(0, 50, (300, 200)).astype(float)  # heap, copied
    yield "list", [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    yield "list-of-floats", [[0.5, 1.0], [1.0, 0.5], [0.0, 0.0]]
    yield "list-of-floats-6x4", rng.integers(0, 3, (6, 4)).astype(float).tolist()  # float64 at once
    yield "list-float-then-int-5x5", [[0.5, 1, 2, 0, 1]] + [[1, 0, 2, 2, 1]] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        yield "matrix", np.matrix([[1.0, 2.0], [2.0, 1.0]])
    yield "masked", np.ma.array(rng.random((3, 3)), mask=np.eye(3, dtype=bool))


SMALL = list(_small_inputs())


@pytest.mark.parametrize("c", [c for _, c in SMALL], ids=[i for i, _ in SMALL])
@pytest.mark.parametrize("maximize", [False, True])
def test_small_auto_returns_scipys_exact_arrays(c, maximize, route):
    """Not just the optimum: SciPy's own assignment, ties included."""
    if maximize and np.asarray(c).dtype.kind == "f" and np.isinf(c).any():
        c = -c  # forbidden pairs are -inf when maximising
    sr, sk = scipy_lsa(c, maximize)
    r, k = linear_sum_assignment(c, maximize)
    assert route[-1]  # the small route answered
    assert r.dtype == sr.dtype and k.dtype == sk.dtype
    assert_array_equal(r, sr)
    assert_array_equal(k, sk)


@pytest.mark.parametrize("kind", ["float", "ties", "int", "inf", "bool"])
def test_small_auto_matches_scipy_on_random_matrices(kind, route):
    """400 seeded matrices of each kind, both senses, shapes 1..25 either way."""
    rng = np.random.default_rng(["float", "ties", "int", "inf", "bool"].index(kind))
    for _ in range(400):
        shape = tuple(rng.integers(1, 26, 2))
        if kind == "float":
            c = rng.standard_normal(shape)
        elif kind == "ties":
            c = rng.integers(0, 4, shape).astype(float)
        elif kind == "int":
            c = rng.integers(-1000, 1000, shape)
        elif kind == "inf":
            c = np.where(rng.random(shape) < 0.3, np.inf, rng.random(shape))
        else:
            c = rng.random(shape) < 0.5
        for maximize in (False, True):
            m = -c if kind == "inf" and maximize else c
            try:
                expected = scipy_lsa(m, maximize)
            except ValueError as exc:  # infeasible: the same error
                with pytest.raises(ValueError, match=f"^{re.escape(str(exc))}$"):
                    linear_sum_assignment(m, maximize)
                continue
            got = linear_sum_assignment(m, maximize)
            assert route[-1]
            assert_array_equal(got[0], expected[0])
            assert_array_equal(got[1], expected[1])


@pytest.mark.parametrize("c", [
    np.array([[np.nan, 1.0], [1.0, 2.0]]),                   # NaN
    np.array([[-np.inf, 1.0], [1.0, 2.0]]),                  # -inf minimising
    np.array([[np.inf, np.inf], [1.0, 2.0]]),                # infeasible
    np.array([[np.inf, 1.0], [1.0, 2.0]], dtype=np.float32),
    np.array([[np.nan]]),                                    # 1x1
    np.array([[np.inf]]),
    np.full((3, 1), np.inf),                                 # tall, infeasible
    np.zeros(3), np.zeros((2, 2, 2)), np.array(1.0),        # not 2-D
    np.zeros(3, dtype=np.int64), np.zeros((2, 2, 2), dtype=np.int64),
    np.zeros((1, 2, 2), dtype=np.uint64), np.array(7, dtype=np.int64),
    np.array([[1 + 2j, 0], [0, 1]]), np.array([["a", "b"], ["c", "d"]]),
    np.zeros((2, 2), dtype=np.longdouble), np.zeros((2, 2), dtype=object),
    [[1.0, None], [0.0, 1.0]], [[1.0, "a"], [0.0, 1.0]], [[1.0, 1j], [0.0, 1.0]],
    [[1.0, 2.0], [0.0]], [[1.0, np.nan]], [[1.0, np.inf], [np.inf, 1.0]], [[1.0, [2.0]]],
    [[1.0, 2.0]] * 4 + [[1.0, None]], [[1.0, 2.0]] * 4 + [[1.0, "a"]],   # the float64 shortcut
    [[1.0, 2.0]] * 4 + [[1.0, 1j]], [[1.0, 2.0]] * 4 + [[1.0]],
    np.zeros((3, 3), dtype=np.longdouble).astype(np.dtype(np.longdouble).newbyteorder()),
], ids=lambda c: f"{c.dtype}{c.shape}" if isinstance(c, np.ndarray) else repr(c))
@pytest.mark.parametrize("maximize", [False, True])
def test_small_auto_raises_scipys_errors(c, maximize):
    try:
        expected = scipy_lsa(c, maximize)
    except Exception as exc:  # noqa: BLE001 - whatever SciPy raises, we raise
        with pytest.raises(type(exc), match=f"^{re.escape(str(exc))}$"):
            linear_sum_assignment(c, maximize)
    else:
        got = linear_sum_assignment(c, maximize)
        assert_array_equal(got[0], expected[0])
        assert_array_equal(got[1], expected[1])


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int32,
                                   np.bool_])
def test_small_auto_empty(shape, dtype, route):
    c = np.zeros(shape, dtype=dtype)
    r, k = linear_sum_assignment(c)
    sr, sk = scipy_lsa(c)
    assert route == [True]
    assert r.dtype == sr.dtype and k.dtype == sk.dtype and r.shape == k.shape == (0,)


@pytest.mark.parametrize("c", [
    np.array([[2**47 + 1, 0], [0, 0]]),            # max(n, 8) * max|c| just over 2**50
    np.array([[0, -2**47 - 1], [0, 0]]),
    np.array([[0, 2**47 + 1]], dtype=np.uint64).T,
    np.array([[-2**63, 0], [0, 0]]),               # INT64_MIN: |c| does not fit int64
    np.array([[2**64 - 1, 0], [5, 2**63 + 7]], dtype=np.uint64),
    np.array([[2**53 + 1, 2**53], [0, 0]]),
    np.full((20, 30), 2**50 // 30 + 1),            # the bound grows with n
    np.array([[2**53 + 1, 2**53], [0, 0]]).astype(">i8"),
], ids=["over", "over-negative", "uint64-over", "int64-min", "uint64-huge", "2**53",
        "20x30", "byteswapped"])
def test_small_auto_leaves_inexact_integers_to_the_exact_solver(c, route):
    """Integers whose float64 solve could round are declined by the small
    route: int64 ones go to the exact int64 solver, huge uint64 ones to
    float64 as SciPy would (there is no exact type for them)."""
    r, k = linear_sum_assignment(c)
    assert route and not any(route)
    assert_array_equal(r, np.sort(r))
    assert len(np.unique(k)) == len(k) == min(c.shape)
    if c.dtype.kind == "i" and c.min() > -2**62:  # exact: the exact solver's optimum
        assert int(c[r, k].astype(object).sum()) == solve_assignment(c).cost


def test_small_auto_routing_at_the_bound(route):
    """max(n, 8) * max|c| <= 2**50 is solved in float64, one more is not."""
    for n, big in [(2, 2**47), (16, 2**46), (20, 2**50 // 20)]:
        c = np.zeros((n, n), dtype=np.int64)
        for value, answered in [(big, True), (-big, True), (big + 1, False),
                                (-big - 1, False)]:
            c[0, 1] = value
            linear_sum_assignment(c)
            assert route[-1] == answered, value


def test_small_auto_only_with_default_arguments(route):
    c = np.arange(4.0).reshape(2, 2)
    linear_sum_assignment(c, method="".join(["au", "to"]), device="cpu")  # equal, not `is`
    assert route == [True]
    linear_sum_assignment(c, method="omp-tree")
    linear_sum_assignment(c, threads=1)
    linear_sum_assignment(c, device="cuda:0") if matchflow.cuda_available() else None
    assert route == [True]
    linear_sum_assignment(np.ones((250, 250), dtype=np.int32))  # over the integer limit
    assert route == [True]
    linear_sum_assignment(np.ones((250, 250)))  # floats: under their limit
    assert route == [True, True]


def test_small_auto_releases_the_gil(route):
    """A Python thread keeps running while another solves on the small route."""
    c = np.random.default_rng(9).random((500, 500))  # 250k entries: the route's largest
    assert_gil_released(lambda: linear_sum_assignment(c), min_seconds=0.003)
    assert route == [True]


class _Unsure:
    def __bool__(self):
        raise RuntimeError("no truth value")


@pytest.mark.parametrize("maximize", [np.True_, np.False_, 1, 0, "yes", "", [0], [],
                                      None, np.array([1]), np.array([1, 2]), _Unsure()],
                         ids=repr)
def test_small_auto_maximize_truthiness_as_scipy(maximize, route):
    """`maximize` is read by its truth value, as SciPy reads it, errors included."""
    c = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]])
    try:
        expected = scipy_lsa(c, maximize)
    except Exception as exc:  # noqa: BLE001 - whatever SciPy raises, we raise
        with pytest.raises(type(exc)):
            linear_sum_assignment(c, maximize)
    else:
        got = linear_sum_assignment(c, maximize)
        assert route == [True]
        assert_array_equal(got[0], expected[0])
        assert_array_equal(got[1], expected[1])


def test_small_auto_from_many_threads():
    """Concurrent solves on the small route (GIL released) do not disturb each other."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    costs = [rng.integers(0, 20, (int(rng.integers(1, 120)), int(rng.integers(1, 120))))
             .astype(dtype) for dtype in (np.float64, np.int64, np.float32, np.uint8) * 25]
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(linear_sum_assignment, costs))
    for c, (r, k) in zip(costs, answers):
        sr, sk = scipy_lsa(c)
        assert_array_equal(r, sr)
        assert_array_equal(k, sk)


# ---- device="auto": the GPU only where ties make it pay ------------------------------

def test_few_ties_by_sampled_spread():
    from matchflow._lsap import FEW_TIES_SPREAD, GPU_MIN_ELEMENTS, _few_ties

    n = 600  # 360k entries: between the integer and the floating GPU thresholds
    rng = np.random.default_rng(0)
    assert _few_ties(rng.random((3, 3))) and _few_ties(rng.random((n, n)))
    assert not _few_ties(rng.integers(0, 10**9, (100, 100)))  # under both thresholds
    assert not _few_ties(rng.integers(0, n + 1, (n, n)))
    assert not _few_ties(rng.integers(0, FEW_TIES_SPREAD * n + 1, (n, n)))
    assert _few_ties(rng.integers(0, 100 * n, (n, n)))
    assert _few_ties(rng.integers(-50 * n, 50 * n, (n, 2 * n)).T)
    tall = np.zeros((GPU_MIN_ELEMENTS // 4, 4), dtype=np.int64)
    assert not _few_ties(tall)
    tall[0, 0] = 10**9  # on the sampled grid
    assert _few_ties(tall)


@pytest.mark.cuda
@_no_cuda
@pytest.mark.parametrize("spread,method", [(1, "gpu-tree"), (10, "gpu-tree"),
                                           (1000, "gpu-auction")])
def test_gpu_auto_by_cost_spread(spread, method):
    n = 600
    c = np.random.default_rng(spread).integers(0, spread * n + 1, (n, n))
    result = solve_assignment(c)
    assert result.method == method
    assert_certificate(c, result)


@pytest.mark.cuda
@_no_cuda
@pytest.mark.parametrize("shape,method", [((600, 600), "gpu-auction"), ((600, 700), "omp-tree"),
                                          ((8193, 40), "omp-tree")])
def test_gpu_auto_floats(shape, method):
    """Square float problems go to gpu-auction; rectangular ones (no auction
    phases) and wider than its column cap stay on the CPU below the float
    threshold."""
    c = np.random.default_rng(0).random(shape).astype(np.float32)
    result = solve_assignment(c)
    assert result.method == method
    assert_same_optimum(c, result)
    assert_certificate(c, result)


def test_float32_is_not_copied_to_float64():
    c = np.random.default_rng(0).random((50, 50)).astype(np.float32)
    result = solve_assignment(c)
    assert result.u.dtype == np.float32
    assert_certificate(c, result)


def test_non_contiguous_and_subclasses():
    rng = np.random.default_rng(4)
    c = rng.random((30, 60))[:, ::2]
    assert solve_assignment(c).cost == pytest.approx(scipy_cost(c))
    masked = np.ma.array(c, mask=c < 0.5)  # SciPy ignores the mask: so do we
    assert solve_assignment(masked).cost == pytest.approx(scipy_cost(c))
    assert solve_assignment(c.T.tolist()).cost == pytest.approx(scipy_cost(c.T))


# ---- errors: SciPy's exceptions and messages --------------------------------------

@pytest.mark.parametrize("bad,exc,message", [
    ([1, 2, 3], ValueError, r"^expected a matrix \(2-D array\), got a 1 array$"),
    (np.zeros((2, 2, 2)), ValueError, r"^expected a matrix \(2-D array\), got a 3 array$"),
    (5, ValueError, r"^expected a matrix \(2-D array\), got a 0 array$"),
    (np.identity(3).astype(str), TypeError, "Cannot cast array data"),
    (np.array([[1 + 1j]]), TypeError, "Cannot cast array data"),
    (np.array([[1, None]], dtype=object), TypeError, "Cannot cast array data"),
    (np.array([[1.0]], dtype=np.longdouble), TypeError, "Cannot cast array data"),
    ([["a", "b"]], ValueError, "could not convert string to float"),
    (np.diag([np.nan, 1, 1]), ValueError, "^matrix contains invalid numeric entries$"),
    (np.diag([1, -np.inf, 1]), ValueError, "^matrix contains invalid numeric entries$"),
    ([[1, None]], ValueError, "^matrix contains invalid numeric entries$"),
])
def test_scipy_errors(bad, exc, message):
    with pytest.raises(exc, match=message):
        scipy_lsa(bad)
    with pytest.raises(exc, match=message):
        linear_sum_assignment(bad)
    with pytest.raises(exc, match=message):
        solve_assignment(bad)


def test_infinities_swap_roles_under_maximize():
    c = np.identity(3)
    c[:, 0] = np.inf
    with pytest.raises(ValueError, match="^cost matrix is infeasible$"):
        linear_sum_assignment(c)
    with pytest.raises(ValueError, match="^matrix contains invalid numeric entries$"):
        linear_sum_assignment(c, maximize=True)
    d = -c
    with pytest.raises(ValueError, match="^matrix contains invalid numeric entries$"):
        linear_sum_assignment(d)
    with pytest.raises(ValueError, match="^cost matrix is infeasible$"):
        linear_sum_assignment(d, maximize=True)
    ok = np.array([[-np.inf, 1.0], [2.0, 3.0]])
    result = solve_assignment(ok, maximize=True)
    assert result.cost == scipy_cost(ok, True) == 3.0
    assert_certificate(ok, result, maximize=True)


def test_argument_errors():
    c = np.ones((3, 3))
    with pytest.raises(ValueError, match="method must be one of"):
        linear_sum_assignment(c, method="jv")
    with pytest.raises(ValueError, match="device must be"):
        linear_sum_assignment(c, device="tpu")
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        solve_assignment(c, threads=0)
    with pytest.raises(ValueError, match="runs on a GPU"):
        linear_sum_assignment(c, method="gpu-tree", device="cpu")
    if not matchflow.cuda_available():
        with pytest.raises(RuntimeError, match="CUDA device was requested"):
            linear_sum_assignment(c, device="cuda")


# ---- the rich result -----------------------------------------------------------

def test_result_fields_and_orientation():
    rng = np.random.default_rng(11)
    tall = rng.integers(0, 20, (30, 12))
    result = solve_assignment(tall, method="omp-tree", device="cpu")
    assert result.u.shape == (30,) and result.v.shape == (12,)
    assert result.method == "omp-tree" and result.device == "cpu"
    assert result.stats.device == "cpu" and result.stats.seconds_total > 0
    assert result.cost == int(result.u.sum() + result.v.sum())  # strong duality
    assert_certificate(tall, result)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_do_not_change_the_answer(threads):
    """The search is deterministic whatever the number of threads."""
    c = np.random.default_rng(2).integers(0, 600, (600, 700))
    reference = solve_assignment(c, method="omp-tree", threads=1)
    result = solve_assignment(c, method="omp-tree", threads=threads)
    assert_array_equal(result.col_ind, reference.col_ind)
    assert_array_equal(result.u, reference.u)
    assert result.stats.iterations == reference.stats.iterations


def test_gil_is_released():
    """A Python thread keeps running while another solves."""
    c = np.random.default_rng(9).random((1200, 1200))
    assert_gil_released(lambda: solve_assignment(c, device="cpu", threads=1), min_seconds=0.01)


# ---- OR-Library instances (../shared/data/orlib), optima published in assignopt.txt

def _orlib_cases():
    from conftest import data_dir

    root = data_dir()
    if root is None:
        return []
    lines = (root / "orlib" / "assignopt.txt").read_text().splitlines()[1:]  # a header line
    optima = {name: int(value) for name, value in (ln.split() for ln in lines if ln.strip())}
    return [pytest.param(root / "orlib" / f"{name}.txt", optima[name], id=name)
            for name in sorted(optima) if (root / "orlib" / f"{name}.txt").exists()]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("path, optimum", _orlib_cases())
def test_orlib_published_optima(method, path, optimum):
    from matchflow.io import read_orlib_assignment

    c = read_orlib_assignment(path)
    result = solve(c, method)
    assert result.cost == optimum
    assert_certificate(c, result)

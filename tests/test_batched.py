"""Batched linear sum assignment: every problem of a stack against SciPy.

omp-sap runs SciPy's algorithm on each problem and must give SciPy's arrays;
gpu-sap must give an optimal assignment (SciPy's cost; ties may differ),
on every one of GPU_REPEATS runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow
from matchflow import batch_linear_sum_assignment
from matchflow._batched import solve_batch

from conftest import GPU_REPEATS, assert_gil_released

gpu = pytest.mark.cuda

SHAPES = [(1, 1), (1, 7), (7, 1), (5, 5), (6, 9), (9, 6), (17, 17), (12, 30), (30, 12),
          (40, 40), (33, 64), (64, 33), (70, 70)]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


# ---- oracles -------------------------------------------------------------------

def scipy_solution(c: np.ndarray, maximize: bool):
    """SciPy's (row_ind, col_ind), or None where it raises ValueError (infeasible)."""
    try:
        return scipy_lsa(c, maximize)
    except ValueError:
        return None


def assignment_cost(c: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """The sum, exact for integers, in float64 for floats."""
    picked = c[rows, cols]
    return int(picked.astype(np.int64).sum()) if c.dtype.kind in "biu" else float(
        picked.astype(np.float64).sum())


def assert_optimal(costs, row_ind, col_ind, maximize=False, same_arrays=False):
    """Each problem's assignment: valid, rows sorted, SciPy's cost (exact for
    integers; floats within rounding of the magnitude); SciPy's own arrays
    when `same_arrays`."""
    costs = np.asarray(costs)
    batch, n, m = costs.shape
    k = min(n, m)
    assert row_ind.shape == col_ind.shape == (batch, k)
    assert row_ind.dtype == col_ind.dtype == np.int64
    for b in range(batch):
        c, rows, cols = costs[b], row_ind[b], col_ind[b]
        ref = scipy_solution(c, maximize)
        assert ref is not None
        assert np.all(np.diff(rows) > 0) and len(np.unique(cols)) == k
        assert rows.min(initial=0) >= 0 and rows.max(initial=0) < max(n, 1)
        assert cols.min(initial=0) >= 0 and cols.max(initial=0) < max(m, 1)
        if same_arrays:
            assert_array_equal(rows, ref[0])
            assert_array_equal(cols, ref[1])
        got, want = assignment_cost(c, rows, cols), assignment_cost(c, *ref)
        if c.dtype.kind in "biu":
            assert got == want, f"problem {b}"
        else:
            finite = np.abs(c[np.isfinite(c)]).astype(np.float64)
            scale = max(1.0, k * float(finite.max(initial=0)))
            assert np.isfinite(got) and abs(got - want) <= 1e-9 * scale, f"problem {b}"


def first_infeasible(costs, maximize=False):
    for b in range(costs.shape[0]):
        if scipy_solution(costs[b], maximize) is None:
            return b
    return None


# ---- random stacks -------------------------------------------------------------------

def random_stack(seed: int, batch: int | None = None, shape=None, dtype=None):
    """A seeded stack: shape, dtype and cost family from the seed; floats
    sometimes with +inf (forbidden) entries, a few problems infeasible."""
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 7)) if batch is None else batch
    n, m = SHAPES[seed % len(SHAPES)] if shape is None else shape
    dtype = DTYPES[(seed // len(SHAPES)) % len(DTYPES)] if dtype is None else dtype
    family = seed % 4
    if dtype == np.bool_:
        return rng.random((batch, n, m)) < 0.5
    if np.dtype(dtype).kind in "iu":
        hi = {0: 3, 1: max(n, m), 2: 10 * max(n, m), 3: 200}[family]  # ties ... few ties
        c = rng.integers(0, hi + 1, (batch, n, m))
        if np.dtype(dtype).kind == "i" and family == 3:
            c -= 100  # negative costs too
        return c.astype(dtype)
    c = (rng.random((batch, n, m)) * 10 ** float(rng.integers(-2, 4))).astype(dtype)
    if family == 1:
        c = np.round(c)  # ties among floats
    if family >= 2:  # forbidden pairs
        c[rng.random(c.shape) < (0.3 if family == 2 else 0.7)] = np.inf
    return c


def check_stack(c, method, maximize=False, repeats=1, **kwargs):
    """Solve (repeatedly) and compare with SciPy, errors included.  Forbidden
    pairs are -inf when maximising."""
    if maximize and c.dtype.kind == "f":
        c = np.where(np.isinf(c), -np.inf, c).astype(c.dtype)
    device = "cuda" if method.startswith("gpu") else "cpu"
    bad = first_infeasible(c, maximize)
    for _ in range(repeats):
        if bad is not None:
            with pytest.raises(ValueError,
                               match=rf"cost matrix is infeasible \(batch index {bad}\)"):
                batch_linear_sum_assignment(c, maximize, method=method, device=device, **kwargs)
            continue
        rows, cols, info = solve_batch(c, maximize, method=method, device=device, **kwargs)
        assert info["method"] == method
        assert_optimal(c, rows, cols, maximize, same_arrays=method == "omp-sap")


# ---- CPU -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(len(SHAPES) * len(DTYPES) * 2))
def test_omp_sap_matches_scipy(seed):
    check_stack(random_stack(seed), "omp-sap", maximize=seed % 5 == 0)


@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (4, 0)])
@pytest.mark.parametrize("batch", [0, 3])
def test_empty(shape, batch):
    rows, cols = batch_linear_sum_assignment(np.zeros((batch, *shape)))
    assert rows.shape == cols.shape == (batch, 0)
    rows, cols = batch_linear_sum_assignment(np.zeros((0, 3, 5), dtype=np.float32))
    assert rows.shape == cols.shape == (0, 3) and rows.dtype == np.int64


def test_threads_and_layouts():
    rng = np.random.default_rng(1)
    c = rng.random((40, 25, 18))
    want = batch_linear_sum_assignment(c, threads=1)
    for got in (batch_linear_sum_assignment(c, threads=2),
                batch_linear_sum_assignment(np.asfortranarray(c)),  # any layout
                batch_linear_sum_assignment(c.astype(">f8")),      # byte-swapped
                batch_linear_sum_assignment(c.tolist())):           # nested lists
        assert_array_equal(got[0], want[0])
        assert_array_equal(got[1], want[1])
    assert_optimal(c[:, ::2, 1:], *batch_linear_sum_assignment(c[:, ::2, 1:]))  # a strided view


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint16, np.uint32, np.uint64,
                                   np.float16])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(2)
    c = rng.integers(0, 100, (5, 8, 11)).astype(dtype)
    assert_optimal(c, *batch_linear_sum_assignment(c), same_arrays=True)


def test_large_integers_round_as_scipy():
    """Past max(n, 8) * max|c| <= 2**50 the stack is solved in float64, as SciPy
    solves it: SciPy's arrays."""
    rng = np.random.default_rng(3)
    c = rng.integers(-2**60, 2**60, (4, 9, 7))
    rows, cols = batch_linear_sum_assignment(c)
    for b in range(4):
        ref = scipy_lsa(c[b])
        assert_array_equal(rows[b], ref[0])
        assert_array_equal(cols[b], ref[1])
    big = np.full((2, 3, 3), 2**63 + 5, dtype=np.uint64)  # above int64: float64, as SciPy
    big[1, 0, 0] = 0
    assert_optimal(big.astype(np.float64), *batch_linear_sum_assignment(big))


def test_maximize_with_forbidden():
    c = np.array([[[1.0, -np.inf], [-np.inf, 2.0]], [[-np.inf, 5.0], [1.0, 3.0]]])
    rows, cols = batch_linear_sum_assignment(c, maximize=True)
    assert_array_equal(cols, [[0, 1], [1, 0]])


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_invalid_entries_name_the_index(bad):
    c = np.zeros((5, 3, 4))
    c[3, 1, 2] = bad
    c[4, 0, 0] = bad
    with pytest.raises(ValueError, match=r"invalid numeric entries \(batch index 3\)"):
        batch_linear_sum_assignment(c)
    c32 = np.zeros((2, 4, 3), dtype=np.float32)
    c32[1, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"invalid numeric entries \(batch index 1\)"):
        batch_linear_sum_assignment(c32, maximize=True)  # +inf is -inf once negated


def test_infeasible_names_the_lowest_index():
    c = np.ones((6, 3, 3))
    c[2, :, 1] = np.inf
    c[2, :, 2] = np.inf
    c[5, 0, :] = np.inf
    with pytest.raises(ValueError, match=r"^cost matrix is infeasible \(batch index 2\)$"):
        batch_linear_sum_assignment(c, threads=2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="expected a stack of matrices"):
        batch_linear_sum_assignment(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="expected a stack of matrices"):
        batch_linear_sum_assignment(np.zeros((1, 3, 3, 1)))
    with pytest.raises(TypeError):
        batch_linear_sum_assignment(np.zeros((1, 2, 2), dtype=complex))
    with pytest.raises(ValueError):
        batch_linear_sum_assignment(np.zeros((1, 2, 2)), method="hungarian")
    with pytest.raises(ValueError):
        batch_linear_sum_assignment(np.zeros((1, 2, 2)), threads=0)
    with pytest.raises(ValueError, match="runs on a GPU"):
        batch_linear_sum_assignment(np.zeros((1, 2, 2)), method="gpu-sap", device="cpu")
    with pytest.raises(ValueError, match="block_threads"):
        solve_batch(np.zeros((1, 2, 2)), block_threads=48)

    class DeviceArray:
        __cuda_array_interface__ = {"shape": (1, 2, 2), "typestr": "<f4", "version": 3,
                                    "data": (0, False)}

    with pytest.raises(ValueError, match="null data pointer"):
        batch_linear_sum_assignment(DeviceArray())


@pytest.mark.skipif(matchflow.cuda_available(), reason="checks the CPU-only fallbacks")
def test_without_gpu():
    c = np.random.default_rng(4).random((300, 30, 30))  # large enough for the GPU
    assert solve_batch(c)[2]["device"] == "cpu"
    with pytest.raises(RuntimeError):
        batch_linear_sum_assignment(c, device="cuda")


def test_gil_released():
    c = np.random.default_rng(5).random((2000, 60, 60))  # ~0.2 s on one thread
    assert_gil_released(lambda: batch_linear_sum_assignment(c, device="cpu", threads=1), 0.05)


# ---- GPU -------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("seed", range(len(SHAPES) * len(DTYPES) * 2))
def test_gpu_sap_matches_scipy(seed):
    check_stack(random_stack(seed), "gpu-sap", maximize=seed % 5 == 0, repeats=GPU_REPEATS)


@gpu
@pytest.mark.parametrize("block_threads", [32, 64, 128, 512])
def test_gpu_block_sizes(block_threads):
    for seed in (7, 20, 33):
        check_stack(random_stack(seed, batch=20), "gpu-sap", block_threads=block_threads)


# Columns per thread (the kernel's register arrays: K of 1-6, 8, 10, 12 or
# 16): a one-warp block on ever wider problems, then one too narrow for its
# columns (the solver widens it).
@gpu
@pytest.mark.parametrize("shape", [(3, 30), (10, 40), (5, 96), (20, 100), (7, 160), (192, 9),
                                   (200, 20), (12, 200), (4, 320), (8, 500), (500, 8),
                                   (6, 700)])
def test_gpu_columns_per_thread(shape):
    for seed, dtype in ((0, np.float64), (1, np.float32), (2, np.int64)):
        c = random_stack(seed, batch=6, shape=shape, dtype=dtype)
        check_stack(c, "gpu-sap", maximize=seed == 1, block_threads=32)
    rows, cols, info = solve_batch(np.zeros((1, *shape)), method="gpu-sap", block_threads=32)
    assert info["block_threads"] * 16 >= max(shape) and info["block_threads"] % 32 == 0


# The pipelined upload (stacks of 2 MiB and more, in chunks of whole
# problems, each solved on its own stream): the same answers as the upload
# in one piece, tall problems (transposed per chunk) included, and a failing
# problem in a late chunk named by its index.
PIPELINED = [
    # (batch, shape, dtype): a few chunks, a problem that does not divide them
    (700, (40, 40), np.float64),
    (97, (300, 100), np.float64),
    (45, (100, 300), np.float32),
]


@gpu
@pytest.mark.parametrize("batch,shape,dtype", PIPELINED)
def test_gpu_pipelined(batch, shape, dtype):
    c = np.random.default_rng(batch).random((batch, *shape)).astype(dtype)
    assert c.nbytes >= 2 << 20
    for pipeline in (True, False):
        rows, cols, info = solve_batch(c, method="gpu-sap", device="cuda", pipeline=pipeline)
        assert_optimal(c, rows, cols)
        if pipeline:
            assert info["kernel_launches"] > 1  # more than one chunk
    bad = c.copy()
    bad[batch - 2, 1, :] = np.inf  # row 1 and column 1 forbidden: infeasible, tall or wide
    bad[batch - 2, :, 1] = np.inf
    bad[batch - 1, 0, 0] = np.nan
    with pytest.raises(ValueError, match=rf"infeasible \(batch index {batch - 2}\)"):
        batch_linear_sum_assignment(bad, method="gpu-sap")
    bad[batch - 5, 0, 0] = np.nan
    with pytest.raises(ValueError, match=rf"invalid numeric entries \(batch index {batch - 5}\)"):
        batch_linear_sum_assignment(bad, method="gpu-sap")


# Shapes past shared memory (costs read from global memory; tall ones
# transposed first), and the sizes of the performance targets.
GPU_FAMILIES = [
    # (name, batch, shape, dtype, family seed)
    ("targets 64x64 f32", 1024, (64, 64), np.float32, 0),
    ("tall 300x100 f32", 208, (300, 100), np.float32, 0),
    ("global 300x300 f32", 24, (300, 300), np.float32, 0),
    ("global tall 400x120 f64", 16, (400, 120), np.float64, 2),
    ("global wide 120x400 f64", 16, (120, 400), np.float64, 2),
    ("ties 8x8 u8", 3000, (8, 8), np.uint8, 0),
    ("wide 20x30 i64", 2000, (20, 30), np.int64, 1),
    ("tall 30x20 f64 inf", 1500, (30, 20), np.float64, 2),
    ("square 100x100 i32", 600, (100, 100), np.int32, 3),
    ("mixed 2x50 f32", 1600, (2, 50), np.float32, 1),
]


@gpu
@pytest.mark.parametrize("name,batch,shape,dtype,family", GPU_FAMILIES,
                         ids=[f[0] for f in GPU_FAMILIES])
def test_gpu_sap_large_set(name, batch, shape, dtype, family):
    """About 10,000 problems over the families, each checked against SciPy."""
    rng = np.random.default_rng(batch)
    n, m = shape
    if np.dtype(dtype).kind in "iu":
        hi = {0: 3, 1: max(n, m), 3: 10**6}[family]
        c = rng.integers(0, hi + 1, (batch, n, m)).astype(dtype)
    else:
        c = rng.random((batch, n, m)).astype(dtype)
        if family == 1:
            c = np.round(c * 4)
        if family == 2:
            c[rng.random(c.shape) < 0.5] = np.inf
            # keep every problem feasible: an allowed diagonal
            k = min(n, m)
            c[:, np.arange(k), np.arange(k)] = rng.random((batch, k))
    rows, cols, info = solve_batch(c, method="gpu-sap", device="cuda")
    assert info["device"].startswith("cuda")
    assert_optimal(c, rows, cols)
    if family != 2:  # +inf is invalid when maximising
        again = solve_batch(c, True, method="gpu-sap", device="cuda")
        assert_optimal(c, again[0], again[1], maximize=True)


# The variants of the global-memory kernel (the L1 carveout; see
# solve_batch): each must give SciPy's costs, wide, tall, with ties and
# forbidden pairs, in every dtype family, more problems than SMs included.
GLOBAL_VARIANT_CASES = [
    # (batch, shape, dtype, family seed as in random_stack)
    (300, (300, 300), np.float32, 0),
    (40, (300, 300), np.float64, 1),
    (30, (120, 400), np.float64, 2),
    (30, (400, 120), np.float64, 3),
    (20, (200, 700), np.int64, 1),
]


@gpu
@pytest.mark.parametrize("carveout", ["l1", "driver"])
def test_gpu_global_variants(monkeypatch, carveout):
    monkeypatch.setenv("MATCHFLOW_GPU_SAP_CARVEOUT", carveout)
    for batch, shape, dtype, family in GLOBAL_VARIANT_CASES:
        c = random_stack(family, batch=batch, shape=shape, dtype=dtype)
        if np.isinf(c).any():  # keep every problem feasible: an allowed diagonal
            k = min(shape)
            c[:, np.arange(k), np.arange(k)] = 1
        rows, cols, info = solve_batch(c, method="gpu-sap", device="cuda")
        assert not info["shared_costs"]
        assert_optimal(c, rows, cols)
    for block_threads in (32, 96, 512):  # one warp to sixteen
        c = random_stack(5, batch=12, shape=(300, 300), dtype=np.float32)
        rows, cols, _ = solve_batch(c, method="gpu-sap", device="cuda",
                                    block_threads=block_threads)
        assert_optimal(c, rows, cols)


@gpu
def test_gpu_global_costs_few_warps():
    """A few problems past shared memory on 2 and 4 warps, and on more threads
    than columns (those threads' loads stay inside the row), ties and
    forbidden pairs included: small enough for compute-sanitizer."""
    for family, shape, block_threads in ((0, (100, 300), 64), (1, (300, 120), 128),
                                         (2, (120, 300), 64), (0, (100, 300), 512)):
        c = random_stack(family, batch=3, shape=shape, dtype=np.float64)
        if np.isinf(c).any():  # keep every problem feasible: an allowed diagonal
            k = min(shape)
            c[:, np.arange(k), np.arange(k)] = 1
        rows, cols, info = solve_batch(c, method="gpu-sap", device="cuda",
                                       block_threads=block_threads)
        assert not info["shared_costs"] and info["block_threads"] == block_threads
        assert_optimal(c, rows, cols)


@gpu
def test_gpu_bad_variant_is_refused(monkeypatch):
    monkeypatch.setenv("MATCHFLOW_GPU_SAP_CARVEOUT", "l3")
    with pytest.raises(ValueError, match="MATCHFLOW_GPU_SAP_CARVEOUT"):
        batch_linear_sum_assignment(np.zeros((1, 4, 4)), method="gpu-sap")


@gpu
def test_gpu_errors_name_the_index():
    c = np.random.default_rng(6).random((50, 10, 12)).astype(np.float32)
    c[17, 3, :] = np.inf
    c[30, :, :] = np.inf
    with pytest.raises(ValueError, match=r"^cost matrix is infeasible \(batch index 17\)$"):
        batch_linear_sum_assignment(c, method="gpu-sap")
    c[12, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"invalid numeric entries \(batch index 12\)"):
        batch_linear_sum_assignment(c, method="gpu-sap")


@gpu
@pytest.mark.parametrize("n, dtype", [(16, np.float32), (300, np.float64)])  # shared, global costs
@pytest.mark.parametrize("maximize", [False, True])
def test_gpu_square_infeasible_by_a_column(n, dtype, maximize):
    """Square problems take a column reduction after the row reduction: a
    column with no allowed row (every row still has one) is found there."""
    c = np.random.default_rng(7).random((6, n, n)).astype(dtype)
    forbidden = -np.inf if maximize else np.inf
    c[2, :, n // 3] = forbidden  # each row keeps allowed columns
    c[4, 1, :] = forbidden       # a row with none
    with pytest.raises(ValueError, match=r"^cost matrix is infeasible \(batch index 2\)$"):
        batch_linear_sum_assignment(c, maximize, method="gpu-sap")
    c[2, :, n // 3] = 0.5
    with pytest.raises(ValueError, match=r"^cost matrix is infeasible \(batch index 4\)$"):
        batch_linear_sum_assignment(c, maximize, method="gpu-sap")


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("maximize, bad", [(False, np.nan), (False, -np.inf),
                                           (True, np.nan), (True, np.inf)])
def test_gpu_global_invalid_entries(dtype, maximize, bad):
    """Costs past shared memory are checked in the row-minima pass, in the
    costs' own type: NaN, and the infinity that is -inf after the sign."""
    c = np.random.default_rng(9).random((5, 300, 400)).astype(dtype)
    c[3, 299, 399] = bad  # the last entry of a row slice
    c[4, 0, 0] = bad
    with pytest.raises(ValueError, match=r"invalid numeric entries \(batch index 3\)"):
        batch_linear_sum_assignment(c, maximize, method="gpu-sap")


@gpu
@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (4, 0)])
def test_gpu_empty(shape):
    rows, cols = batch_linear_sum_assignment(np.zeros((3, *shape)), method="gpu-sap")
    assert rows.shape == (3, 0)
    rows, cols = batch_linear_sum_assignment(np.zeros((0, 3, 5)), method="gpu-sap")
    assert rows.shape == (0, 3)


@gpu
def test_gpu_too_wide_is_refused():
    with pytest.raises(ValueError, match="omp-sap"):
        batch_linear_sum_assignment(np.zeros((1, 2, 20000), dtype=np.float32), method="gpu-sap")

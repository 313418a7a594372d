"""Multi-GPU assignment (paper 001's multi-GPU Hungarian, _lsap_multi.py):
CU-TREE's column split ("gpu-tree") and CU-CLASS's row split ("gpu-classic").

Logical parts on one GPU (a GPU listed several times) run the same code as
parts on several GPUs, so every test here runs on a one-GPU machine; with
two or more GPUs the same tests also run over distinct GPUs.  Lists of
"cpu" parts run the splits' CPU references (split_tree.cpp,
split_classic.cpp: the same exchanges, claims and path walks), so the
splits' logic is checked on machines without a GPU too.  Every answer is
checked against SciPy and by its dual certificate, on several runs."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow
from matchflow import _core, linear_sum_assignment, solve_assignment

from conftest import GPU_REPEATS, requires_cuda
from oracles import assert_certificate


CPU_LISTS = [["cpu", "cpu"], ["cpu"] * 3]


def _gpu_lists():
    if not matchflow.cuda_available():
        return []
    lists = [["cuda:0", "cuda:0"], ["cuda:0"] * 3]
    if matchflow._device.device_count() >= 2:
        lists += [["cuda:0", "cuda:1"], "cuda:all", ["cuda:1", "cuda:0", "cuda:1", "cuda:0"]]
    return lists


DEVICE_LISTS = CPU_LISTS + _gpu_lists()
SPLITS = [CPU_LISTS[0]] + _gpu_lists()[:1]  # one CPU split, one GPU split where there is one


@pytest.fixture(params=["gpu-tree", "gpu-classic"])
def method(request):
    """Both splits: CU-TREE's columns, CU-CLASS's rows."""
    return request.param


def _label(method, device):
    """The result's method: the split's, or its CPU reference's."""
    if "cpu" in device:
        return {"gpu-tree": "tree-split", "gpu-classic": "classic-split"}[method]
    return method


def _repeats(device):
    return 1 if "cpu" in device else GPU_REPEATS


def _costs(rng, shape, dtype, spread):
    if np.dtype(dtype).kind == "f":
        return (rng.random(shape) * spread).astype(dtype)
    return rng.integers(0, spread + 1, size=shape).astype(dtype)


def _check(c, result, maximize=False):
    rows, cols = scipy_lsa(c, maximize=maximize)
    want = c[rows, cols].sum()
    if c.dtype.kind == "f":
        rel = 1e-5 if c.dtype == np.float32 else 1e-9
        assert result.cost == pytest.approx(float(want), rel=rel)
    else:
        assert result.cost == int(want)
    assert_certificate(c, result, maximize=maximize)


# ---- the argument checks (no GPU needed) -------------------------------------------

@pytest.mark.parametrize("device,error", [
    ([], ValueError), (["cpu", "cuda:0"], ValueError), (["cuda:0", "auto"], ValueError),
    (["cuda:all"], ValueError), ([0, 1], ValueError), (["cuda:0"] * 9, ValueError)])
def test_bad_device_lists(device, error):
    with pytest.raises(error):
        linear_sum_assignment(np.eye(3), device=device)


@pytest.mark.skipif(matchflow.cuda_available(), reason="needs a machine without a GPU")
@pytest.mark.parametrize("device", ["cuda:all", ["cuda:0", "cuda:1"], ["cuda:0"]])
def test_no_gpu_raises_runtime_error(device):
    with pytest.raises(RuntimeError, match="CUDA device"):
        solve_assignment(np.eye(4), device=device)


@pytest.mark.parametrize("device", [["cpu", "cpu"], ["cuda:0", "cuda:0"]])
@pytest.mark.parametrize("bad", ["omp-tree", "gpu-auction", "tree-split"])
def test_methods_that_do_not_split(device, bad):
    if "cpu" not in device and not matchflow.cuda_available():
        pytest.skip("needs a GPU")
    with pytest.raises(ValueError, match="does not run split"):
        solve_assignment(np.eye(4), method=bad, device=device)


def test_one_cpu_listed_is_the_cpu_solve():
    c = np.random.default_rng(10).integers(0, 50, size=(30, 30))
    r = solve_assignment(c, device=["cpu"])
    assert r.device == "cpu" and r.method != "tree-split"
    _check(c, r)


# ---- answers ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICE_LISTS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (7, 7), (60, 60), (300, 300), (40, 170), (170, 40),
                                   (513, 700)])
@pytest.mark.parametrize("maximize", [False, True])
def test_matches_scipy(device, dtype, shape, maximize, method):
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    for spread in (3, 10 * max(shape)):
        c = _costs(rng, shape, dtype, spread)
        for _ in range(_repeats(device)):
            r = solve_assignment(c, maximize=maximize, method=method, device=device)
            if device != "cuda:all":  # which keeps these small problems on one GPU
                # every part holds a column (a row: of the view with no more rows than columns)
                parts = min(len(device), (min if method == "gpu-classic" else max)(shape))
                assert r.device.count(device[0][:3]) == parts
                assert r.method == _label(method, device) or parts == 1
            _check(c, r, maximize)


@requires_cuda
def test_one_gpu_listed_is_the_single_gpu_solve():
    c = np.random.default_rng(1).integers(0, 50, size=(40, 40))
    r = solve_assignment(c, device=["cuda:0"])
    assert r.device == "cuda:0"
    _check(c, r)


@pytest.mark.parametrize("device", SPLITS)
def test_device_names_every_part(device, method):
    c = np.random.default_rng(2).integers(0, 50, size=(30, 30))
    r = solve_assignment(c, method=method, device=device)
    assert r.method == _label(method, device)
    assert r.device == r.stats.device == ",".join(device)
    assert r.stats.iterations >= 1 and r.stats.augmenting_paths == 30
    assert r.stats.paths_per_iteration.sum() == r.stats.augmenting_paths


@pytest.mark.parametrize("device", SPLITS)
def test_adversarial_costs(device, method):
    n = 200
    i, j = np.indices((n, n))
    cases = [np.zeros((n, n), np.int64),             # every assignment optimal
             (i * j).astype(np.int64),               # Machol-Wien-like: long paths
             np.abs(i - j).astype(np.int32),
             np.full((n, n), 2**31 - 1, np.int32),   # int32's largest
             np.full((n, n), -2**31, np.int32)]      # its complement overflows int32
    for c in cases:
        for maximize in (False, True):
            r = solve_assignment(c, maximize=maximize, method=method, device=device)
            _check(c, r, maximize)


@pytest.mark.parametrize("device", SPLITS)
def test_forbidden_entries(device, method):
    rng = np.random.default_rng(3)
    for shape in [(50, 50), (30, 80), (80, 30)]:
        c = rng.random(shape)
        c[rng.random(shape) < 0.6] = np.inf
        try:
            rows, cols = scipy_lsa(c)
        except ValueError:
            with pytest.raises(ValueError, match="infeasible"):
                solve_assignment(c, method=method, device=device)
            continue
        _check(c, solve_assignment(c, method=method, device=device))
        cm = -c
        _check(cm, solve_assignment(cm, maximize=True, method=method, device=device), maximize=True)


@pytest.mark.parametrize("device", SPLITS)
def test_infeasible(device, method):
    c = np.ones((6, 6))
    c[:, 2] = np.inf                       # a column with no allowed row
    with pytest.raises(ValueError, match="infeasible"):
        solve_assignment(c, method=method, device=device)
    c = np.full((6, 6), np.inf)
    c[:4, :2] = 1.0                        # four rows share two columns:
    c[4:, :] = 1.0                         # every row and column has an entry,
    with pytest.raises(ValueError, match="infeasible"):   # but no perfect matching
        solve_assignment(c, method=method, device=device)


@pytest.mark.parametrize("device", SPLITS)
def test_invalid_entries(device, method):
    for bad in (np.nan, -np.inf):
        c = np.ones((5, 5))
        c[1, 1] = bad
        with pytest.raises(ValueError, match="invalid numeric entries"):
            solve_assignment(c, method=method, device=device)


@pytest.mark.parametrize("device", SPLITS)
def test_int64_overflow(device, method):
    c = np.full((4, 4), 2**61, np.int64)
    with pytest.raises(OverflowError):
        solve_assignment(c, method=method, device=device)
    rows, cols = linear_sum_assignment(c, method=method, device=device)  # SciPy: in float64
    assert sorted(cols.tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("device", SPLITS)
def test_memmap_and_strided_views(tmp_path, device, method):
    rng = np.random.default_rng(4)
    c = rng.integers(0, 1000, size=(300, 500)).astype(np.int32)
    np.save(tmp_path / "c.npy", c)
    m = np.load(tmp_path / "c.npy", mmap_mode="r")
    _check(c, solve_assignment(m, method=method, device=device))
    wide = rng.integers(0, 1000, size=(200, 900))
    view = wide[:, 100:700]                # rows strided, elements contiguous: read as it is
    _check(np.ascontiguousarray(view), solve_assignment(view, method=method, device=device))
    f = np.asfortranarray(c[:, :300])      # solved as its transpose, no copy
    _check(np.ascontiguousarray(f), solve_assignment(f, method=method, device=device))
    _check(c[:, ::2], solve_assignment(c[:, ::2], method=method, device=device))


@pytest.mark.parametrize("device", SPLITS)
def test_more_parts_than_columns(device, method):
    c = np.array([[3, 1], [2, 5]])
    _check(c, solve_assignment(c, method=method, device=[device[0]] * 4))


# ---- column blocks in GPU memory ------------------------------------------------

@requires_cuda
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("maximize", [False, True])
def test_cupy_blocks(dtype, maximize):
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    c = _costs(rng, (120, 150), dtype, 500)
    devices = [0, 0, 0] if matchflow._device.device_count() < 2 else [0, 1, 0]
    cuts = [0, 40, 100, 150]
    blocks = []
    for p, d in enumerate(devices):
        with cupy.cuda.Device(d):
            blocks.append(cupy.asarray(c[:, cuts[p]:cuts[p + 1]]))
    for _ in range(GPU_REPEATS):
        r = solve_assignment(blocks, maximize=maximize)
        assert isinstance(r.col_ind, np.ndarray)
        _check(c, r, maximize)
    rows, cols = linear_sum_assignment(blocks, maximize=maximize)
    assert c[rows, cols].sum() == pytest.approx(r.cost)


@requires_cuda
def test_torch_blocks():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    c = rng.integers(0, 100, size=(64, 64)).astype(np.int32)
    blocks = [torch.as_tensor(c[:, :20], device="cuda:0").contiguous(),
              torch.as_tensor(c[:, 20:], device="cuda:0").contiguous()]
    _check(c, solve_assignment(blocks))


@requires_cuda
def test_bad_blocks():
    cupy = pytest.importorskip("cupy")
    a = cupy.zeros((4, 3), cupy.float32)
    with pytest.raises(TypeError, match="share one dtype"):
        solve_assignment([a, cupy.zeros((4, 3), cupy.float64)])
    with pytest.raises(ValueError, match="share the rows"):
        solve_assignment([a, cupy.zeros((5, 3), cupy.float32)])
    with pytest.raises(ValueError, match="C-contiguous"):
        solve_assignment([a, cupy.zeros((4, 6), cupy.float32)[:, ::2]])
    with pytest.raises(ValueError, match="transpose"):
        solve_assignment([cupy.zeros((9, 3), cupy.float32)])
    with pytest.raises(ValueError, match="own GPU"):
        solve_assignment(a, device="cuda:all")
    with pytest.raises(ValueError, match="column blocks"):
        solve_assignment([a, a], method="gpu-classic")


# ---- faults --------------------------------------------------------------------------

@requires_cuda
@pytest.mark.parametrize("split_rows", [False, True])
def test_a_part_that_never_starts_times_out(split_rows):
    """Part 1 is made and connected but never launched: part 0 must stop
    with a clear error within its timeout, and the GPU stays usable."""
    c = np.random.default_rng(7).integers(0, 100, size=(50, 50)).astype(np.int64)
    if split_rows:
        parts = [_core.LsapPart(c[25 * p:25 * p + 25], 0, c.dtype, 0, p, 2, 2, 50, 50, 0, 50,
                                False, 1.0, row0=25 * p, height=25, split_rows=True)
                 for p in range(2)]
    else:
        parts = [_core.LsapPart(c[:, 25 * p:], 0, c.dtype, 0, p, 2, 2, 50, 50, 25 * p, 25,
                                False, 1.0) for p in range(2)]
    _core.connect_lsap_parts(parts)
    parts[0].launch()
    with pytest.raises(RuntimeError, match="heard nothing"):
        parts[0].finish(True)
    del parts
    method = "gpu-classic" if split_rows else "gpu-tree"
    _check(c, solve_assignment(c, method=method, device=["cuda:0", "cuda:0"]))


@requires_cuda
def test_out_of_memory_is_memory_error_and_frees():
    """A problem beyond the GPU's memory: MemoryError before any solve, and
    the memory taken by the parts made before it is given back."""
    free_before = _core.get_device_info(0).get("free_memory")
    n = 200_000                               # 160 GB of int32
    row = np.zeros((1, n), np.int32)
    huge = np.broadcast_to(row, (n, n))       # rows of stride 0: never materialised
    with pytest.raises(MemoryError):
        solve_assignment(huge, device=["cuda:0", "cuda:0"])
    free_after = _core.get_device_info(0).get("free_memory")
    if free_before is not None:
        assert free_after >= free_before - (256 << 20)
    c = np.random.default_rng(8).integers(0, 9, size=(20, 20))
    _check(c, solve_assignment(c, device=["cuda:0", "cuda:0"]))


@requires_cuda
def test_cuda_all_keeps_small_problems_on_one_gpu():
    c = np.random.default_rng(9).integers(0, 50, size=(40, 40))
    r = solve_assignment(c, device="cuda:all")
    assert r.device == "cuda:0"
    _check(c, r)


@pytest.mark.parametrize("device", SPLITS)
def test_random_cases(device, method):
    """Many small random problems: shapes either way, 2 to 8 parts, ties,
    forbidden entries, maximisation; SciPy's optimum or its infeasibility."""
    rng = np.random.default_rng(11)
    cases = 150 if "cpu" in device else 40
    for case in range(cases):
        shape = tuple(int(x) for x in rng.integers(1, 40, size=2))
        parts = [device[0]] * int(rng.integers(2, 9))
        dtype = [np.int32, np.int64, np.float32, np.float64][case % 4]
        c = _costs(rng, shape, dtype, int(rng.choice([1, 5, 1000])))
        maximize = bool(case % 3 == 0)
        if dtype in (np.float32, np.float64) and case % 5 == 0:
            c[rng.random(shape) < 0.5] = -np.inf if maximize else np.inf
        try:
            scipy_lsa(c, maximize=maximize)
        except ValueError:
            with pytest.raises(ValueError, match="infeasible"):
                solve_assignment(c, maximize=maximize, method=method, device=parts)
            continue
        _check(c, solve_assignment(c, maximize=maximize, method=method, device=parts), maximize)

"""Arrays in GPU memory in and out (CuPy, PyTorch, the CUDA Array Interface).

Two parts.  The recognition and host-side checks run everywhere, on fake
objects that expose ``__cuda_array_interface__`` (no GPU, no CuPy, no torch
needed).  The solves run where CuPy or PyTorch, a CUDA build and a GPU exist,
and skip elsewhere: results against SciPy, the kind and device of what comes
back, stream ordering, and that a large device input is never copied to the
host.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import structural_rank as scipy_rank

import matchflow
from matchflow import generators
from matchflow import _device_arrays as darr

from conftest import GPU_REPEATS

HAVE_CUPY = importlib.util.find_spec("cupy") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None


class FakeDeviceArray:
    """An object that only speaks the CUDA Array Interface (version 3)."""

    def __init__(self, shape, typestr="<i4", strides=None, ptr=0x7f0000000000, stream=1):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (ptr, False), "strides": strides,
                                         "version": 3, "stream": stream}


class FakeDLPack:
    def __init__(self, device_type):
        self.device_type = device_type

    def __dlpack__(self, stream=None):
        raise AssertionError("never consumed by recognition")

    def __dlpack_device__(self):
        return (self.device_type, 0)


# ---- recognition and host-side checks (run everywhere) ----------------------------------


def test_recognition_without_libraries():
    assert darr.is_device_array(FakeDeviceArray((3,)))
    assert not darr.is_device_array(np.zeros(3))
    assert not darr.is_device_array([1, 2])
    assert darr.is_device_array(FakeDLPack(2))       # kDLCUDA
    assert darr.is_device_array(FakeDLPack(13))      # kDLCUDAManaged
    assert not darr.is_device_array(FakeDLPack(1))   # kDLCPU
    triple = (FakeDeviceArray((4,)), FakeDeviceArray((5,)), (3, 4))
    assert darr.is_device_sparse(triple)
    assert not darr.is_device_sparse((np.zeros(4), np.zeros(5), (3, 4)))
    assert not darr.is_device_sparse(sp.csr_array(np.eye(2)))
    assert not darr.is_device_sparse(FakeDeviceArray((3, 3)))


def test_interface_layout():
    a = darr.describe_interface(FakeDeviceArray((2, 3), "<f8", ptr=4096, stream=77))
    assert (a.ptr, a.shape, a.dtype, a.stream, a.kind) == (4096, (2, 3), np.float64, 77,
                                                           "interface")
    assert a.contiguous and a.nbytes == 48
    assert darr.describe_interface(FakeDeviceArray((2, 3), "<f8", strides=(24, 8))).contiguous
    assert not darr.describe_interface(FakeDeviceArray((2, 3), "<f8", strides=(8, 16))).contiguous
    assert darr.describe_interface(FakeDeviceArray((3,), stream=None)).stream == 0
    with pytest.raises(TypeError, match="unknown data type"):
        darr.describe_interface(FakeDeviceArray((3,), "<zz"))
    broken = FakeDeviceArray((3,))
    broken.__cuda_array_interface__ = {"shape": (3,)}
    with pytest.raises(TypeError, match="lacks"):
        darr.describe_interface(broken)


def _triple(n_rows=3, n_cols=4, nnz=5, ptr_type="<i8", id_type="<i4", **kw):
    return (FakeDeviceArray((n_rows + 1,), ptr_type, **kw), FakeDeviceArray((nnz,), id_type),
            (n_rows, n_cols))


def test_sparse_pattern_host_checks():
    g = darr.sparse_pattern(_triple(), read=darr.describe_interface)
    assert (g.n_rows, g.n_cols, g.nnz, g.transposed) == (3, 4, 5, False)
    assert (g.indptr.dtype, g.indices.dtype) == (np.int64, np.int32)
    bad = [
        (_triple(ptr_type="<f8"), ValueError, "indptr must have data type int32 or int64"),
        (_triple(id_type="<u4"), ValueError, "indices must have data type"),
        (_triple(id_type=">i4"), ValueError, "indices must have data type"),
        ((FakeDeviceArray((3,)), FakeDeviceArray((5,)), (3, 4)), ValueError,
         r"index pointer size \(3\) should be \(4\)"),
        ((FakeDeviceArray((4, 1)), FakeDeviceArray((5,)), (3, 4)), ValueError,
         "indptr must be one-dimensional"),
        (_triple(strides=(16,)), ValueError, "indptr must be contiguous"),
        ((FakeDeviceArray((4,)), FakeDeviceArray((5,)), (3,)), ValueError, "pair of integers"),
        ((FakeDeviceArray((4,)), FakeDeviceArray((5,)), (3, -1)), ValueError, "non-negative"),
        ((FakeDeviceArray((4,)), FakeDeviceArray((5,)), (3.0, 4)), ValueError, "pair of integers"),
        ((FakeDeviceArray((2**31,)), FakeDeviceArray((5,)), (2**31 - 1, 4)), ValueError,
         "at most"),
    ]
    for triple, exc, message in bad:
        with pytest.raises(exc, match=message):
            darr.sparse_pattern(triple, read=darr.describe_interface)


def test_device_choice():
    for ok in ("auto", "cuda", "cuda:2"):
        darr.check_device_choice(ok, 2, "graph")
    with pytest.raises(ValueError, match="graph lives on cuda:2"):
        darr.check_device_choice("cpu", 2, "graph")
    with pytest.raises(ValueError, match="lives on cuda:2"):
        darr.check_device_choice("cuda:0", 2, "graph")
    with pytest.raises(TypeError, match="device must be a string"):
        darr.check_device_choice(0, 0, "graph")


@pytest.mark.skipif(HAVE_CUPY or HAVE_TORCH, reason="needs neither CuPy nor PyTorch installed")
def test_foreign_device_array_without_libraries():
    with pytest.raises(TypeError, match="CuPy or PyTorch"):
        matchflow.maximum_bipartite_matching(_triple())


def test_recognition_imports_nothing():
    code = textwrap.dedent("""
        import sys, numpy as np, scipy.sparse as sp, matchflow
        from matchflow import _device_arrays as darr
        class F:
            __cuda_array_interface__ = {"shape": (2,), "typestr": "<i4", "data": (8, False)}
        assert darr.is_device_array(F()) and darr.is_device_sparse((F(), F(), (1, 1)))
        matchflow.maximum_bipartite_matching(sp.csr_array(np.eye(3)))
        matchflow.linear_sum_assignment(np.eye(3))
        loaded = [m for m in ("cupy", "torch", "cupyx") if m in sys.modules]
        assert not loaded, loaded
        print("OK")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OK"


# ---- solves on the GPU (CuPy / PyTorch, skipped elsewhere) -------------------------------

requires_gpu = pytest.mark.skipif(not matchflow.cuda_available(), reason="no usable CUDA device")
LIBS = [pytest.param("cupy", marks=pytest.mark.skipif(not HAVE_CUPY, reason="no CuPy")),
        pytest.param("torch", marks=pytest.mark.skipif(not HAVE_TORCH, reason="no PyTorch"))]


def _to_device(lib, host: np.ndarray):
    if lib == "cupy":
        import cupy
        return cupy.asarray(host)
    import torch
    return torch.as_tensor(host, device="cuda")


def _to_host(x) -> np.ndarray:
    if hasattr(x, "get"):
        return x.get()
    return x.cpu().numpy()


def _kind_ok(lib, x, device=0) -> bool:
    if lib == "cupy":
        import cupy
        return isinstance(x, cupy.ndarray) and x.device.id == device
    import torch
    return isinstance(x, torch.Tensor) and x.is_cuda and x.device.index == device


def _graphs():
    rng = np.random.default_rng(7)
    yield sp.random(300, 400, density=0.01, format="csr", random_state=rng)   # deficient
    yield sp.random(500, 500, density=0.006, format="csr", random_state=rng)
    yield sp.csr_array(np.eye(64) + np.eye(64, k=1))                          # perfect start
    yield sp.csr_array((50, 30))                                              # no edges
    yield sp.csr_array((0, 5))


def _check_matching(g, col4row: np.ndarray, row4col: np.ndarray, rank: int):
    g = sp.csr_array(g)
    rows = np.flatnonzero(col4row >= 0)
    assert len(rows) == rank == int(np.count_nonzero(row4col >= 0))
    assert np.all(row4col[col4row[rows]] == rows)                # consistent pairs
    for r in rows:                                                 # every pair is an edge
        assert col4row[r] in g.indices[g.indptr[r]:g.indptr[r + 1]]


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("method", ["auto", "gpu-pr", "gpu-apfb", "gpu-apsb"])
@pytest.mark.parametrize("ptr_dtype,id_dtype", [(np.int32, np.int32), (np.int64, np.int64),
                                                (np.int32, np.int64)])
def test_matching_from_device_triple(lib, method, ptr_dtype, id_dtype):
    for g in _graphs():
        rank = scipy_rank(g) if g.shape[0] and g.shape[1] else 0
        triple = (_to_device(lib, g.indptr.astype(ptr_dtype)),
                  _to_device(lib, g.indices.astype(id_dtype)), g.shape)
        for _ in range(GPU_REPEATS):
            r = matchflow.maximum_matching(triple, method=method)
            assert _kind_ok(lib, r.col4row) and _kind_ok(lib, r.row4col)
            assert r.device == "cuda:0" and r.cardinality == rank
            _check_matching(g, _to_host(r.col4row), _to_host(r.row4col), rank)
            perm = matchflow.maximum_bipartite_matching(triple, perm_type="column",
                                                        method=method)
            assert _kind_ok(lib, perm) and int((_to_host(perm) >= 0).sum()) == rank


@requires_gpu
@pytest.mark.skipif(not HAVE_CUPY, reason="no CuPy")
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_matching_from_cupy_sparse(fmt):
    import cupyx.scipy.sparse as csp
    g = sp.random(400, 300, density=0.01, format="csr", random_state=3)
    dev = csp.csr_matrix(g) if fmt == "csr" else csp.csc_matrix(g.tocsc())
    rank = scipy_rank(g)
    assert matchflow.structural_rank(dev) == rank
    r = matchflow.maximum_matching(dev)
    assert r.col4row.shape == (400,) and r.row4col.shape == (300,)
    _check_matching(g, r.col4row.get(), r.row4col.get(), rank)
    perm = matchflow.maximum_bipartite_matching(dev, perm_type="row")
    assert perm.shape == (300,) and int((perm >= 0).sum()) == rank


@requires_gpu
@pytest.mark.skipif(not HAVE_TORCH, reason="no PyTorch")
# torch 2.11 warns on building a sparse CSR tensor (the invariant checks,
# check_invariants=True notwithstanding, and the beta state): seen on the GPU host.
@pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled")
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
def test_matching_from_torch_sparse_csr():
    import torch
    g = sp.random(200, 250, density=0.02, format="csr", random_state=5)
    t = torch.sparse_csr_tensor(torch.as_tensor(g.indptr.astype(np.int64)),
                                torch.as_tensor(g.indices.astype(np.int64)),
                                torch.ones(g.nnz), size=g.shape, device="cuda",
                                check_invariants=True)
    r = matchflow.maximum_matching(t)
    assert _kind_ok("torch", r.col4row)
    _check_matching(g, _to_host(r.col4row), _to_host(r.row4col), scipy_rank(g))


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("ptr_dtype", [np.int32, np.int64])
def test_device_sample_counts_as_host_one(lib, ptr_dtype):
    """The skew test counts the same rows' emptiness in GPU memory (one
    block) as in host memory, at steps of 1, 2 and with a short last one,
    and so reaches the same answer: a power-law graph skewed, a uniform
    random one not."""
    from matchflow._matching import SKEW_SAMPLE_ROWS, _empty_sampled_rows, _raw_csr, _skewed_degrees
    graphs = [sp.csr_array(sp.random_array((rows, 50), density=0.05, rng=rows))
              for rows in (1, 7, 4096, 4097, 8192, 12345)]
    skewed = generators.power_law(1 << 17, degree=4.0, seed=1)
    uniform = generators.uniform_random(1 << 17, degree=3.0, seed=1)
    for g in graphs + [skewed, uniform, sp.csr_array((0, 5))]:
        dev = darr.sparse_pattern((_to_device(lib, g.indptr.astype(ptr_dtype)),
                                   _to_device(lib, g.indices), g.shape))
        rows = g.shape[0]
        step = -(-rows // SKEW_SAMPLE_ROWS) if rows else 1
        picked = range(0, rows, step)
        want = (sum(int(g.indptr[r] == g.indptr[r + 1]) for r in picked), len(picked))
        got = _empty_sampled_rows(dev)
        assert got == _empty_sampled_rows(_raw_csr(g))
        assert got == (want if rows else None)
        assert _skewed_degrees(dev) == _skewed_degrees(_raw_csr(g))
        assert _skewed_degrees(dev) == (g is skewed)


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_malformed_device_csr_is_refused(lib):
    ptr = np.array([0, 2, 3, 5])
    ids = np.array([0, 1, 1, 2, 3])
    cases = [
        (ptr, np.array([0, 1, 1, 2, 4]), "indices must be < 4"),
        (ptr, np.array([0, 1, -1, 2, 3]), "indices must be >= 0"),
        (np.array([1, 2, 3, 5]), ids, "index pointer should start with 0"),
        (np.array([0, 3, 2, 5]), ids, "non-decreasing"),
        (np.array([0, 2, 3, 4]), ids, "last value of index pointer"),
    ]
    for method in ("gpu-pr", "gpu-apfb"):
        for p, i, message in cases:
            triple = (_to_device(lib, p), _to_device(lib, i), (3, 4))
            with pytest.raises(ValueError, match=message):
                matchflow.maximum_bipartite_matching(triple, method=method)


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_device_input_refuses_host_choices(lib):
    g = sp.csr_array(np.eye(4))
    triple = (_to_device(lib, g.indptr), _to_device(lib, g.indices), g.shape)
    with pytest.raises(ValueError, match="lives on cuda:0"):
        matchflow.maximum_bipartite_matching(triple, device="cpu")
    with pytest.raises(ValueError, match="runs on the CPU"):
        matchflow.maximum_matching(triple, method="pr")
    with pytest.raises(ValueError, match="karp-sipser"):
        matchflow.maximum_matching(triple, init="karp-sipser")


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_matching_is_ordered_on_the_callers_stream(lib):
    """Launched on a non-default stream and consumed there with no
    synchronisation: the consumer sees the finished matching.  A long kernel
    queued first on that stream keeps the stream busy, so work put on any
    other stream would run (and be read) before it."""
    g = sp.random(20000, 20000, density=4e-4, format="csr", random_state=11)
    rank = scipy_rank(g)
    if lib == "cupy":
        import cupy
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            ptr, ids = cupy.asarray(g.indptr), cupy.asarray(g.indices)
            busy = cupy.random.random((4096, 4096))
            for _ in range(GPU_REPEATS):
                _ = busy @ busy  # queued ahead of the matching on s
                perm = matchflow.maximum_bipartite_matching((ptr, ids, g.shape),
                                                            perm_type="column")
                count = (perm >= 0).sum()          # consumer kernel on s, no sync
                assert int(count.get(stream=s)) == rank
    else:
        import torch
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            ptr = torch.as_tensor(g.indptr, device="cuda")
            ids = torch.as_tensor(g.indices, device="cuda")
            busy = torch.rand(4096, 4096, device="cuda")
            for _ in range(GPU_REPEATS):
                _ = busy @ busy
                perm = matchflow.maximum_bipartite_matching((ptr, ids, g.shape),
                                                            perm_type="column")
                count = (perm >= 0).sum()
                assert int(count.item()) == rank


NO_HOST_COPY = textwrap.dedent("""
    import resource, sys
    import cupy, matchflow
    rows, degree = 1 << 22, 32                     # 134M edges: 1 GiB of int64 ids
    ptr = cupy.arange(0, rows * degree + 1, degree, dtype=cupy.int64)
    ids = cupy.random.randint(0, rows, size=rows * degree, dtype=cupy.int64)
    small = (cupy.arange(0, 65, dtype=cupy.int64), cupy.arange(64, dtype=cupy.int64), (64, 64))
    matchflow.maximum_bipartite_matching(small, method="gpu-apfb")   # modules loaded
    cupy.cuda.Device().synchronize()
    device_bytes = ptr.nbytes + ids.nbytes
    # A host copy of the input would raise the peak resident set by
    # device_bytes; allow half (no RLIMIT_AS: CUDA maps device memory into
    # the address space, and the cap then fails cudaMalloc itself).
    cap = device_bytes // 2
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    r = matchflow.maximum_matching((ptr, ids, (rows, rows)), method="gpu-apfb")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert r.cardinality > rows * 0.9, r.cardinality
    assert rss - rss0 < cap, (rss - rss0, cap)
    print("OK", device_bytes, rss - rss0)
""")


@requires_gpu
@pytest.mark.skipif(not HAVE_CUPY, reason="no CuPy")
def test_device_input_is_not_copied_to_the_host():
    out = subprocess.run([sys.executable, "-c", NO_HOST_COPY], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("OK")


# ---- dense and batched assignment from GPU memory ------------------------------------------

from scipy.optimize import linear_sum_assignment as scipy_lsa  # noqa: E402


def _cost_cases():
    rng = np.random.default_rng(21)
    yield rng.random((60, 60))                                   # float64
    yield rng.random((40, 70)).astype(np.float32)                # wide float32
    yield rng.random((70, 40))                                   # tall: solved transposed
    yield rng.integers(0, 10, (80, 80))                          # int64, many ties (narrowed)
    yield rng.integers(-(2**40), 2**40, (30, 30))                # int64 that stays int64
    yield rng.integers(0, 100, (50, 50)).astype(np.int32)
    yield rng.integers(0, 2, (20, 25)).astype(bool)
    inf = rng.random((30, 30))
    inf[rng.random((30, 30)) < 0.3] = np.inf                     # forbidden pairs, feasible
    np.fill_diagonal(inf, 1.0)
    yield inf


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("method", ["auto", "gpu-tree", "gpu-classic", "gpu-auction"])
@pytest.mark.parametrize("maximize", [False, True])
def test_assignment_from_device(lib, method, maximize):
    for c in _cost_cases():
        if maximize and np.isinf(c).any():
            c = np.where(np.isinf(c), -np.inf, c)
        r0, k0 = scipy_lsa(c, maximize)
        best = c[r0, k0].sum()
        dev = _to_device(lib, c)
        for _ in range(GPU_REPEATS):
            res = matchflow.solve_assignment(dev, maximize, method=method)
            for x in (res.row_ind, res.col_ind, res.u, res.v):
                assert _kind_ok(lib, x)
            rows, cols = _to_host(res.row_ind), _to_host(res.col_ind)
            assert np.all(np.diff(rows) > 0) and len(np.unique(cols)) == len(cols)
            assert len(rows) == min(c.shape) and res.device == "cuda:0"
            got = c[rows, cols].sum()
            if c.dtype.kind == "f":
                assert got == pytest.approx(best, rel=1e-5)
                assert res.cost == pytest.approx(best, rel=1e-5)
            else:
                assert got == best and res.cost == best
            u, v = _to_host(res.u).astype(np.float64), _to_host(res.v).astype(np.float64)
            slack = c - u[:, None] - v[None, :]
            finite = np.isfinite(c)
            tol = 1e-3 * max(1.0, float(np.abs(c[finite]).max()))
            assert (slack[finite] >= -tol).all() if not maximize else (slack[finite] <= tol).all()
            r, k = matchflow.linear_sum_assignment(dev, maximize, method=method)
            assert _kind_ok(lib, r) and _kind_ok(lib, k)


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_assignment_from_device_errors(lib):
    nan = np.eye(3)
    nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="invalid numeric entries"):
        matchflow.linear_sum_assignment(_to_device(lib, nan))
    minus = np.eye(3)
    minus[0, 0] = -np.inf
    with pytest.raises(ValueError, match="invalid numeric entries"):
        matchflow.linear_sum_assignment(_to_device(lib, minus))
    infeasible = np.full((3, 3), np.inf)
    infeasible[:, 0] = 1.0
    with pytest.raises(ValueError, match="infeasible"):
        matchflow.linear_sum_assignment(_to_device(lib, infeasible))
    with pytest.raises(ValueError, match="2-D"):
        matchflow.linear_sum_assignment(_to_device(lib, np.zeros(3)))
    with pytest.raises(ValueError, match="runs on the CPU"):
        matchflow.linear_sum_assignment(_to_device(lib, np.eye(3)), method="omp-tree")
    with pytest.raises(ValueError, match="lives on cuda:0"):
        matchflow.linear_sum_assignment(_to_device(lib, np.eye(3)), device="cpu")
    r, k = matchflow.linear_sum_assignment(_to_device(lib, np.zeros((0, 4))))
    assert _kind_ok(lib, r) and r.shape[0] == 0


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("maximize", [False, True])
def test_batched_from_device(lib, maximize):
    rng = np.random.default_rng(9)
    stacks = [rng.random((50, 12, 12)), rng.random((20, 9, 16)).astype(np.float32),
              rng.random((20, 16, 9)), rng.integers(0, 5, (30, 10, 10)),
              rng.integers(0, 50, (30, 10, 10)).astype(np.int32),
              rng.integers(0, 9, (30, 8, 8)).astype(np.uint8)]
    for c in stacks:
        dev = _to_device(lib, c)
        for _ in range(GPU_REPEATS):
            rows, cols = matchflow.batch_linear_sum_assignment(dev, maximize)
            assert _kind_ok(lib, rows) and _kind_ok(lib, cols)
            rows, cols = _to_host(rows), _to_host(cols)
            for b in range(c.shape[0]):
                r0, k0 = scipy_lsa(c[b], maximize)
                assert c[b][rows[b], cols[b]].sum() == pytest.approx(c[b][r0, k0].sum(), rel=1e-5)
                assert np.all(np.diff(rows[b]) > 0)
    bad = rng.random((4, 5, 5))
    bad[2, 1, 1] = np.nan
    with pytest.raises(ValueError):
        matchflow.batch_linear_sum_assignment(_to_device(lib, bad))


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_assignment_is_ordered_on_the_callers_stream(lib):
    """As for matching: launched on a busy non-default stream, consumed
    there without synchronising."""
    c = np.random.default_rng(3).random((64, 300, 300))
    r0 = [scipy_lsa(c[b])[1] for b in range(c.shape[0])]
    if lib == "cupy":
        import cupy
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            dev, busy = cupy.asarray(c), cupy.random.random((4096, 4096))
            for _ in range(GPU_REPEATS):
                _ = busy @ busy
                rows, cols = matchflow.batch_linear_sum_assignment(dev)
                picked = cupy.take_along_axis(dev, cols[:, :, None], axis=2).sum(axis=(1, 2))
                got = picked.get(stream=s)
                want = [c[b][np.arange(300), r0[b]].sum() for b in range(c.shape[0])]
                np.testing.assert_allclose(got, want, rtol=1e-9)
    else:
        import torch
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            dev = torch.as_tensor(c, device="cuda")
            busy = torch.rand(4096, 4096, device="cuda")
            for _ in range(GPU_REPEATS):
                _ = busy @ busy
                rows, cols = matchflow.batch_linear_sum_assignment(dev)
                picked = torch.gather(dev, 2, cols[:, :, None]).sum(dim=(1, 2)).cpu().numpy()
                want = [c[b][np.arange(300), r0[b]].sum() for b in range(c.shape[0])]
                np.testing.assert_allclose(picked, want, rtol=1e-9)


NO_HOST_COPY_LAP = textwrap.dedent("""
    import resource
    import cupy, matchflow
    n = 12000                                      # 1.15 GB of int64 costs, many ties
    c = cupy.random.randint(0, n // 10, (n, n), dtype=cupy.int64)
    matchflow.linear_sum_assignment(cupy.random.random((64, 64)), method="gpu-tree")
    cupy.cuda.Device().synchronize()
    # No address-space cap here: CUDA maps device memory into it, so RLIMIT_AS
    # makes cudaMalloc fail (seen on the H100 host).  A host copy of the input
    # would raise the peak resident set by c.nbytes; allow half of it.
    cap = c.nbytes // 2
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    r, k = matchflow.linear_sum_assignment(c, method="gpu-tree")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert r.shape == (n,) and int((k >= 0).sum()) == n
    assert rss - rss0 < cap, (rss - rss0, cap)
    print("OK", c.nbytes, rss - rss0)
""")


@requires_gpu
@pytest.mark.skipif(not HAVE_CUPY, reason="no CuPy")
def test_device_costs_are_not_copied_to_the_host():
    out = subprocess.run([sys.executable, "-c", NO_HOST_COPY_LAP], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("OK")


# ---- host CSR/CSC to the GPU as SciPy holds it (checked on the device) ----------------------

from test_validation import _compressed_cases  # noqa: E402


@requires_gpu
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("ptr_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("method", ["gpu-pr", "gpu-apfb", "gpu-apsb"])
def test_host_csr_goes_to_the_gpu_as_it_is(fmt, index_dtype, ptr_dtype, method):
    for g in _graphs():
        g = sp.csr_array(g) if fmt == "csr" else sp.csc_array(g)
        g.indices, g.indptr = g.indices.astype(index_dtype), g.indptr.astype(ptr_dtype)
        rank = scipy_rank(sp.csr_matrix(g)) if min(g.shape) else 0
        for _ in range(GPU_REPEATS):
            r = matchflow.maximum_matching(g, method=method)
            assert isinstance(r.col4row, np.ndarray) and r.device == "cuda:0"
            assert r.cardinality == rank
            _check_matching(sp.csr_array(g), r.col4row, r.row4col, rank)


@requires_gpu
@pytest.mark.parametrize("name, bad", _compressed_cases(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_host_csr_checked_on_the_device_says_what_scipy_says(name, bad):
    with pytest.raises(ValueError) as scipy_error:
        bad.copy().check_format(full_check=True)
    for method in ("gpu-pr", "gpu-apfb"):
        with pytest.raises(ValueError) as ours:
            matchflow.maximum_bipartite_matching(bad.copy(), method=method)
        assert str(ours.value) == str(scipy_error.value)


@requires_gpu
@pytest.mark.parametrize("lib", LIBS)
def test_device_integer_costs_past_the_int64_bound(lib):
    c = np.array([[2**61, 1], [1, 2**61]], dtype=np.int64)
    with pytest.raises(OverflowError, match="too large to solve exactly"):
        matchflow.solve_assignment(_to_device(lib, c))
    r, k = matchflow.linear_sum_assignment(_to_device(lib, c))  # in float64, as SciPy
    assert _to_host(k).tolist() == [1, 0]

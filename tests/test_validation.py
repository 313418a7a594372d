"""Bad input gets a clear exception; every sparse format and index type works."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import matchflow
from matchflow import generators
from oracles import assert_maximum_matching, scipy_cardinality

FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]


def sample(seed=0, shape=(40, 60)):
    return sp.random_array(shape, density=0.05, rng=np.random.default_rng(seed), format="csr")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_every_sparse_format(fmt, kind):
    g = sample()
    x = g.asformat(fmt)
    if kind == "matrix":
        x = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix,
             "lil": sp.lil_matrix, "dok": sp.dok_matrix, "bsr": sp.bsr_matrix,
             "dia": sp.dia_matrix}[fmt](x)
    r = matchflow.maximum_matching(x, method="pr")
    assert_maximum_matching(g, r)
    assert matchflow.maximum_bipartite_matching(x).shape == (60,)


def test_int64_indices():
    g = sample(1)
    g64 = sp.csr_array((g.data, g.indices.astype(np.int64), g.indptr.astype(np.int64)),
                       shape=g.shape)
    assert g64.indices.dtype == np.int64
    assert matchflow.maximum_matching(g64).cardinality == scipy_cardinality(g)


def test_explicit_zeros_are_edges():
    g = sp.csr_array((np.zeros(3), np.array([0, 1, 2]), np.array([0, 1, 2, 3])), shape=(3, 3))
    assert g.nnz == 3
    assert matchflow.structural_rank(g) == 3


def test_duplicate_entries_do_not_crash_or_corrupt():
    # scipy#26160: SciPy's matching crashes on duplicate entries.
    rows = np.array([0, 0, 0, 1, 1, 2])
    cols = np.array([0, 0, 1, 0, 0, 0])
    g = sp.csr_array((np.ones(6), (rows, cols)), shape=(3, 3))
    g2 = sp.csr_array((np.ones(6), cols, np.array([0, 3, 5, 6])), shape=(3, 3))  # unsummed
    for graph in (g, g2):
        for method in ("pr", "pdbfs"):
            r = matchflow.maximum_matching(graph, method=method)
            assert r.cardinality == 2
            assert_maximum_matching(graph, r, expected=2)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3), (1, 1)])
def test_degenerate_shapes(shape):
    g = sp.csr_array(shape)
    for method in ("pr", "pdbfs"):
        r = matchflow.maximum_matching(g, method=method)
        assert r.cardinality == 0
        assert r.col4row.shape == (shape[0],) and r.row4col.shape == (shape[1],)
    assert matchflow.maximum_bipartite_matching(g, perm_type="column").shape == (shape[0],)
    assert matchflow.structural_rank(g) == 0


def test_dense_input_is_rejected_like_scipy():
    with pytest.raises(TypeError, match="graph must be sparse"):
        matchflow.maximum_bipartite_matching(np.eye(3))
    with pytest.raises(TypeError, match="Input must be sparse"):
        matchflow.structural_rank(np.eye(3))
    with pytest.raises(TypeError, match="graph must be sparse"):
        matchflow.maximum_matching([[1, 0], [0, 1]])


@pytest.mark.parametrize("kwargs, match", [
    ({"perm_type": "rows"}, "perm_type must be one of"),
    ({"method": "hopcroft"}, "method must be one of"),
    ({"device": "gpu"}, "device must be"),
    ({"device": "cuda:x"}, "device must be"),
    ({"method": "gpu-pr", "device": "cpu"}, "runs on a GPU"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        matchflow.maximum_bipartite_matching(sample(), **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"threads": 0}, "threads must be"),
    ({"threads": 1.5}, "threads must be"),
    ({"init": "greedy"}, "init must be"),
    ({"relabel_k": -1.0}, "relabel_k must be"),
    ({"relabel_k": float("nan")}, "relabel_k must be"),
    ({"bfs": "dfs"}, "bfs must be"),
    ({"layout": "xy"}, "layout must be"),
    ({"variant": "fast"}, "variant must be"),
])
def test_bad_tuning_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        matchflow.maximum_matching(sample(), **kwargs)


def test_device_must_be_a_string():
    with pytest.raises(TypeError, match="device must be a string"):
        matchflow.maximum_matching(sample(), device=0)


@pytest.mark.skipif(matchflow.cuda_available(), reason="a GPU is visible here")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_missing_gpu_is_a_runtime_error(device):
    with pytest.raises(RuntimeError, match="CUDA"):
        matchflow.maximum_matching(sample(), device=device)
    with pytest.raises(RuntimeError, match="CUDA"):
        matchflow.maximum_matching(sample(), method="gpu-pr")


def test_gpu_ordinal_out_of_range_is_a_runtime_error():
    with pytest.raises(RuntimeError):
        matchflow.maximum_matching(sample(), device="cuda:99")


def test_cpu_method_on_gpu_device_is_rejected():
    if not matchflow.cuda_available():
        pytest.skip("needs a visible GPU to reach the check")
    with pytest.raises(ValueError, match="runs on the CPU"):
        matchflow.maximum_matching(sample(), method="pr", device="cuda")


def _malformed():
    out = {}
    g = sp.csr_array(np.eye(4))
    bad = g.copy()
    bad.indices[1] = 17  # column out of range
    out["csr-index-out-of-range"] = bad
    bad = g.copy()
    bad.indptr[2] = 0  # offsets decreasing
    out["csr-indptr-decreasing"] = bad
    bad = sp.csc_array(np.eye(4))
    bad.indices[0] = -3
    out["csc-negative-index"] = bad
    bad = sp.coo_array(np.eye(4))
    bad.coords[1][0] = 9
    out["coo-index-out-of-range"] = bad
    bad = g.copy()
    bad.indptr[-1] = 99  # claims more entries than stored
    out["csr-indptr-past-end"] = bad
    return out


@pytest.mark.parametrize("name", sorted(_malformed()))
def test_malformed_structure_is_a_value_error(name):
    g = _malformed()[name]
    with pytest.raises(ValueError):
        matchflow.maximum_matching(g)


def _compressed_cases():
    """(name, bad CSR/CSC matrix) with int32 and int64 index arrays."""
    cases = []
    for fmt in (sp.csr_array, sp.csc_array):
        for dtype in (np.int32, np.int64):
            g = fmt(sp.random_array((300, 200), density=0.05, rng=np.random.default_rng(1)))
            g.indices, g.indptr = g.indices.astype(dtype), g.indptr.astype(dtype)
            too_big, negative, decreasing = g.copy(), g.copy(), g.copy()
            too_big.indices[-1] = max(g.shape)
            negative.indices[len(g.indices) // 2] = -1
            decreasing.indptr[5] = decreasing.indptr[7] + 1
            tag = f"{fmt.__name__}-{np.dtype(dtype).name}"
            cases += [(f"{tag}-too-big", too_big), (f"{tag}-negative", negative),
                      (f"{tag}-decreasing", decreasing)]
    return cases


@pytest.mark.parametrize("name, bad", _compressed_cases(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_compressed_checks_say_what_scipy_says(name, bad):
    """The parallel structural pass gives SciPy's message for each broken rule."""
    with pytest.raises(ValueError) as scipy_error:
        bad.copy().check_format(full_check=True)
    with pytest.raises(ValueError) as ours:
        matchflow.maximum_bipartite_matching(bad)
    assert str(ours.value) == str(scipy_error.value)


def test_decreasing_offsets_without_entries_are_rejected():
    """SciPy skips the offset check when there are no entries; an offset
    past the (empty) id array would send a solver out of bounds."""
    g = sp.csr_array((np.zeros(0), np.zeros(0, np.int32), np.array([0, 1, 0], np.int32)),
                     shape=(2, 2))
    with pytest.raises(ValueError, match="non-decreasing"):
        matchflow.maximum_bipartite_matching(g)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_large_pattern_errors_found_in_every_chunk(where, dtype):
    """Above 2^16 entries the ids and the offsets are checked in one chunk per
    thread: a broken entry at either end or in the middle is found, with
    SciPy's message."""
    g = generators.uniform_random(1 << 17, degree=3.0, seed=6)
    g.indices, g.indptr = g.indices.astype(dtype), g.indptr.astype(dtype)
    at = {"first": 0, "middle": g.nnz // 2, "last": g.nnz - 1}[where]
    row = {"first": 1, "middle": g.shape[0] // 2, "last": g.shape[0] - 1}[where]
    too_big, negative, decreasing = g.copy(), g.copy(), g.copy()
    too_big.indices[at] = g.shape[1]
    negative.indices[at] = -1
    decreasing.indptr[row] = decreasing.indptr[row + 1] + 1
    for bad, message in ((too_big, f"indices must be < {g.shape[1]}"),
                         (negative, "indices must be >= 0"),
                         (decreasing, "non-decreasing")):
        with pytest.raises(ValueError, match=message):
            matchflow.maximum_bipartite_matching(bad)


def test_valid_large_pattern_passes_the_parallel_check():
    g = generators.uniform_random(1 << 17, degree=3.0, seed=5)  # > 2^16 ids: parallel pass
    for m in (g, sp.csc_array(g), sp.csr_array((g.data, g.indices.astype(np.int64),
                                                g.indptr.astype(np.int64)), shape=g.shape)):
        assert matchflow.structural_rank(m) == csgraph.structural_rank(sp.csr_matrix(m))


@pytest.mark.parametrize("size", [0, 5, (1 << 17) + 3])
def test_int32_offsets_widened_exactly(size):
    """SciPy's int32 offsets become the core's int64 ones in one parallel
    pass (past 2^16 values), every value and sign kept."""
    from matchflow import _core
    values = np.random.default_rng(size).integers(-2**31, 2**31, size=size, dtype=np.int32)
    values[:2] = [-2**31, 2**31 - 1][:size]
    wide = _core.widened_offsets(values)
    assert wide.dtype == np.int64
    np.testing.assert_array_equal(wide, values.astype(np.int64))

"""Differential fuzz: seeded random cases for every public function, each
checked against SciPy (networkx where SciPy has no counterpart or is wrong:
flows past int32) and against the certificate its answer carries.

A case is (family, seed): the seed alone builds the input, so a failure
printed by tests/test_fuzz.py replays with

    python tests/fuzz.py FAMILY SEED

Inputs cover every sparse format and index width, dense dtypes, views
(transposed, strided, broadcast, Fortran, read-only, byte-swapped, masked,
np.matrix, nested lists), empty and degenerate shapes, ties, +-inf and NaN,
duplicate entries, explicit zeros, unsorted indices and `maximize`.
"""
from __future__ import annotations

import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import maximum_flow as scipy_maximum_flow
from scipy.sparse.csgraph import structural_rank as scipy_structural_rank

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matchflow  # noqa: E402
from oracles import (assert_certificate, assert_max_flow, assert_maximum_matching,  # noqa: E402
                     capacities, scipy_cardinality)

_GPU = matchflow.cuda_available()


# ---- dense cost matrices ---------------------------------------------------------

def _shape(rng) -> tuple[int, int]:
    if rng.random() < 0.08:  # empty and degenerate
        return [(0, 0), (0, int(rng.integers(1, 5))), (int(rng.integers(1, 5)), 0),
                (1, 1)][int(rng.integers(4))]
    n = int(rng.integers(1, 14 if rng.random() < 0.85 else 60))
    m = int(rng.integers(1, 14 if rng.random() < 0.85 else 60))
    return n, m


def _values(rng, shape) -> np.ndarray:
    kind = int(rng.integers(6))
    if kind == 0:  # many ties
        return rng.integers(0, int(rng.integers(1, 4)), shape).astype(np.int64)
    if kind == 1:
        return rng.integers(-1000, 1000, shape).astype(np.int64)
    if kind == 2:  # wide integers, exact in float64
        return rng.integers(-2**40, 2**40, shape).astype(np.int64)
    if kind == 3:
        return rng.random(shape)
    if kind == 4:  # float ties
        return rng.integers(0, 5, shape) * 0.25
    return rng.standard_normal(shape) * 10.0 ** float(rng.integers(-3, 6))


_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
           "uint64", "bool")


def _cast(rng, c: np.ndarray) -> np.ndarray:
    name = _DTYPES[int(rng.integers(len(_DTYPES)))]
    if name == "bool":
        return c > np.median(c) if c.size else c.astype(bool)
    dtype = np.dtype(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        finite = np.nan_to_num(c, nan=0.0, posinf=0.0, neginf=0.0)
        return np.clip(np.rint(finite), max(info.min, -2**40), min(info.max, 2**40)).astype(dtype)
    if dtype == np.float16:
        return np.clip(c, -6e4, 6e4).astype(dtype)
    return c.astype(dtype)


def _inject_specials(rng, c: np.ndarray) -> np.ndarray:
    """+inf (forbidden pairs), sometimes -inf or NaN (invalid), in float input."""
    if c.dtype.kind != "f" or c.size == 0 or rng.random() < 0.6:
        return c
    c = c.copy()
    mask = rng.random(c.shape) < rng.choice([0.05, 0.3, 0.7])
    c[mask] = np.inf
    if rng.random() < 0.15:
        c.flat[int(rng.integers(c.size))] = rng.choice([-np.inf, np.nan])
    return c


def _view(rng, c: np.ndarray):
    """The same logical matrix in one of the layouts a caller may hand over."""
    kind = int(rng.integers(11))
    if kind == 0:
        return np.asfortranarray(c)
    if kind == 1:  # a transposed view of the transpose
        return np.ascontiguousarray(c.T).T
    if kind == 2:  # strided: every other row of a taller array
        tall = np.repeat(c, 2, axis=0)
        return tall[::2]
    if kind == 3:
        ro = c.copy()
        ro.flags.writeable = False
        return ro
    if kind == 4 and c.shape[0] > 0:  # broadcast rows (zero stride)
        return np.broadcast_to(c[:1], c.shape)
    if kind == 5 and c.dtype.itemsize > 1:
        return c.astype(c.dtype.newbyteorder(">" if sys.byteorder == "little" else "<"))
    if kind == 6:
        return np.ma.masked_array(c, mask=rng.random(c.shape) < 0.2)
    if kind == 7:
        with warnings.catch_warnings():  # np.matrix is pending deprecation
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            return np.asmatrix(c)
    if kind == 8 and c.dtype.kind in "if" and c.dtype.itemsize >= 4 and c.size < 200:
        return c.tolist()
    if kind == 9:  # reversed columns
        return np.ascontiguousarray(c[:, ::-1])[:, ::-1]
    return c


def _dense_case(seed: int):
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    c = _inject_specials(rng, _cast(rng, _values(rng, shape)))
    return _view(rng, c), bool(rng.random() < 0.5), rng


def _outcome(fn):
    """(result, None) or (None, exception)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as exc:  # noqa: BLE001 - compared with the reference's
        return None, exc


def _assert_same_exception(got, ref) -> None:
    assert got is not None, f"SciPy raised {ref!r}; matchflow did not"
    assert type(got) is type(ref) or isinstance(got, type(ref)), (got, ref)
    if isinstance(ref, ValueError):
        assert str(got) == str(ref), (str(got), str(ref))


def _lsap_cost(c: np.ndarray, rows, cols):
    picked = c[rows, cols]
    return int(picked.astype(object).sum()) if c.dtype.kind in "biu" else float(
        picked.astype(np.float64).sum())


def _assert_lsap_pair(c: np.ndarray, rows, cols) -> None:
    assert rows.dtype == cols.dtype == np.intp
    assert rows.shape == cols.shape == (min(c.shape),)
    assert np.all(np.diff(rows) > 0), "row_ind not sorted and unique"
    assert len(np.unique(cols)) == len(cols), "a column twice"


def _assert_same_cost(c: np.ndarray, got: float, ref: float) -> None:
    if c.dtype.kind in "biu":
        assert got == ref, (got, ref)
    else:
        rel = 1e-5 if c.dtype.itemsize <= 4 else 1e-9
        scale = max(1.0, float(np.abs(c[np.isfinite(c)].astype(np.float64)).sum()))
        assert abs(got - ref) <= rel * scale, (got, ref)


def fuzz_linear_sum_assignment(seed: int) -> None:
    """The drop-in: SciPy's arrays' cost, exceptions and messages."""
    given, maximize, rng = _dense_case(seed)
    device = "cpu" if rng.random() < 0.3 else "auto"
    ref, ref_exc = _outcome(lambda: scipy_lsa(given, maximize))
    got, got_exc = _outcome(lambda: matchflow.linear_sum_assignment(given, maximize,
                                                                    device=device))
    if ref_exc is not None:
        _assert_same_exception(got_exc, ref_exc)
        return
    assert got_exc is None, f"matchflow raised {got_exc!r}; SciPy did not"
    c = np.asarray(given)
    _assert_lsap_pair(c, *got)
    _assert_same_cost(c, _lsap_cost(c, *got), _lsap_cost(c, *ref))


def fuzz_solve_assignment(seed: int) -> None:
    """The rich entry point, every method: SciPy's optimum, duals that prove it."""
    given, maximize, rng = _dense_case(seed)
    methods = ["auto", "omp-tree"] + (["gpu-tree", "gpu-classic"] if _GPU else [])
    method = methods[int(rng.integers(len(methods)))]
    device = "cuda" if method.startswith("gpu") else "cpu"
    ref, ref_exc = _outcome(lambda: scipy_lsa(given, maximize))
    got, got_exc = _outcome(lambda: matchflow.solve_assignment(
        given, maximize, method=method, device=device, threads=int(rng.integers(1, 3))))
    c = np.asarray(given)
    if ref_exc is not None:
        if isinstance(got_exc, OverflowError) and c.dtype.kind in "biu":
            return  # exact int64 solve refuses what SciPy rounds: documented
        _assert_same_exception(got_exc, ref_exc)
        return
    assert got_exc is None, f"matchflow raised {got_exc!r}; SciPy did not"
    _assert_lsap_pair(c, got.row_ind, got.col_ind)
    _assert_same_cost(c, _lsap_cost(c, got.row_ind, got.col_ind), _lsap_cost(c, *ref))
    assert_certificate(c, got, maximize)


# ---- sparse graphs -----------------------------------------------------------------

_FORMATS = ("csr", "csc", "coo", "bsr", "lil", "dok", "dia")


def _sparse_case(seed: int):
    """A random pattern in a random format, class and index width, with
    duplicates, explicit zeros and unsorted indices where the format has them."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = _shape(rng)
    density = float(rng.choice([0.02, 0.1, 0.3, 0.7]))
    nnz = int(rng.binomial(n_rows * n_cols, density)) if n_rows * n_cols else 0
    rows = rng.integers(0, max(n_rows, 1), nnz)
    cols = rng.integers(0, max(n_cols, 1), nnz)
    if nnz and rng.random() < 0.3:  # duplicates
        pick = rng.integers(0, nnz, max(1, nnz // 4))
        rows, cols = np.concatenate([rows, rows[pick]]), np.concatenate([cols, cols[pick]])
    data = rng.integers(0, 3, rows.size).astype(np.float64)  # explicit zeros included
    cls = sp.coo_array if rng.random() < 0.5 else sp.coo_matrix
    coo = cls((data, (rows, cols)), shape=(n_rows, n_cols))
    fmt = _FORMATS[int(rng.integers(len(_FORMATS)))]
    graph = coo if fmt == "coo" else coo.asformat(fmt)
    if fmt in ("csr", "csc") and graph.nnz and rng.random() < 0.5:
        # Same entries, duplicates and unsorted indices kept: built directly.
        order = rng.permutation(coo.nnz)
        major, minor = (coo.row, coo.col) if fmt == "csr" else (coo.col, coo.row)
        n_major = n_rows if fmt == "csr" else n_cols
        by_major = np.argsort(major[order], kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n_major))])
        graph = type(graph)((coo.data[order][by_major], minor[order][by_major], ptr),
                            shape=(n_rows, n_cols))
    if fmt in ("csr", "csc", "coo", "bsr") and rng.random() < 0.5:
        _widen_indices(graph)
    return graph, rng


def _widen_indices(graph) -> None:
    """int64 index arrays, as SciPy makes them for large matrices."""
    if graph.format == "coo":
        graph.row, graph.col = graph.row.astype(np.int64), graph.col.astype(np.int64)
    else:
        graph.indices = graph.indices.astype(np.int64)
        graph.indptr = graph.indptr.astype(np.int64)


def _pattern(graph):
    """The deduplicated CSR pattern SciPy's functions can take (they crash
    on duplicates, scipy#26160)."""
    p = sp.csr_array(graph, copy=True)
    p.data = np.ones_like(p.data)
    p.sum_duplicates()
    return p


def fuzz_maximum_bipartite_matching(seed: int) -> None:
    graph, rng = _sparse_case(seed)
    perm_type = "row" if rng.random() < 0.5 else "column"
    methods = ["auto", "pr", "pdbfs", "msbfs-graft"] + (
        ["gpu-pr", "gpu-apfb", "gpu-apsb"] if _GPU else [])
    method = methods[int(rng.integers(len(methods)))]
    device = "auto" if method == "auto" else "cuda" if method.startswith("gpu") else "cpu"
    got = matchflow.maximum_bipartite_matching(graph, perm_type, method=method, device=device)
    n_rows, n_cols = graph.shape
    assert got.dtype == np.int32 and got.shape == ((n_cols,) if perm_type == "row" else (n_rows,))
    pattern = _pattern(graph)
    mates = got[got >= 0]
    assert len(np.unique(mates)) == len(mates), "a vertex matched twice"
    ids = np.flatnonzero(got >= 0)
    pairs = (mates, ids) if perm_type == "row" else (ids, mates)
    assert np.all(pattern[pairs[0], pairs[1]] != 0) if ids.size else True, "a pair is no edge"
    assert ids.size == scipy_cardinality(pattern)


def fuzz_maximum_matching(seed: int) -> None:
    """Every method, both mate arrays, certified by a König cover."""
    graph, rng = _sparse_case(seed)
    methods = ["pr", "pdbfs", "msbfs-graft"] + (["gpu-pr", "gpu-apfb", "gpu-apsb"] if _GPU else [])
    method = methods[int(rng.integers(len(methods)))]
    init = [None, "none", "cheap", "karp-sipser"][int(rng.integers(4))]
    kwargs = {} if method.startswith("gpu") else {"threads": int(rng.integers(1, 4))}
    result = matchflow.maximum_matching(graph, method=method, init=init,
                                        device="cuda" if method.startswith("gpu") else "cpu",
                                        **kwargs)
    assert_maximum_matching(graph, result)


def fuzz_structural_rank(seed: int) -> None:
    graph, _ = _sparse_case(seed)
    ref, ref_exc = _outcome(lambda: scipy_structural_rank(_pattern(graph)))
    got, got_exc = _outcome(lambda: matchflow.structural_rank(graph))
    if ref_exc is not None:
        _assert_same_exception(got_exc, ref_exc)
        return
    assert got_exc is None, f"matchflow raised {got_exc!r}; SciPy did not"
    assert got == ref, (got, ref)


# ---- flow networks -----------------------------------------------------------------

_CAP_DTYPES = ("int64", "int32", "int16", "uint8", "uint32", "uint64", "int8")


def _network_case(seed: int):
    """A random network: (graph, source, sink, rng).  Parallel and
    anti-parallel arcs, self loops, zero capacities, big capacities, s and t
    cut apart, and now and then an input SciPy refuses (bad vertices, float
    or bool capacities, not square)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30)) if rng.random() < 0.95 else int(rng.integers(0, 2))
    m = int(rng.integers(0, 4 * n + 1))
    tails, heads = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)
    dtype = np.dtype(_CAP_DTYPES[int(rng.integers(len(_CAP_DTYPES)))])
    high = min(np.iinfo(dtype).max, 2**40 if rng.random() < 0.2 else 60)
    caps = rng.integers(0, high, m, endpoint=True).astype(dtype)
    if n and rng.random() < 0.2:  # no arc from a set holding s to the rest
        side = rng.random(n) < 0.5
        keep = ~(side[tails] & ~side[heads])
        tails, heads, caps = tails[keep], heads[keep], caps[keep]
    shape = (n, n) if rng.random() < 0.97 else (n, n + 1)
    odd = rng.random()
    if odd < 0.03:
        caps = caps.astype(np.float64)
    elif odd < 0.05:
        caps = caps > 0
    if caps.dtype.kind == "i" and m and rng.random() < 0.03:
        caps[int(rng.integers(m))] = -1  # SciPy returns a wrong flow; we raise
    # CSR built directly: a conversion would sum the parallel arcs in the
    # capacities' dtype (and wrap).
    order = np.argsort(tails, kind="stable")
    ptr = np.concatenate(([0], np.cumsum(np.bincount(tails, minlength=shape[0]))))
    kind = sp.csr_array if rng.random() < 0.5 else sp.csr_matrix
    graph = kind((caps[order], heads[order], ptr), shape=shape)
    source, sink = (int(v) for v in rng.integers(-1 if rng.random() < 0.03 else 0,
                                                 max(n, 1) + (rng.random() < 0.03), 2))
    return graph, source, sink, rng


def _has_negative(csr) -> bool:
    return csr.dtype.kind == "i" and csr.nnz > 0 and csr.data.min() < 0


def _flow_methods(rng) -> tuple[str, str]:
    methods = ["auto", "pr", "ppr"] + (["gpu-pr"] if _GPU else [])
    method = methods[int(rng.integers(len(methods)))]
    return method, "cuda" if method.startswith("gpu") else "auto" if method == "auto" else "cpu"


def _scipy_flow_value(graph, source, sink):
    """SciPy's answer (or exception) on SciPy-safe input: parallel arcs
    summed, capacities clipped to int32; networkx's value where clipping
    changed them."""
    csr = sp.csr_array(graph)
    if csr.dtype.kind not in "iu":
        return None, _outcome(lambda: scipy_maximum_flow(csr, source, sink))[1]
    summed = capacities(csr)
    clipped = sp.csr_array(summed.minimum(np.iinfo(np.int32).max), dtype=np.int32)
    result, exc = _outcome(lambda: scipy_maximum_flow(clipped, source, sink))
    if exc is not None or summed.nnz == 0 or summed.max() <= np.iinfo(np.int32).max:
        return (None if result is None else int(result.flow_value)), exc
    import networkx as nx
    cap = summed.tocoo()
    g = nx.DiGraph()
    g.add_nodes_from(range(csr.shape[0]))
    g.add_weighted_edges_from(((int(u), int(v), int(c)) for u, v, c
                               in zip(cap.row, cap.col, cap.data) if u != v), "capacity")
    return nx.maximum_flow_value(g, source, sink), None


def fuzz_maximum_flow(seed: int) -> None:
    """The drop-in on CSR input: SciPy's value, exceptions and messages, a
    certified flow and cut."""
    graph, source, sink, rng = _network_case(seed)
    method, device = _flow_methods(rng)
    ref, ref_exc = _scipy_flow_value(graph, source, sink)
    got, got_exc = _outcome(lambda: matchflow.maximum_flow(graph, source, sink,
                                                           method=method, device=device))
    if ref_exc is None and _has_negative(graph):
        assert isinstance(got_exc, ValueError) and "non-negative" in str(got_exc), got_exc
        return
    if ref_exc is not None:
        _assert_same_exception(got_exc, ref_exc)
        return
    assert got_exc is None, f"matchflow raised {got_exc!r}; SciPy did not"
    assert isinstance(got.flow, type(graph)), type(got.flow)
    assert_max_flow(graph, source, sink, got, ref)


def fuzz_solve_flow(seed: int) -> None:
    """The rich entry point: any format, both index widths, with and
    without the flow; a certified value equal to SciPy's."""
    graph, source, sink, rng = _network_case(seed)
    negative = _has_negative(graph)
    fmt = _FORMATS[int(rng.integers(len(_FORMATS)))]
    if graph.dtype.kind in "iu" and not negative:
        # Summing parallel arcs (lil, dok, dia, bsr) in int64 cannot wrap.
        graph = graph.astype(np.int64).asformat(fmt)
    if graph.format in ("csr", "csc", "coo") and rng.random() < 0.5:
        _widen_indices(graph)
    method, device = _flow_methods(rng)
    ref, ref_exc = _scipy_flow_value(graph, source, sink)
    got, got_exc = _outcome(lambda: matchflow.solve_flow(
        graph, source, sink, method=method, device=device,
        return_flow=bool(rng.random() < 0.7)))
    if ref_exc is None and negative:
        assert isinstance(got_exc, ValueError) and "non-negative" in str(got_exc), got_exc
        return
    if ref_exc is not None:
        assert got_exc is not None, f"SciPy raised {ref_exc!r}; matchflow did not"
        assert isinstance(got_exc, (ValueError, TypeError)), got_exc
        return
    assert got_exc is None, f"matchflow raised {got_exc!r}; SciPy did not"
    assert_max_flow(graph, source, sink, got, ref)


# ---- sparse-solver preprocessing --------------------------------------------------

def fuzz_min_weight_full_bipartite_matching(seed: int) -> None:
    """SciPy's sparse LAP drop-in: the same error message or a full
    matching of SciPy's weight, in any format and index width."""
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm
    from test_sparse_assignment import assert_valid, outcome, random_case

    rng = np.random.default_rng(seed)
    graph, dense, mask = random_case(rng)
    maximize = bool(rng.random() < 0.3)
    expected = outcome(scipy_mwfbm, graph, maximize)
    given = graph.asformat(("csr", "csc", "coo")[int(rng.integers(3))])
    if rng.random() < 0.5:
        _widen_indices(given)
    got = outcome(matchflow.min_weight_full_bipartite_matching, given, maximize)
    if isinstance(expected, str):
        assert got == expected, (got, expected)
        return
    assert not isinstance(got, str), got
    assert_valid(graph, mask, *got)
    _assert_same_cost(dense, float(dense[got].sum()), float(dense[expected].sum()))


def fuzz_dulmage_mendelsohn(seed: int) -> None:
    """cs_dmperm's structure (checked against networkx SCCs) and the
    maximum transversal, on the sparse cases of the matching families."""
    from test_preprocess import check_dm, check_transversal

    graph, rng = _sparse_case(seed)
    method = ["auto", "pr", "pdbfs", "msbfs-graft"][int(rng.integers(4))]
    device = "auto" if method == "auto" else "cpu"
    check_dm(graph, matchflow.dulmage_mendelsohn(graph, method=method, device=device))
    check_transversal(graph, *matchflow.maximum_transversal(graph, method=method,
                                                            device=device))


FAMILIES = {
    "linear_sum_assignment": fuzz_linear_sum_assignment,
    "solve_assignment": fuzz_solve_assignment,
    "maximum_bipartite_matching": fuzz_maximum_bipartite_matching,
    "maximum_matching": fuzz_maximum_matching,
    "structural_rank": fuzz_structural_rank,
    "maximum_flow": fuzz_maximum_flow,
    "solve_flow": fuzz_solve_flow,
    "min_weight_full_bipartite_matching": fuzz_min_weight_full_bipartite_matching,
    "dulmage_mendelsohn": fuzz_dulmage_mendelsohn,
}


def run(family: str, seeds) -> list[tuple[int, str]]:
    """Run `family` on every seed; (seed, traceback) of each failing one."""
    check = FAMILIES[family]
    failures = []
    for seed in seeds:
        try:
            check(int(seed))
        except Exception:  # noqa: BLE001 - every failure is reported with its seed
            failures.append((int(seed), traceback.format_exc()))
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in FAMILIES:
        sys.exit(f"usage: python tests/fuzz.py {{{','.join(FAMILIES)}}} SEED")
    FAMILIES[sys.argv[1]](int(sys.argv[2]))
    print("passed")

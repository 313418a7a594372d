"""matchflow.io: DIMACS max-flow files (read, write, errors by line) and
Matrix Market through read_graph."""
from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from scipy.sparse.csgraph import maximum_flow as scipy_maximum_flow

from matchflow import maximum_flow
from matchflow.io import FlowProblem, read_dimacs, read_graph, write_dimacs

from conftest import data_dir

TINY = """c a comment
p max 4 5
n 1 s
n 4 t
c arcs, one parallel pair (1 -> 2) and a zero capacity
a 1 2 3
a 1 3 2
a 2 4 2
a 1 2 4
a 3 4 0
"""


def test_read_tiny():
    graph, source, sink = read_dimacs(io.StringIO(TINY))
    assert (source, sink) == (0, 3)
    assert isinstance(graph, sp.csr_array) and graph.dtype == np.int64
    assert graph.shape == (4, 4) and graph.nnz == 5
    # Parallel arcs kept, in file order within the row; explicit zero kept.
    assert_array_equal(graph.indptr, [0, 3, 4, 5, 5])
    assert_array_equal(graph.indices, [1, 2, 1, 3, 3])
    assert_array_equal(graph.data, [3, 2, 4, 2, 0])


def test_read_binary_and_text_files_and_paths(tmp_path):
    want = read_dimacs(io.StringIO(TINY))
    path = tmp_path / "tiny.max"
    path.write_text(TINY)
    gz = tmp_path / "tiny.max.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(TINY)
    for source in (io.BytesIO(TINY.encode()), str(path), path, gz):
        got = read_dimacs(source)
        assert isinstance(got, FlowProblem)
        assert (got.source, got.sink) == (want.source, want.sink)
        assert_array_equal(got.graph.toarray(), want.graph.toarray())
        assert_array_equal(got.graph.data, want.graph.data)


def test_read_tolerates_blank_lines_and_indentation():
    text = "\n  c indented comment\np max 2 1\n\nn 1 s\n n 2 t\n  a 1 2 7\r\n"
    graph, s, t = read_dimacs(io.StringIO(text))
    assert graph.toarray().tolist() == [[0, 7], [0, 0]] and (s, t) == (0, 1)


def test_read_big_capacities():
    cap = 2**62 + 12345  # beyond int32 and float64's exact range
    graph, _, _ = read_dimacs(io.StringIO(f"p max 2 1\nn 1 s\nn 2 t\na 1 2 {cap}\n"))
    assert int(graph.data[0]) == cap


def test_no_arcs():
    graph, s, t = read_dimacs(io.StringIO("p max 3 0\nn 3 s\nn 1 t\n"))
    assert graph.shape == (3, 3) and graph.nnz == 0 and (s, t) == (2, 0)


BAD = {
    "no p line": ("n 1 s\n", r"line 1: 'n' line before the 'p' line: 'n 1 s'"),
    "empty file": ("", r"no 'p max NODES ARCS' line"),
    "comments only": ("c x\nc y\n", r"no 'p max NODES ARCS' line"),
    "second p line": ("p max 2 0\np max 2 0\n", r"line 2: a second 'p' line \(the first is "
                                                r"line 1\): 'p max 2 0'"),
    "not max": ("p min 2 0\n", r"line 1: expected 'p max NODES ARCS': 'p min 2 0'"),
    "p line counts": ("p max 2\n", r"line 1: expected 'p max NODES ARCS'"),
    "negative n": ("p max -2 0\n", r"line 1: expected 'p max NODES ARCS'"),
    "arc before p": ("a 1 2 3\np max 2 1\nn 1 s\nn 2 t\n",
                     r"line 1: 'a' line before the 'p' line: 'a 1 2 3'"),
    "too few arcs": ("p max 2 2\nn 1 s\nn 2 t\na 1 2 3\n",
                     r"line 1: declares 2 arcs, but the file has 1 'a' lines: 'p max 2 2'"),
    "too many arcs": ("p max 2 0\nn 1 s\nn 2 t\na 1 2 3\n", r"line 1: declares 0 arcs"),
    "head out of range": ("p max 2 1\nn 1 s\nn 2 t\na 1 3 3\n",
                          r"line 4: head out of range 1..2: 'a 1 3 3'"),
    "tail zero": ("p max 2 1\nn 1 s\nn 2 t\na 0 2 3\n", r"line 4: tail out of range 1..2"),
    "negative capacity": ("p max 2 2\nn 1 s\nn 2 t\na 1 2 3\na 2 1 -3\n",
                          r"line 5: negative capacity: 'a 2 1 -3'"),
    "float capacity": ("p max 2 2\nn 1 s\nn 2 t\na 1 2 3\na 2 1 1.5\n",
                       r"line 5: expected 'a U V CAP' with integers in int64: 'a 2 1 1.5'"),
    "capacity beyond int64": ("p max 2 1\nn 1 s\nn 2 t\na 1 2 9223372036854775808\n",
                              r"line 4: expected 'a U V CAP' with integers in int64"),
    "short arc line": ("p max 2 2\nn 1 s\nn 2 t\na 1 2\na 2 1 4\n",
                       r"line 4: expected 'a U V CAP'.*: 'a 1 2'"),
    "long arc line": ("p max 2 1\nn 1 s\nn 2 t\na 1 2 3 4\n", r"line 4: expected 'a U V CAP'"),
    "arc word": ("p max 2 1\nn 1 s\nn 2 t\narc 1 2 3\n", r"line 4: expected 'a U V CAP'"),
    "duplicate source": ("p max 3 0\nn 1 s\nn 2 s\nn 3 t\n",
                         r"line 3: a second source \(the first is on line 2\): 'n 2 s'"),
    "duplicate sink": ("p max 3 0\nn 1 s\nn 3 t\nn 2 t\n", r"line 4: a second sink"),
    "no sink": ("p max 3 0\nn 1 s\n", r"no 'n ID t' line \(the sink\)"),
    "no source": ("p max 3 0\nn 1 t\n", r"no 'n ID s' line \(the source\)"),
    "source is sink": ("p max 3 0\nn 2 s\nn 2 t\n",
                       r"line 3: the source and the sink are the same vertex"),
    "node out of range": ("p max 3 0\nn 4 s\n", r"line 2: vertex id out of range 1..3"),
    "node kind": ("p max 3 0\nn 1 x\n", r"line 2: expected 'n ID s' or 'n ID t'"),
    "unknown line": ("p max 3 0\nx 1 2\n", r"line 2: unknown line"),
}


@pytest.mark.parametrize("case", BAD)
def test_malformed(case):
    text, message = BAD[case]
    with pytest.raises(ValueError, match=message):
        read_dimacs(io.StringIO(text))


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.max"
    path.write_text("p max 2 1\nn 1 s\nn 2 t\na 1 2 x\n")
    with pytest.raises(ValueError, match=r"bad\.max, line 4: "):
        read_dimacs(path)


@pytest.mark.parametrize("suffix", [".max", ".max.gz"])
def test_write_read_round_trip(tmp_path, suffix):
    rng = np.random.default_rng(1)
    n, m = 30, 200
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    caps = rng.integers(0, 2**45, m)
    order = np.argsort(rows, kind="stable")
    ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))
    graph = sp.csr_array((caps[order], cols[order], ptr), shape=(n, n))  # parallel arcs
    path = tmp_path / f"g{suffix}"
    write_dimacs(path, graph, 3, 17, comment="random\n\nround trip")
    if suffix.endswith(".gz"):
        with gzip.open(path, "rt") as fh:
            head = fh.read().splitlines()[:6]
    else:
        head = path.read_text().splitlines()[:6]
    assert head == ["c random", "c", "c round trip", f"p max {n} {m}", "n 4 s", "n 18 t"]
    back = read_dimacs(path)
    assert (back.source, back.sink) == (3, 17)
    assert_array_equal(back.graph.indptr, graph.indptr)
    assert_array_equal(back.graph.indices, graph.indices)
    assert_array_equal(back.graph.data, graph.data)


def test_write_any_format_and_file_objects():
    graph = sp.coo_matrix(np.array([[0, 5, 1], [0, 0, 4], [2, 0, 0]], dtype=np.uint8))
    text, binary = io.StringIO(), io.BytesIO()
    write_dimacs(text, graph, 0, 2)
    write_dimacs(binary, graph.tocsc(), 0, 2)
    want = "p max 3 4\nn 1 s\nn 3 t\na 1 2 5\na 1 3 1\na 2 3 4\na 3 1 2\n"
    assert text.getvalue() == want
    assert binary.getvalue().decode() == want


@pytest.mark.parametrize("graph, s, t, error, message", [
    (np.array([[0, 1], [0, 0]]), 0, 1, TypeError, "scipy.sparse"),
    (sp.csr_array([[0, 1.5], [0, 0]]), 0, 1, ValueError, "capacities must be integers"),
    (sp.csr_array([[0, -1], [0, 0]]), 0, 1, ValueError, "non-negative"),
    (sp.csr_array([[0, 1], [0, 0]]), 1, 1, ValueError, "must differ"),
    (sp.csr_array([[0, 1], [0, 0]]), 0, 2, ValueError, r"sink value \(2\)"),
    (sp.csr_array([[0, 1, 0], [0, 0, 0]]), 0, 1, ValueError, "square"),
])
def test_write_rejects(graph, s, t, error, message):
    with pytest.raises(error, match=message):
        write_dimacs(io.StringIO(), graph, s, t)


def test_glpk_sample():
    """GLPK's example network (debian-glpk sample.max): max flow 1 -> 9 is 29."""
    root = data_dir()
    path = root / "debian-glpk" / "sample.max" if root else None
    if path is None or not path.is_file():
        pytest.skip("debian-glpk/sample.max not in the data folder")
    graph, source, sink = read_dimacs(path)
    assert (source, sink) == (0, 8) and graph.shape == (9, 9) and graph.nnz == 14
    assert scipy_maximum_flow(sp.csr_array(graph, dtype=np.int32), source, sink).flow_value == 29
    res = maximum_flow(graph, source, sink)
    assert res.flow_value == 29
    u, v = res.cut_edges()
    assert graph.toarray()[u, v].sum() == 29


def test_read_graph_matrix_market(tmp_path):
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, sp.coo_array([[1, 0], [2, 3]]))
    g = read_graph(path)
    assert isinstance(g, sp.csr_array) and g.toarray().tolist() == [[1, 0], [2, 3]]

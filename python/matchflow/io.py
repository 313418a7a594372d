"""Reading problems from files: graphs from Matrix Market (via scipy.io) and
SNAP edge lists; assignment costs from OR-Library's `assign` format; flow
networks from and to the DIMACS max-flow format."""
from __future__ import annotations

import gzip
import io as _io
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._flow import _check_dtype, _check_vertices, _csr_arrays, _int64_capacities


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_graph(path) -> sp.csr_array:
    """Read a sparse pattern: Matrix Market (``.mtx``, ``.mtx.gz``) or a SNAP
    edge list (``.txt``, ``.txt.gz``: 0-based ``src dst`` lines, ``#`` comments).

    Symmetric Matrix Market files are expanded to both triangles (as
    scipy.io.mmread does); values are kept as stored (complex included).

    Examples
    --------
    >>> import tempfile, os, scipy.io, scipy.sparse as sp
    >>> from matchflow.io import read_graph
    >>> path = os.path.join(tempfile.mkdtemp(), "a.mtx")
    >>> scipy.io.mmwrite(path, sp.coo_array([[1, 0], [2, 3]]))
    >>> read_graph(path).nnz
    3
    """
    path = Path(path)
    stem = path.name.removesuffix(".gz")
    with _open(path) as fh:
        if stem.endswith(".mtx"):
            return sp.csr_array(scipy.io.mmread(fh, spmatrix=False))
        if stem.endswith(".txt"):
            edges = np.loadtxt(fh, dtype=np.int64, comments="#", ndmin=2)
            n = int(edges.max()) + 1 if edges.size else 0
            data = np.ones(edges.shape[0], dtype=np.int8)
            return sp.csr_array((data, (edges[:, 0], edges[:, 1])), shape=(n, n))
    raise ValueError(f"unknown graph file format: {path.name} (expected .mtx or SNAP .txt)")


def read_orlib_assignment(path) -> np.ndarray:
    r"""An OR-Library ``assign`` instance: n, then the n x n integer costs.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from matchflow.io import read_orlib_assignment
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "assign2.txt"
    >>> _ = path.write_text(" 2\n 4 1\n 2 3\n")
    >>> read_orlib_assignment(path).tolist()
    [[4, 1], [2, 3]]
    """
    values = np.array(Path(path).read_text().split(), dtype=np.int64)
    n = int(values[0]) if values.size else -1
    if n < 0 or values.size != 1 + n * n:
        raise ValueError(f"{path}: not an OR-Library assign file (n, then n*n costs)")
    return values[1:].reshape(n, n)


# ---- DIMACS max flow ---------------------------------------------------------------
#
# The format of the first DIMACS implementation challenge (1990-91): one item
# per line, designator first; "c" comments, one "p max NODES ARCS" line before
# the others, "n ID s" and "n ID t" for the source and the sink, and one
# "a U V CAP" line per arc; vertices numbered from 1.

class FlowProblem(NamedTuple):
    """A maximum-flow instance: capacities and the two terminals (0-based)."""

    graph: sp.csr_array  #: int64 capacities; one entry per arc, parallel arcs kept
    source: int
    sink: int


def _read_bytes(path_or_file) -> tuple[bytes, str]:
    """The whole file and a name for messages; gzip by the ``.gz`` suffix."""
    if hasattr(path_or_file, "read"):
        data = path_or_file.read()
        name = str(getattr(path_or_file, "name", "<file>"))
        return (data.encode() if isinstance(data, str) else data), name
    path = Path(path_or_file)
    with _open(path) as fh:
        return fh.read(), str(path)


def _bad_line(name: str, lines, i: int, why: str) -> ValueError:
    text = lines[i].decode(errors="replace")
    return ValueError(f"{name}, line {i + 1}: {why}: {text!r}")


def _header(name: str, lines, others) -> tuple[int, int, int, int, int]:
    """(p line index, n, m, source, sink) from the lines that are not comments
    or arcs; they are few, so a Python loop is fine."""
    p_at, n, m = -1, 0, 0
    ends: dict[str, tuple[int, int]] = {}
    for i in others.tolist():
        tokens = lines[i].split()
        if tokens[0] == b"p":
            if p_at >= 0:
                raise _bad_line(name, lines, i, f"a second 'p' line (the first is line {p_at + 1})")
            if len(tokens) != 4 or tokens[1] != b"max" or not all(
                    t.isdigit() for t in tokens[2:]):
                raise _bad_line(name, lines, i, "expected 'p max NODES ARCS'")
            p_at, n, m = i, int(tokens[2]), int(tokens[3])
        elif tokens[0] == b"n":
            if p_at < 0:
                raise _bad_line(name, lines, i, "'n' line before the 'p' line")
            if len(tokens) != 3 or not tokens[1].isdigit() or tokens[2] not in (b"s", b"t"):
                raise _bad_line(name, lines, i, "expected 'n ID s' or 'n ID t'")
            vertex, end = int(tokens[1]), tokens[2].decode()
            if not 1 <= vertex <= n:
                raise _bad_line(name, lines, i, f"vertex id out of range 1..{n}")
            if end in ends:
                what = "source" if end == "s" else "sink"
                raise _bad_line(name, lines, i, f"a second {what} (the first is on line "
                                                f"{ends[end][1] + 1})")
            ends[end] = (vertex - 1, i)
        else:
            raise _bad_line(name, lines, i, "unknown line (DIMACS lines start with c, p, n or a)")
    if p_at < 0:
        raise ValueError(f"{name}: no 'p max NODES ARCS' line")
    for end, what in (("s", "source"), ("t", "sink")):
        if end not in ends:
            raise ValueError(f"{name}: no 'n ID {end}' line (the {what})")
    if ends["s"][0] == ends["t"][0]:
        raise _bad_line(name, lines, max(ends["s"][1], ends["t"][1]),
                        "the source and the sink are the same vertex")
    return p_at, n, m, ends["s"][0], ends["t"][0]


def _first_bad_arc(name: str, lines, arc_at) -> ValueError:
    """The error for the first arc line that is not 'a U V CAP' with
    integers (the vectorised parse only says that one is not)."""
    for i in arc_at.tolist():
        tokens = lines[i].split()
        try:
            if len(tokens) == 4 and tokens[0] == b"a":
                values = [int(t) for t in tokens[1:]]
                np.array(values, dtype=np.int64)
                continue
        except (ValueError, OverflowError):
            pass
        return _bad_line(name, lines, i, "expected 'a U V CAP' with integers in int64")
    return ValueError(f"{name}: malformed 'a' lines")  # not reached: the fast parse failed


def _arcs(name: str, lines, arc_at) -> np.ndarray:
    """The (tail, head, capacity) columns of the arc lines, as written."""
    tokens = b" ".join([lines[i] for i in arc_at.tolist()]).split()
    if len(tokens) != 4 * arc_at.size:
        raise _first_bad_arc(name, lines, arc_at)
    table = np.array(tokens, dtype=bytes).reshape(-1, 4)
    if not np.all(table[:, 0] == b"a"):
        raise _first_bad_arc(name, lines, arc_at)
    try:
        return table[:, 1:].astype(np.int64)
    except (ValueError, OverflowError):
        raise _first_bad_arc(name, lines, arc_at) from None


def _parse_dimacs(data: bytes, name: str) -> FlowProblem:
    lines = data.splitlines()
    tags = np.array([line.lstrip()[:1] for line in lines], dtype="S1")
    is_arc = tags == b"a"
    p_at, n, m, source, sink = _header(name, lines, np.flatnonzero(
        ~is_arc & (tags != b"c") & (tags != b"")))
    arc_at = np.flatnonzero(is_arc)
    if arc_at.size and arc_at[0] < p_at:
        raise _bad_line(name, lines, int(arc_at[0]), "'a' line before the 'p' line")
    if arc_at.size != m:
        raise _bad_line(name, lines, p_at, f"declares {m} arcs, but the file has "
                                           f"{arc_at.size} 'a' lines")
    arcs = _arcs(name, lines, arc_at).reshape(-1, 3)
    for column, bad, why in ((0, (arcs[:, 0] < 1) | (arcs[:, 0] > n), f"tail out of range 1..{n}"),
                             (1, (arcs[:, 1] < 1) | (arcs[:, 1] > n), f"head out of range 1..{n}"),
                             (2, arcs[:, 2] < 0, "negative capacity")):
        if bad.any():
            raise _bad_line(name, lines, int(arc_at[np.argmax(bad)]), why)
    tails, heads = arcs[:, 0] - 1, arcs[:, 1] - 1
    order = np.argsort(tails, kind="stable")  # CSR order, parallel arcs as written
    ptr = np.concatenate(([0], np.cumsum(np.bincount(tails, minlength=n))))
    index = np.int32 if max(n, m) < np.iinfo(np.int32).max else np.int64
    graph = sp.csr_array((arcs[order, 2], heads[order].astype(index), ptr.astype(index)),
                         shape=(n, n))
    return FlowProblem(graph, source, sink)


def read_dimacs(path_or_file) -> FlowProblem:
    r"""Read a maximum-flow instance in DIMACS format.

    Parameters
    ----------
    path_or_file : str, path or file object
        A path (gzip-compressed when it ends in ``.gz``) or an open file,
        text or binary.

    Returns
    -------
    FlowProblem
        ``(graph, source, sink)``: a csr_array of int64 capacities with one
        stored entry per ``a`` line (parallel arcs and zero capacities kept,
        in file order within a row), and 0-based terminals.

    Raises
    ------
    ValueError
        For a malformed file, naming the line number and its content:
        no or a second ``p`` line, a problem other than ``max``, a wrong
        number of ``a`` lines, vertex ids out of range, a negative or
        non-integer capacity, a missing or second source or sink.

    Examples
    --------
    >>> import io
    >>> from matchflow.io import read_dimacs
    >>> text = "c two arcs\np max 3 2\nn 1 s\nn 3 t\na 1 2 5\na 2 3 3\n"
    >>> graph, source, sink = read_dimacs(io.StringIO(text))
    >>> graph.toarray().tolist(), source, sink
    ([[0, 5, 0], [0, 0, 3], [0, 0, 0]], 0, 2)
    """
    data, name = _read_bytes(path_or_file)
    return _parse_dimacs(data, name)


def _dimacs_text(graph, source, sink, comment: str | None) -> str:
    if not sp.issparse(graph):
        raise TypeError("graph must be a scipy.sparse matrix or array")
    _check_dtype(graph)
    source, sink = _check_vertices(graph.shape, source, sink)
    ptr, heads, data = _csr_arrays(graph)
    caps = _int64_capacities(data, ptr, heads)
    n, m = int(graph.shape[0]), int(heads.shape[0])
    tails = np.repeat(np.arange(1, n + 1), np.diff(ptr))
    out = [f"c {line}".rstrip() for line in (comment or "").splitlines()]
    out += [f"p max {n} {m}", f"n {source + 1} s", f"n {sink + 1} t"]
    out += [f"a {u} {v} {c}" for u, v, c in zip(tails.tolist(), (heads + 1).tolist(),
                                                 caps.tolist())]
    return "\n".join(out) + "\n"


def write_dimacs(path_or_file, graph, source, sink, comment: str | None = None) -> None:
    """Write a maximum-flow instance in DIMACS format.

    Parameters
    ----------
    path_or_file : str, path or file object
        A path (gzip-compressed when it ends in ``.gz``) or an open file,
        text or binary.
    graph : scipy.sparse matrix or array, shape (n, n), integer dtype
        Capacities; one ``a`` line per stored entry, in CSR order (explicit
        zeros and duplicate entries included).
    source, sink : int
        0-based terminals (written 1-based).
    comment : str, optional
        Written first, each of its lines as a ``c`` line.

    Raises
    ------
    TypeError, ValueError
        As `matchflow.maximum_flow` would for the same input (except the
        source-capacity bound).

    Examples
    --------
    >>> import io, scipy.sparse as sp
    >>> from matchflow.io import read_dimacs, write_dimacs
    >>> out = io.StringIO()
    >>> write_dimacs(out, sp.csr_array([[0, 5], [0, 0]]), 0, 1, comment="tiny")
    >>> print(out.getvalue(), end="")
    c tiny
    p max 2 1
    n 1 s
    n 2 t
    a 1 2 5
    >>> read_dimacs(io.StringIO(out.getvalue())).graph.toarray().tolist()
    [[0, 5], [0, 0]]
    """
    text = _dimacs_text(graph, source, sink, comment)
    if hasattr(path_or_file, "write"):
        binary = not isinstance(path_or_file, _io.TextIOBase)
        path_or_file.write(text.encode() if binary else text)
        return
    path = Path(path_or_file)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as fh:
        fh.write(text.encode())


# ---- DIMACS assignment ------------------------------------------------------------
#
# The same line format: "p asn NODES ARCS", one "n ID" line per node of the
# first side (the rows), one "a ROW COL COST" line per allowed pair; the
# nodes not named by "n" lines are the second side (the columns).

class AssignmentProblem(NamedTuple):
    """A sparse assignment instance read from DIMACS ``p asn``."""

    costs: sp.csr_array      #: rows x columns, the allowed pairs' costs (explicit zeros kept)
    row_ids: np.ndarray      #: the file's 1-based id of each row
    col_ids: np.ndarray      #: the file's 1-based id of each column


def read_dimacs_assignment(path_or_file) -> AssignmentProblem:
    r"""Read an assignment instance in DIMACS ``p asn`` format.

    Raises
    ------
    ValueError
        For a malformed file, naming the line number and its content.

    Examples
    --------
    >>> import io
    >>> from matchflow.io import read_dimacs_assignment
    >>> text = "p asn 4 3\nn 1\nn 2\na 1 3 5\na 1 4 2\na 2 3 1\n"
    >>> p = read_dimacs_assignment(io.StringIO(text))
    >>> p.costs.toarray().tolist(), p.row_ids.tolist(), p.col_ids.tolist()
    ([[5.0, 2.0], [1.0, 0.0]], [1, 2], [3, 4])
    """
    data, name = _read_bytes(path_or_file)
    lines = data.splitlines()
    n = m = None
    rows: list[int] = []
    arcs: list[tuple[int, int, float]] = []
    for i, line in enumerate(lines):
        tokens = line.split()
        if not tokens or tokens[0] == b"c":
            continue
        try:
            if tokens[0] == b"p":
                if n is not None:
                    raise _bad_line(name, lines, i, "a second 'p' line")
                if len(tokens) != 4 or tokens[1] != b"asn":
                    raise _bad_line(name, lines, i, "expected 'p asn NODES ARCS'")
                n, m = int(tokens[2]), int(tokens[3])
            elif n is None:
                raise _bad_line(name, lines, i, "a line before the 'p asn' line")
            elif tokens[0] == b"n" and len(tokens) == 2:
                rows.append(int(tokens[1]))
            elif tokens[0] == b"a" and len(tokens) == 4:
                arcs.append((int(tokens[1]), int(tokens[2]), float(tokens[3])))
            else:
                raise _bad_line(name, lines, i, "expected 'n ID' or 'a ROW COL COST'")
            if tokens[0] in (b"n", b"a") and not all(1 <= int(t) <= n for t in tokens[1:3]):
                raise _bad_line(name, lines, i, f"node id out of range 1..{n}")
        except ValueError as e:
            if str(e).startswith(name):
                raise
            raise _bad_line(name, lines, i, "not a number where one belongs") from None
    if n is None:
        raise ValueError(f"{name}: no 'p asn NODES ARCS' line")
    if len(arcs) != m:
        raise ValueError(f"{name}: the 'p' line says {m} arcs, the file has {len(arcs)}")
    row_ids = np.array(sorted(set(rows)), dtype=np.int64)
    is_row = np.zeros(n + 1, dtype=bool)
    is_row[row_ids] = True
    col_ids = np.flatnonzero(~is_row[1:]) + 1
    index = np.zeros(n + 1, dtype=np.int64)
    index[row_ids] = np.arange(row_ids.size)
    index[col_ids] = np.arange(col_ids.size)
    tails, heads, costs = (np.array(x) for x in zip(*arcs)) if arcs else (np.zeros(0),) * 3
    tails, heads = tails.astype(np.int64), heads.astype(np.int64)
    if arcs and not (is_row[tails].all() and not is_row[heads].any()):
        k = int(np.flatnonzero(~is_row[tails] | is_row[heads])[0])
        raise ValueError(f"{name}: arc {k + 1} ({tails[k]} -> {heads[k]}) does not go from an "
                         "'n' node to another node")
    graph = sp.csr_array((costs.astype(np.float64), (index[tails], index[heads])),
                         shape=(row_ids.size, col_ids.size))
    return AssignmentProblem(graph, row_ids, col_ids)


def read_matrix(path):
    r"""A Matrix Market file as scipy.io reads it: an ndarray for the dense
    (``array``) format, a csr_array for the sparse one.  A malformed file's
    ValueError names its first bad line.

    Examples
    --------
    >>> import os, tempfile
    >>> from matchflow.io import read_matrix
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.mtx")
    >>> with open(path, "w") as f:
    ...     _ = f.write("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n")
    >>> read_matrix(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...bad.mtx, line 3: expected 3 numbers per entry: '1 1'
    """
    path = Path(path)
    try:
        with _open(path) as fh:
            m = scipy.io.mmread(fh, spmatrix=False)
    except (ValueError, IndexError, OverflowError) as e:
        raise _first_bad_mm_line(path, e) from None
    return m if isinstance(m, np.ndarray) else sp.csr_array(m)


def _first_bad_mm_line(path: Path, error: Exception) -> ValueError:
    """The line of a Matrix Market file that does not read: a bad header, a
    size line that is not numbers, or an entry line of the wrong length."""
    with _open(path) as fh:
        lines = fh.read().splitlines()
    name = str(path)
    if not lines or not lines[0].startswith(b"%%MatrixMarket"):
        return ValueError(f"{name}, line 1: not a Matrix Market header: "
                          f"{(lines[0] if lines else b'').decode(errors='replace')!r}")
    header = lines[0].split()
    coordinate = len(header) > 2 and header[2].lower() == b"coordinate"
    width = {b"pattern": 2, b"complex": 4}.get(header[3].lower() if len(header) > 3 else b"", 3)
    size_at = None
    for i, line in enumerate(lines[1:], start=1):
        tokens = line.split()
        if not tokens or line.startswith(b"%"):
            continue
        try:
            [float(t) for t in tokens]
        except ValueError:
            return _bad_line(name, lines, i, "not numbers")
        if size_at is None:
            size_at = i
            if len(tokens) != (3 if coordinate else 2):
                return _bad_line(name, lines, i, "expected the size line")
        elif coordinate and len(tokens) != width:
            return _bad_line(name, lines, i, f"expected {width} numbers per entry")
    return ValueError(f"{name}: {error}")

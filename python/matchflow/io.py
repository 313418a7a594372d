"""Reading problems from files: graphs from Matrix Market (via scipy.io) and
SNAP edge lists; assignment costs from OR-Library's `assign` format."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp


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

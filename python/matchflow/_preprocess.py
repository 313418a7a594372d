"""Sparse-solver preprocessing, structural half: maximum transversal,
Dulmage-Mendelsohn decomposition and block triangular form.

All three start from one maximum matching, computed by `maximum_matching`
(so a GPU is used where it pays); the decomposition itself is linear time on
the CPU (cpp/src/preprocess/: alternating BFS, then Tarjan's SCC).  The
conventions are CSparse's ``cs_dmperm`` (T. A. Davis, *Direct Methods for
Sparse Linear Systems*, SIAM 2006, section 7.4, pp. 122-127; MATLAB's
``dmperm``), 0-based.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import _core, _device
from ._matching import MatchingResult, _match, _Tuning
from ._validation import Bipartite, as_bipartite

_SPARSE_MESSAGE = "A must be a scipy.sparse matrix or array"

# Square parts from this many vertices start their strongly connected
# components on the GPU that ran the matching (cuda/src/preprocess/pivot_scc.cu):
# benchmarks/NOTES.md, "Sparse-solver preprocessing".
GPU_SCC_MIN_VERTICES = 1 << 17


def _bipartite(A) -> Bipartite:
    return as_bipartite(A, sparse_message=_SPARSE_MESSAGE)


def _matching(g: Bipartite, method: str, device) -> MatchingResult:
    return _match(g, time.perf_counter(), method, device, _Tuning())


def maximum_transversal(A, *, method: str = "auto",
                        device: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Row and column permutations that put a maximum matching on the diagonal.

    Parameters
    ----------
    A : scipy.sparse matrix or array, shape (m, n)
        Any format, square or rectangular; every stored entry (explicit
        zeros included) counts as a nonzero.
    method, device : str
        The matching algorithm and device; see `maximum_matching`.

    Returns
    -------
    p : ndarray of int64, shape (m,)
    q : ndarray of int64, shape (n,)
        ``A[p][:, q]`` has an entry at ``(i, i)`` for every ``i`` below the
        structural rank.  The matched rows come first in increasing
        order (so ``p`` is the identity when every row is matched, as for a
        structurally nonsingular square matrix: then ``q`` alone is MC21's
        column permutation), each with its column; then the unmatched rows
        and the unmatched columns, in increasing order.

    Raises
    ------
    TypeError
        If `A` is not sparse.
    ValueError
        For a malformed sparse structure or an unknown `method` / `device`.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import maximum_transversal
    >>> A = sp.csr_array([[0, 1, 1], [1, 0, 0], [0, 1, 0]])
    >>> p, q = maximum_transversal(A, device="cpu")
    >>> p.tolist(), q.tolist()
    ([0, 1, 2], [2, 0, 1])
    >>> A[p][:, q].diagonal().tolist()
    [1, 1, 1]
    """
    res = _matching(_bipartite(A), method, device)
    rows = np.flatnonzero(res.col4row >= 0)
    p = np.concatenate([rows, np.flatnonzero(res.col4row < 0)])
    q = np.concatenate([res.col4row[rows].astype(np.int64),
                        np.flatnonzero(res.row4col < 0)])
    return p, q


@dataclass(frozen=True, eq=False)
class DMResult:
    """A Dulmage-Mendelsohn decomposition, as CSparse ``cs_dmperm`` returns it.

    Unpacks as ``p, q, r, s, rr, cc = dulmage_mendelsohn(A)``.

    Attributes
    ----------
    p : ndarray of int64, shape (m,)
        Row permutation.
    q : ndarray of int64, shape (n,)
        Column permutation.  ``A[p][:, q]`` is block upper triangular.
    r, s : ndarray of int64, shape (n_blocks + 1,)
        Fine blocks: block ``k`` is rows ``r[k]:r[k+1]`` by columns
        ``s[k]:s[k+1]`` of ``A[p][:, q]``; ``r[0] = s[0] = 0``,
        ``r[-1] = m``, ``s[-1] = n``.
    rr, cc : ndarray of int64, shape (5,)
        Coarse blocks.  Rows ``rr[0]:rr[1]`` (R1) by columns ``cc[0]:cc[2]``
        (C0, the unmatched columns, then C1) is the horizontal
        (underdetermined) part, with a zero-free diagonal in
        ``[rr[0]:rr[1], cc[1]:cc[2]]``; rows ``rr[1]:rr[2]`` by columns
        ``cc[2]:cc[3]`` the square part, zero-free diagonal, split into
        irreducible fine blocks; rows ``rr[2]:rr[4]`` (R3, then R0, the
        unmatched rows) by columns ``cc[3]:cc[4]`` the vertical
        (overdetermined) part, zero-free diagonal in
        ``[rr[2]:rr[3], cc[3]:cc[4]]``.  The horizontal part, when not empty,
        is fine block 0; the vertical part, when not empty, the last one.
    stats : dict
        Seconds per phase (``seconds_matching``: input validation and the
        matching; then, in the core, ``seconds_coarse``,
        ``seconds_graph``, ``seconds_scc``, ``seconds_fine``,
        ``seconds_total``) and the matching's ``method`` and ``device``.
        ``scc_pivot_size``: when the matching ran on a GPU and the square
        part has at least ``GPU_SCC_MIN_VERTICES`` vertices, the size of the
        strongly connected component found there first (the vertices that
        the vertex of greatest in x out degree reaches and that reach it),
        which Tarjan's pass then treats as one vertex; -1 otherwise.
        ``scc_pivot_levels``: that step's search levels (an upper bound).
    """

    p: np.ndarray
    q: np.ndarray
    r: np.ndarray
    s: np.ndarray
    rr: np.ndarray
    cc: np.ndarray
    stats: dict = field(default_factory=dict, repr=False)

    def __iter__(self):
        return iter((self.p, self.q, self.r, self.s, self.rr, self.cc))

    @property
    def n_blocks(self) -> int:
        """Number of fine blocks."""
        return len(self.r) - 1

    @property
    def structural_rank(self) -> int:
        """Size of a maximum matching: ``rr[3]``."""
        return int(self.rr[3])


def _scc_device(matching_device: str) -> int:
    """The CUDA ordinal for the components' GPU step: the matching's GPU, if
    it ran on one, else -1 (Tarjan alone)."""
    return int(matching_device.partition(":")[2]) if matching_device.startswith("cuda") else -1


def _dmperm(g: Bipartite, res: MatchingResult, device):
    """The core's decomposition from the matching `res`.  With device="auto",
    a GPU out of memory for the components' step leaves them to Tarjan alone
    (a RuntimeWarning says so), as the matching falls back to the CPU."""
    scc_device = _scc_device(res.device)

    def dmperm(scc_device: int):
        return _core.dmperm(g.row_ptr, g.row_adj, g.n_cols, res.col4row, res.row4col, 0,
                            scc_device, GPU_SCC_MIN_VERTICES)

    return _device.with_cpu_fallback(
        device, "cuda" if scc_device >= 0 else "cpu", lambda: dmperm(scc_device),
        lambda: dmperm(-1), stacklevel=4,
        fallback="the strongly connected components run on the CPU")


def _decompose(g: Bipartite, start: float, method: str, device) -> DMResult:
    res = _matching(g, method, device)
    after_matching = time.perf_counter()
    p, q, r, s, rr, cc, stats = _dmperm(g, res, device)
    stats.update(seconds_matching=after_matching - start, method=res.method,
                 device=res.device)
    p, q, r, s, rr, cc = (a.astype(np.int64) for a in (p, q, r, s, rr, cc))
    stats["seconds_total"] = time.perf_counter() - start
    return DMResult(p, q, r, s, rr, cc, stats=stats)


def dulmage_mendelsohn(A, *, method: str = "auto", device: str = "auto") -> DMResult:
    """Dulmage-Mendelsohn decomposition: CSparse ``cs_dmperm`` / MATLAB ``dmperm``.

    Permutes any sparse matrix to block upper triangular form: a horizontal
    (underdetermined) part, a square part with a zero-free diagonal split
    into irreducible diagonal blocks (the strongly connected components of
    its graph), and a vertical (overdetermined) part, in that order
    (Davis 2006, section 7.4; Pothen & Fan 1990).

    Parameters
    ----------
    A : scipy.sparse matrix or array, shape (m, n)
        Any format, square or rectangular; every stored entry (explicit
        zeros included) counts as a nonzero; duplicates are fine.
    method, device : str
        The maximum matching's algorithm and device; see `maximum_matching`.
        The rest runs on the CPU in linear time, except that when the
        matching ran on a GPU and the square part is large
        (``GPU_SCC_MIN_VERTICES``), the strongly connected component of one
        pivot vertex is found on that GPU first (see ``stats``).

    Returns
    -------
    DMResult
        ``p, q, r, s, rr, cc`` as ``cs_dmperm`` defines them, 0-based (see
        `DMResult`).  The coarse sets are unique; within them, matched pairs
        are in the order of their rows and unmatched rows and columns in
        increasing order.

    Raises
    ------
    TypeError
        If `A` is not sparse.
    ValueError
        For a malformed sparse structure or an unknown `method` / `device`.

    See Also
    --------
    block_triangular_form : the square, structurally nonsingular case.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from matchflow import dulmage_mendelsohn
    >>> A = sp.csr_array(np.array([[1, 1, 0, 0],
    ...                            [0, 0, 1, 1],
    ...                            [0, 0, 1, 1],
    ...                            [0, 0, 1, 0]]))
    >>> p, q, r, s, rr, cc = dulmage_mendelsohn(A, device="cpu")
    >>> rr.tolist(), cc.tolist()   # one row over two columns; three rows over two
    ([0, 1, 1, 3, 4], [0, 1, 2, 2, 4])
    >>> A[p][:, q].toarray()
    array([[1, 1, 0, 0],
           [0, 0, 1, 1],
           [0, 0, 1, 1],
           [0, 0, 1, 0]])
    >>> r.tolist(), s.tolist()
    ([0, 1, 4], [0, 2, 4])
    """
    start = time.perf_counter()
    return _decompose(_bipartite(A), start, method, device)


@dataclass(frozen=True, eq=False)
class BTFResult:
    """A block triangular form (SuiteSparse BTF / KLU convention).

    Unpacks as ``p, q, r = block_triangular_form(A)``.

    Attributes
    ----------
    p, q : ndarray of int64, shape (n,)
        ``A[p][:, q]`` is block upper triangular with a zero-free diagonal.
    r : ndarray of int64, shape (n_blocks + 1,)
        Block ``k`` is rows and columns ``r[k]:r[k+1]``; each is irreducible.
    stats : dict
        As `DMResult.stats`.
    """

    p: np.ndarray
    q: np.ndarray
    r: np.ndarray
    stats: dict = field(default_factory=dict, repr=False)

    def __iter__(self):
        return iter((self.p, self.q, self.r))

    @property
    def n_blocks(self) -> int:
        """Number of diagonal blocks."""
        return len(self.r) - 1


def block_triangular_form(A, *, method: str = "auto", device: str = "auto") -> BTFResult:
    """Block upper triangular form of a square, structurally nonsingular matrix.

    The permutations a sparse LU solver such as KLU applies before it
    factorises: ``A[p][:, q]`` has a zero-free diagonal (a maximum
    transversal) and irreducible diagonal blocks (Duff & Reid's two steps;
    Davis 2006, section 7.4), so that ``A x = b`` is solved block by block
    by back substitution, factorising only the diagonal blocks.

    Parameters
    ----------
    A : scipy.sparse matrix or array, shape (n, n)
        Any format; every stored entry (explicit zeros included) counts.
    method, device : str
        The maximum matching's algorithm and device; see `maximum_matching`.

    Returns
    -------
    BTFResult
        ``p, q, r``; block ``k`` is rows and columns ``r[k]:r[k+1]`` of
        ``A[p][:, q]``.  The same as `dulmage_mendelsohn`'s ``p, q, r``
        (its ``s`` equals ``r`` here).

    Raises
    ------
    TypeError
        If `A` is not sparse.
    ValueError
        If `A` is not square or is structurally singular (use
        `dulmage_mendelsohn`), or for a malformed sparse structure.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from matchflow import block_triangular_form
    >>> A = sp.csr_array(np.array([[0, 1, 0],
    ...                            [1, 0, 1],
    ...                            [1, 0, 0]]))
    >>> p, q, r = block_triangular_form(A, device="cpu")
    >>> r.tolist()   # three 1 x 1 blocks
    [0, 1, 2, 3]
    >>> A[p][:, q].toarray()
    array([[1, 1, 0],
           [0, 1, 0],
           [0, 0, 1]])
    """
    start = time.perf_counter()
    g = _bipartite(A)
    if g.n_rows != g.n_cols:
        raise ValueError(f"block_triangular_form needs a square matrix; got shape "
                         f"({g.n_rows}, {g.n_cols}): use dulmage_mendelsohn for "
                         f"rectangular matrices")
    dm = _decompose(g, start, method, device)
    n = len(dm.p)
    if dm.structural_rank < n:
        raise ValueError(f"matrix is structurally singular (structural rank "
                         f"{dm.structural_rank} < {n}): block_triangular_form needs a "
                         f"zero-free diagonal; use dulmage_mendelsohn")
    return BTFResult(dm.p, dm.q, dm.r, stats=dm.stats)

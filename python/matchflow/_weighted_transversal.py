"""Weighted transversals with scaling: what sparse direct solvers run before
they factorise (HSL MC64; SuperLU's ``LargeDiag_MC64`` option).

I. S. Duff and J. Koster, "On algorithms for permuting large entries to the
diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001,
pages 973-996:
  - "product" (MC64 job 5, their section 4): maximise prod_i |a_{i,q_i}|,
    a minimum weight full matching on c_ij = log max_i |a_ij| - log |a_ij|,
    whose duals give the scalings (Olschowka & Neumaier).
  - "bottleneck" (MC64 jobs 2-3, section 3): maximise min_i |a_{i,q_i}|, the
    largest threshold t whose pattern {|a_ij| >= t} still has a perfect
    matching, by a threshold search carrying one matching between thresholds
    (cpp/src/preprocess/bottleneck_transversal.cpp).
  - "sum" (MC64 job 4): maximise sum_i |a_{i,q_i}|, the assignment on |a_ij|.
All three run in the core (cpp/src/preprocess/weighted_transversal.cpp for
product and sum: the weights, the sparse assignment, the tightest duals and
the scalings); this module validates and takes magnitudes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _core
from ._validation import check_choice, check_threads

OBJECTIVES = ("product", "bottleneck", "sum")
_OBJECTIVE_CODES = {"product": 0, "sum": 1, "bottleneck": 2}  # transversal_objective

_SINGULAR = "matrix is structurally singular: no transversal (zero-free diagonal) exists"
_ZEROS_ONLY = ("no transversal of nonzero entries exists: the stored pattern has one, but "
               "only through some of its {zeros} explicit zero entries, whose magnitude 0 no "
               "scaling can bring to 1 (a weighted transversal puts nonzeros on the diagonal)")


@dataclass(frozen=True)
class WeightedTransversal:
    """A column permutation putting large entries on the diagonal, with scalings.

    Attributes
    ----------
    q : ndarray of int64, shape (n,)
        Column permutation: row i is matched to column ``q[i]``, so
        ``A[:, q]`` has the chosen entries on its diagonal.
    row_scale, col_scale : ndarray of float64, shape (n,), or None
        Indexed by the original rows and columns ("product" with
        ``scale=True`` only): ``(diag(row_scale) @ A @ diag(col_scale))[:, q]``
        has a diagonal of magnitude 1 and no entry of magnitude above 1.
    """

    q: np.ndarray
    row_scale: np.ndarray | None
    col_scale: np.ndarray | None


def _magnitudes(A) -> tuple[sp.csr_array, sp.csr_array | None]:
    """(|A| as a canonical float64 CSR array without zero entries, the
    stored pattern when it held numerical zeros, else None); square."""
    if not sp.issparse(A):
        A = sp.csr_array(np.asarray(A))
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"weighted_transversal needs a square matrix, got shape {A.shape}")
    if not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_):
        raise ValueError(f"expected a matrix containing numerical entries, got {A.dtype}")
    m = sp.csr_array(A)  # no copy when A is already CSR: nothing below writes to it
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    # |a| as float64, always a new array (A's own data stays untouched);
    # integers are widened first, where abs(-128) of int8 would overflow
    data = np.abs(m.data if np.iscomplexobj(m.data) else m.data.astype(np.float64, copy=False))
    if not data.max(initial=0.0) < np.inf:  # one pass: NaN and inf both fail
        raise ValueError("matrix contains invalid numeric entries")
    if data.min(initial=1.0) > 0:
        return sp.csr_array((data, m.indices, m.indptr), shape=m.shape), None
    # numerical zeros cannot be on a transversal of nonzeros; eliminate_zeros
    # works in place, and the index arrays may still be A's
    stored = m
    m = sp.csr_array((data, m.indices.copy(), m.indptr.copy()), shape=m.shape)
    m.eliminate_zeros()
    return m, stored


def _singular(stored: sp.csr_array | None, m: sp.csr_array) -> ValueError:
    """What is true of a matrix without a transversal of nonzeros: no
    transversal at all, or one only through explicit zeros."""
    if stored is not None:
        from ._matching import structural_rank  # the stored pattern, zeros included
        if structural_rank(sp.csr_array((np.ones(stored.nnz), stored.indices, stored.indptr),
                                        shape=stored.shape)) == stored.shape[0]:
            return ValueError(_ZEROS_ONLY.format(zeros=stored.nnz - m.nnz))
    return ValueError(_SINGULAR)


def _transversal(m: sp.csr_array, stored: sp.csr_array | None, objective: str, scale: bool,
                 threads: int):
    """The core's transversal: (q, row_scale, col_scale), or the
    singularity ValueError (_singular)."""
    try:
        return _core.transversal(np.asarray(m.indptr, dtype=np.int64),
                                 np.asarray(m.indices, dtype=np.int32),
                                 np.ascontiguousarray(m.data, dtype=np.float64),
                                 _OBJECTIVE_CODES[objective], scale, threads)
    except ValueError:
        raise _singular(stored, m) from None


def weighted_transversal(A, objective: str = "product", scale: bool = True, *,
                         threads: int | None = None) -> WeightedTransversal:
    """A column permutation putting large entries on the diagonal of a square
    matrix, with MC64's row and column scalings.

    Parameters
    ----------
    A : sparse array or matrix, or array_like, shape (n, n)
        Any scipy.sparse format (duplicates are summed, explicit zeros are
        not entries), real or complex; magnitudes are what count.
    objective : {"product", "bottleneck", "sum"}
        What the diagonal ``A[i, q[i]]`` maximises: the product of the
        magnitudes (Duff & Koster's MC64 job 5), the smallest magnitude
        (jobs 2-3), or the sum of the magnitudes (job 4).
    scale : bool
        With "product", also return the scalings from the assignment's
        duals.  Only the product objective defines scalings: for the others
        (and with ``scale=False``) `row_scale` and `col_scale` are None.
    threads : int, optional
        OpenMP threads for product and sum (the weights and the assignment's
        auction start; default: all, or ``OMP_NUM_THREADS``); the answer is
        the same for every count.

    Returns
    -------
    WeightedTransversal
        Fields `q`, `row_scale`, `col_scale`.

    Raises
    ------
    ValueError
        A non-square matrix, NaN or infinite entries, an unknown objective,
        a structurally singular matrix (no zero-free diagonal), or one
        whose stored pattern has a transversal only through explicit zeros
        (the message says so: a zero cannot be scaled to 1).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from matchflow import weighted_transversal
    >>> A = sp.csr_array(np.array([[1e-3, 4.0], [2.0, 0.5]]))
    >>> t = weighted_transversal(A)
    >>> t.q.tolist()
    [1, 0]
    >>> S = (sp.diags(t.row_scale) @ A @ sp.diags(t.col_scale)).toarray()[:, t.q]
    >>> np.allclose(np.abs(np.diag(S)), 1) and bool(np.abs(S).max() <= 1 + 1e-12)
    True
    """
    check_choice(objective, "objective", OBJECTIVES)
    n_threads = check_threads(threads)
    m, stored = _magnitudes(A)
    return WeightedTransversal(*_transversal(m, stored, objective, bool(scale), n_threads))

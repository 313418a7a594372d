"""matchflow: maximum matchings, linear assignments and maximum flows on GPUs
and multicore CPUs, as drop-ins for the SciPy functions of the same names.

>>> import scipy.sparse as sp, matchflow
>>> matchflow.structural_rank(sp.eye(3, format="csr"))
3
"""
__version__ = "0.1.0"

from ._device import cuda_available, show_config
from ._lsap import AssignmentResult, AssignmentStats, linear_sum_assignment, solve_assignment
from ._sparse_assignment import min_weight_full_bipartite_matching, solve_sparse_assignment
from ._weighted_transversal import WeightedTransversal, weighted_transversal
from ._matching import (
    MatchingResult,
    MatchingStats,
    maximum_bipartite_matching,
    maximum_matching,
    structural_rank,
)

__all__ = [
    "AssignmentResult",
    "AssignmentStats",
    "MatchingResult",
    "MatchingStats",
    "cuda_available",
    "linear_sum_assignment",
    "maximum_bipartite_matching",
    "maximum_matching",
    "min_weight_full_bipartite_matching",
    "show_config",
    "solve_assignment",
    "solve_sparse_assignment",
    "structural_rank",
    "WeightedTransversal",
    "weighted_transversal",
]

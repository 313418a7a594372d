"""matchflow: maximum matchings, linear assignments and maximum flows on GPUs
and multicore CPUs, as drop-ins for the SciPy functions of the same names.

>>> import scipy.sparse as sp, matchflow
>>> matchflow.structural_rank(sp.eye(3, format="csr"))
3
"""
__version__ = "0.1.0"

from ._batched import batch_linear_sum_assignment
from ._device import cuda_available, free_host_cache, show_config
from ._flow import FlowStats, MaximumFlowResult, maximum_flow, solve_flow
from ._lsap import AssignmentResult, AssignmentStats, linear_sum_assignment, solve_assignment
from ._matching import (
    MatchingResult,
    MatchingStats,
    maximum_bipartite_matching,
    maximum_matching,
    structural_rank,
)
from ._preprocess import (
    BTFResult,
    DMResult,
    block_triangular_form,
    dulmage_mendelsohn,
    maximum_transversal,
)
from ._sparse_assignment import min_weight_full_bipartite_matching, solve_sparse_assignment
from ._weighted_transversal import WeightedTransversal, weighted_transversal

__all__ = [
    "AssignmentResult",
    "AssignmentStats",
    "BTFResult",
    "DMResult",
    "FlowStats",
    "MatchingResult",
    "MatchingStats",
    "MaximumFlowResult",
    "WeightedTransversal",
    "batch_linear_sum_assignment",
    "block_triangular_form",
    "cuda_available",
    "dulmage_mendelsohn",
    "free_host_cache",
    "linear_sum_assignment",
    "maximum_bipartite_matching",
    "maximum_flow",
    "maximum_matching",
    "maximum_transversal",
    "min_weight_full_bipartite_matching",
    "show_config",
    "solve_assignment",
    "solve_flow",
    "solve_sparse_assignment",
    "structural_rank",
    "weighted_transversal",
]

"""Graph generators for the papers' instance families (tests, benchmarks, demo).

Two kinds, one module each; everything is re-exported here, so
``from matchflow import generators; generators.rmat(...)`` works for both.

`matchflow.generators.matching`
    bipartite patterns (``scipy.sparse.csr_array``, values 1) for maximum
    matching: uniform_random, power_law, rmat, delaunay, random_geometric, grid_road,
    random_permutation and the adversarial families.
`matchflow.generators.flow`
    flow networks (`FlowInstance`: capacities as an int64 ``csr_array``,
    source, sink, name) for maximum flow: paper 002's DIMACS families
    (acyclic_dense, genrmf, washington_rlg), undirected graphs with
    capacities and s-t pairs chosen by degree, matching as a flow
    (matching_flow), and image and volume segmentation (segmentation_grid,
    segmentation_volume).

Every random generator takes a `seed` and is deterministic for a given
(arguments, seed).

>>> from matchflow import generators
>>> generators.uniform_random(10, seed=0).shape
(10, 10)
>>> generators.genrmf(4, 3, seed=0).graph.shape
(48, 48)
"""
from .flow import (
    FlowInstance,
    acyclic_dense,
    delaunay_flow,
    genrmf,
    genrmf_long,
    genrmf_wide,
    matching_flow,
    grid_flow,
    rmat_flow,
    road_flow,
    segmentation_grid,
    segmentation_volume,
    st_pairs_by_degree,
    undirected_flow,
    undirected_network,
    washington_rlg,
    washington_rlg_long,
    washington_rlg_wide,
)
from .matching import (
    complete_bipartite_blocks,
    delaunay,
    grid_road,
    layered_jacobian,
    long_path,
    power_law,
    random_geometric,
    random_permutation,
    rmat,
    star,
    uniform_random,
)

__all__ = [
    # matching (bipartite patterns)
    "complete_bipartite_blocks",
    "delaunay",
    "grid_road",
    "layered_jacobian",
    "long_path",
    "power_law",
    "random_geometric",
    "random_permutation",
    "rmat",
    "star",
    "uniform_random",
    # maximum flow
    "FlowInstance",
    "acyclic_dense",
    "delaunay_flow",
    "genrmf",
    "genrmf_long",
    "genrmf_wide",
    "matching_flow",
    "grid_flow",
    "rmat_flow",
    "road_flow",
    "segmentation_grid",
    "segmentation_volume",
    "st_pairs_by_degree",
    "undirected_flow",
    "undirected_network",
    "washington_rlg",
    "washington_rlg_long",
    "washington_rlg_wide",
]

// Sparse-solver preprocessing, structural half: strongly connected
// components and the Dulmage-Mendelsohn decomposition (block triangular form)
// on top of a maximum matching.
//
// The matching itself is not computed here: the caller passes the mates
// (from solve_matching, or from the Python layer, which picks the method and
// device).  Everything below is O(n + nnz) and runs on the CPU.
//
// References: T. A. Davis, Direct Methods for Sparse Linear Systems (SIAM
// 2006), section 7.4 (cs_dmperm: coarse and fine decomposition) and
// section 7.3 (cs_scc); R. Tarjan, Depth-first search and linear graph
// algorithms, SIAM J. Comput. 1 (1972); A. Pothen and C.-J. Fan, Computing
// the block triangular form of a sparse matrix, ACM TOMS 16 (1990).
#pragma once

#include <cstdint>

#include "matchflow/graph.hpp"
#include "matchflow/lsap.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

/// Strongly connected components of the directed graph `g` (vertex v has
/// arcs to g.adj[g.ptr[v] .. g.ptr[v+1]); self loops and repeated arcs are
/// allowed).  Iterative Tarjan: O(n + nnz) time, no recursion.
///
/// Component ids come out in REVERSE topological order of the condensation
/// (Tarjan's completion order): for every arc u -> v between different
/// components, component[u] > component[v]; component 0 is a sink.  A block
/// upper triangular order (arcs i -> j for entries (i, j) go from earlier to
/// later blocks) therefore takes block n_components - 1 - component[v].
///
/// @param[in]  g             the graph (g.n vertices)
/// @param[out] component     length g.n: component id of each vertex
/// @param[out] n_components  number of components
status strongly_connected_components(const adjacency_view& g, vertex_t* component,
                                     vertex_t* n_components) noexcept;

/// Outputs of dulmage_mendelsohn, caller-allocated, as CSparse cs_dmperm
/// defines them (Davis 2006, section 7.4), 0-based.  A[p][:, q] is block
/// upper triangular; rows r[k]:r[k+1] by columns s[k]:s[k+1] is fine block k.
/// Coarse blocks: rows rr[0]:rr[1] (R1) by columns cc[0]:cc[2] (C0 unmatched,
/// then C1) is the horizontal part; rows rr[1]:rr[2] by columns cc[2]:cc[3]
/// the square part; rows rr[2]:rr[4] (R3, then R0 unmatched) by columns
/// cc[3]:cc[4] the vertical part.  rr[3] is the structural rank.
struct dm_result {
  vertex_t* p = nullptr;  ///< length n_rows: row permutation
  vertex_t* q = nullptr;  ///< length n_cols: column permutation
  vertex_t* r = nullptr;  ///< length min(n_rows, n_cols) + 3 (n_blocks + 1 used)
  vertex_t* s = nullptr;  ///< as r
  vertex_t rr[5] = {0, 0, 0, 0, 0};
  vertex_t cc[5] = {0, 0, 0, 0, 0};
  vertex_t n_blocks = 0;  ///< fine blocks
};

/// What a dulmage_mendelsohn run did.
struct dm_stats {
  double seconds_coarse = 0;          ///< alternating BFS and the coarse permutation
  double seconds_graph = 0;           ///< building the square part's graph
  double seconds_scc = 0;             ///< its strongly connected components (the GPU step included)
  double seconds_fine = 0;            ///< ordering the square part by block
  std::int64_t scc_pivot_size = -1;   ///< the GPU step's component (-1: Tarjan alone)
  std::int64_t scc_pivot_levels = 0;  ///< its searches' levels (an upper bound)
};

/// What the GPU step of the strongly connected components found
/// (cuda::gpu_pivot_scc).
struct pivot_scc_result {
  vertex_t pivot = -1;      ///< the vertex of greatest in-degree x out-degree
  vertex_t size = 0;        ///< vertices of its component
  std::int64_t levels = 0;  ///< of both searches, rounded up to a batch of launches
  std::int64_t kernel_launches = 0;
};

/// Dulmage-Mendelsohn decomposition of the pattern `g` given a maximum
/// matching of it (col4row / row4col, -1 for unmatched).  Coarse part:
/// alternating breadth-first searches from the unmatched columns (reaching
/// R1, C1) and from the unmatched rows (R3, C3); fine part: the strongly
/// connected components of the square part's graph (row i -> the row
/// matched to column j, for each entry (i, j) with j in C2).  Deterministic:
/// within each coarse set and fine block, matched pairs are in the order of
/// their rows and unmatched rows and columns in increasing order.
/// The column orientation g.cols is used when given, else built, and only
/// when some column is unmatched.
///
/// @param[in]  g        the pattern (g.cols.ptr may be null)
/// @param[in]  col4row  length g.n_rows(): a MAXIMUM matching (not checked)
/// @param[in]  row4col  length g.n_cols(): its inverse
/// @param[in]  threads  OpenMP threads for the parallel passes; 0 = default
/// @param[in]  scc_device  a CUDA device for the components' first step
///             (pivot_scc.cpp) when the square part has at least
///             `scc_device_min` vertices; -1: Tarjan alone
/// @param[out] out      the decomposition (arrays allocated by the caller)
/// @param[out] stats    timings (may be null)
status dulmage_mendelsohn(const bipartite_view& g, const vertex_t* col4row, const vertex_t* row4col,
                          int threads, int scc_device, std::int64_t scc_device_min, dm_result* out,
                          dm_stats* stats) noexcept;

/// The objectives of MC64 (Duff & Koster 2001) solved as an assignment.
enum class transversal_objective : int {
  product = 0,     ///< maximise prod_i |a_{i,q_i}| (MC64 job 5), with scalings
  sum = 1,         ///< maximise sum_i |a_{i,q_i}| (MC64 job 4)
  bottleneck = 2,  ///< maximise min_i |a_{i,q_i}| (MC64 jobs 2-3): bottleneck_transversal
};

/// A weighted transversal of a square matrix given by the magnitudes of its
/// entries: the column q[i] of each row maximising the objective; for
/// bottleneck, bottleneck_transversal (no scalings, no stats), else one
/// sparse assignment ("sparse-sap") on weights log(max_i |a_ij|) - log|a_ij|
/// (product) or -|a_ij| (sum); with `scale` (product only), the scalings from
/// the greatest optimal column duals (one Dijkstra):
/// |row_scale[i] a_ij col_scale[j]| <= 1, equality on the matched entries.
/// (cpp/src/preprocess/weighted_transversal.cpp)
///
/// @param[in]  row_ptr, col_idx  n x n CSR pattern, no duplicates
/// @param[in]  magnitude  |a_ij| per entry: finite and > 0
/// @param[in]  threads    OpenMP threads (the weights, the auction); 0 = default
/// @param[out] col4row    length n
/// @param[out] row_scale, col_scale  length n; written only for product with scale
/// @param[out] stats      the assignment's
/// @return infeasible when the matrix is structurally singular.
status weighted_transversal(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                            const double* magnitude, std::int64_t n,
                            transversal_objective objective, bool scale, int threads,
                            std::int64_t* col4row, double* row_scale, double* col_scale,
                            sparse_lsap_stats* stats) noexcept;

/// The bottleneck transversal: a perfect matching of the n x n pattern
/// maximising its smallest magnitude (Duff & Koster 2001, section 3), by a
/// threshold search carrying one matching between thresholds: matched edges
/// still above a rising threshold are kept, a falling one keeps them all, and
/// each test augments from there (cpp/src/preprocess/bottleneck_transversal.cpp).
///
/// @param[in]  row_ptr, col_idx  n x n CSR pattern, no duplicates
/// @param[in]  magnitude  |a_ij| per entry: finite and > 0
/// @param[out] col4row    length n
/// @return infeasible when the matrix is structurally singular.
status bottleneck_transversal(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                              const double* magnitude, std::int64_t n,
                              std::int64_t* col4row) noexcept;

}  // namespace matchflow

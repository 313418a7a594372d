// Maximum flow and minimum cut: the C++ entry point.
//
// The network is a directed graph in CSR form: arc a = (u, heads[a]) for
// a in [tails_ptr[u], tails_ptr[u + 1]), with capacity caps[a] >= 0.  Parallel
// arcs, anti-parallel arcs, self-loops (they carry no flow) and zero
// capacities are allowed; the Python layer has checked everything else
// (offsets monotone, heads in range, capacities non-negative, s != t, both
// in range, total capacity out of s below 2^62 so that no excess overflows).
#pragma once

#include <cstdint>

#include "matchflow/graph.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

using capacity_t = std::int64_t;

/// Algorithms, named as their papers name them.
enum class flow_method : int {
  pr = 0,      ///< sequential highest-label push-relabel, hi_pr-class (Cherkassky-Goldberg 1997)
  ppr = 1,     ///< OpenMP synchronous push-relabel (Baumstark, Blelloch, Shun, ESA 2015)
  gpu_pr = 2,  ///< ECL-MaxFlow (paper 002), tuned for Hopper
  bk = 3,      ///< Boykov-Kolmogorov search trees (TPAMI 2004): graph cuts on images
};

/// A flow network; non-owning.
struct flow_network {
  vertex_t n = 0;                    ///< vertices
  const offset_t* ptr = nullptr;     ///< length n + 1: arcs of u are [ptr[u], ptr[u+1])
  const vertex_t* heads = nullptr;   ///< length ptr[n]
  const capacity_t* caps = nullptr;  ///< length ptr[n], every entry >= 0
  /// The capacities as int32 in place of `caps` (then null), as SciPy's
  /// arrays hold them, so that they need no widening on the host.
  const std::int32_t* caps32 = nullptr;
  vertex_t source = 0;
  vertex_t sink = 0;
  offset_t n_arcs() const { return ptr[n]; }
  /// The capacity of arc a, from whichever array holds them.
  capacity_t cap(offset_t a) const { return caps != nullptr ? caps[a] : caps32[a]; }
};

/// Tuning knobs; defaults are the papers' best.
struct flow_options {
  int threads = 0;             ///< OpenMP threads; 0 = omp_get_max_threads()
  int device = 0;              ///< CUDA device ordinal
  bool return_flow = true;     ///< false: phase 1 only (value and cut need no more)
  double relabel_freq = -1.0;  ///< global-relabel frequency factor; < 0 = method default
  bool paper_variant = false;  ///< gpu_pr: paper 002's host-driven loop, for comparison
};

/// What a run did; every field a method does not use stays 0.
struct flow_stats {
  double seconds_setup = 0;     ///< building the residual graph (reverse arcs), allocations
  double seconds_transfer = 0;  ///< host <-> device copies (GPU), and the flow matrix built there
  double seconds_phase1 = 0;    ///< maximum preflow, then the minimum cut
  double seconds_cut = 0;       ///< of phase 1, the cut's own search (CPU, when the preflow
                                ///<   did not end on exact labels)
  double seconds_phase2 = 0;    ///< excess returned to the source (only with return_flow)
  double seconds_global_relabel = 0;  ///< of both phases, in global relabels
  std::int64_t pushes = 0;
  std::int64_t relabels = 0;
  std::int64_t global_relabels = 0;
  std::int64_t bfs_levels = 0;  ///< levels of all global relabels (gpu_pr, ppr)
  std::int64_t gaps = 0;        ///< gap-heuristic firings
  std::int64_t iterations = 0;  ///< rounds / cycles of the main loop
  std::int64_t kernel_launches = 0;
  std::int64_t capacity_bytes = 0;  ///< gpu_pr: bytes a capacity took over the host link (4:
                                    ///<   given as int32, or int64 that all fit int32 and went
                                    ///<   staged; else 8); pr: bytes a residual capacity takes
                                    ///<   in its records (4 when every capacity is below 2^30)
};

/// What a run found.  Caller-owned buffers.
struct flow_result {
  capacity_t value = 0;                 ///< out: the maximum flow value
  capacity_t* arc_flow = nullptr;       ///< out, length n_arcs (may be null when !return_flow):
                                        ///<   flow on each input arc, 0 <= f <= cap
  std::uint8_t* source_side = nullptr;  ///< out, length n: 1 for vertices that cannot reach
                                        ///<   the sink in the residual graph (a minimum cut)
  /// Optional (may be null), sizes as build_flow_matrix's: with these given
  /// (and options.return_flow), a method builds SciPy's flow matrix where
  /// its flow is (gpu_pr on the device, when it fits there; the CPU methods
  /// from their residual graph) and then leaves arc_flow unwritten.
  offset_t* matrix_indptr = nullptr;
  vertex_t* matrix_indices = nullptr;
  capacity_t* matrix_data = nullptr;
  offset_t matrix_nnz = -1;  ///< out: entries of the matrix, -1 when it was not built
};

/// Computes a maximum s-t flow and a minimum cut of `net`.
///
/// The cut is {v : v cannot reach the sink in the residual graph}, which is
/// the same set after phase 1 as after phase 2 (phase 2 moves flow only
/// between vertices that cannot reach the sink), so it does not depend on
/// options.return_flow.
///
/// @param[in]  net      the network
/// @param[in]  method   algorithm
/// @param[in]  options  tuning knobs
/// @param[out] result   value, per-arc flow (when asked), cut
/// @param[out] stats    what the run did
status solve_maxflow(const flow_network& net, flow_method method, const flow_options& options,
                     flow_result* result, flow_stats* stats) noexcept;

/// SciPy's flow matrix (scipy.sparse.csgraph.maximum_flow's `flow`) in CSR:
/// one entry per distinct pair (u, v) with an arc u -> v or v -> u, explicit
/// zeros included (self-loops give a 0 on the diagonal), columns sorted in
/// each row, value f(u, v) - f(v, u) with parallel arcs summed.
///
/// @param[in]  net       the network (n, ptr and heads are read)
/// @param[in]  arc_flow  flow on each arc, length n_arcs
/// @param[in]  threads   OpenMP threads; 0 = omp_get_max_threads()
/// @param[out] indptr    length n + 1
/// @param[out] indices   length 2 * n_arcs (an upper bound); the first *nnz are written
/// @param[out] data      length 2 * n_arcs; the first *nnz are written
/// @param[out] nnz       entries written
status build_flow_matrix(const flow_network& net, const capacity_t* arc_flow, int threads,
                         offset_t* indptr, vertex_t* indices, capacity_t* data,
                         offset_t* nnz) noexcept;

/// SciPy's own algorithms (scipy.sparse.csgraph.maximum_flow's "dinic" and
/// "edmonds_karp", cpp/src/maxflow/scipy_flows.cpp) on SciPy's residual
/// graph and arc order: the flow is the one SciPy returns, as its flow
/// matrix (SciPy's pattern: every arc of the residual graph, parallel arcs
/// not summed).  O(V E^2) and O(V^2 E): for SciPy's exact answers, not speed.
///
/// @param[out] value        the maximum flow value
/// @param[out] source_side  length n: 1 for vertices that cannot reach the sink
/// @param[out] indptr, indices, data, nnz  as build_flow_matrix's
status solve_maxflow_scipy(const flow_network& net, bool dinic, capacity_t* value,
                           std::uint8_t* source_side, offset_t* indptr, vertex_t* indices,
                           capacity_t* data, offset_t* nnz) noexcept;

}  // namespace matchflow

// The two-phase frame of the CPU push-relabel codes (pr and ppr).
//
// Phase 1 takes the initial preflow (every arc out of the source saturated)
// to a maximum preflow: the sink's excess is then the flow value, and the
// vertices that cannot reach the sink in the residual graph are a minimum
// cut.  Phase 2, only when a flow is asked for, returns the excess stranded
// at vertices that cannot reach the sink to the source by flow
// decomposition (flow_decomposition.hpp), leaving a maximum flow (Cherkassky
// & Goldberg 1997, hi_pr's two stages); where the preflow's flow cycles make
// the decomposition costly, each code returns the rest by its own
// push-relabel pass back to the source.  This frame builds (with
// options.threads threads, whatever the code), times and reads back: the
// per-arc flows, or SciPy's flow matrix straight from the residual graph
// when the result has buffers for it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../openmp.hpp"
#include "flow_decomposition.hpp"
#include "matchflow/detail/environment.hpp"
#include "matchflow/maxflow.hpp"
#include "matchflow/timing.hpp"
#include "residual_graph.hpp"
#include "residual_reach.hpp"

namespace matchflow::detail {

/// MATCHFLOW_PR_NARROW=0 keeps pr's records at capacity_t (A/B only).
inline bool narrow_capacities_wanted() { return env_number("MATCHFLOW_PR_NARROW", 1, 0) != 0; }

/// Both phases on the residual graph with records of Arc and Cap; false,
/// and nothing done, when a capacity does not fit Cap (residual_graph::fits).
/// `narrowable`: the code may take int32 capacities, so it reports the
/// records' capacity bytes (stats->capacity_bytes).
template <class Arc, class Cap, class Phase1, class Phase2>
bool two_phase_flow_as(const flow_network& net, const flow_options& options, flow_result* result,
                       flow_stats* stats, Phase1& phase1, Phase2& phase2, bool narrowable) {
  const auto t0 = std::chrono::steady_clock::now();
  const int team = team_size(options.threads);
  residual_graph<Arc, Cap> g = build_residual_graph<Arc, Cap>(net, team, options.return_flow);
  if (!g.fits) return false;
  if (narrowable) stats->capacity_bytes = sizeof(Cap);
  std::vector<capacity_t> excess(std::size_t(net.n), 0);
  stats->seconds_setup = seconds_since(t0);

  const auto t1 = std::chrono::steady_clock::now();
  saturate_source_arcs(g, net.source, excess, team);
  if (!phase1(g, excess, result->source_side)) {
    // The vertices that cannot reach the sink: after a maximum preflow, a
    // minimum cut (its complement holds every vertex that can still send to
    // the sink).
    const auto cut = std::chrono::steady_clock::now();
    mark_unreached(g, net.sink, team, result->source_side);
    stats->seconds_cut = seconds_since(cut);
  }
  result->value = excess[std::size_t(net.sink)];
  stats->seconds_phase1 = seconds_since(t1);

  if (options.return_flow) {
    const auto t2 = std::chrono::steady_clock::now();
    phase2(g, excess);
    const bool matrix = result->matrix_indptr != nullptr;
    if (!matrix && result->arc_flow != nullptr) write_arc_flow(net, g, team, result->arc_flow);
    stats->seconds_phase2 = seconds_since(t2);
    if (matrix) write_flow_matrix(net, g, team, result);  // timed by the caller's total only
  }
  return true;
}

/// Runs both phases on the residual graph of `net` (int32 arc indices when
/// they fit; with NarrowCapacities, int32 residual capacities too when every
/// capacity is below narrow_cap_limit: 12-byte records, which pr's build and
/// scans read a quarter less of, NOTES.md, "CPU constants") and fills
/// `result` and the stats' three timings.  A narrow build that meets a larger
/// capacity is dropped and the graph built again with capacity_t.
/// phase1(g, excess, source_side), generic in the graph's arc type, must
/// leave a maximum preflow; it returns true when it has also written the
/// minimum cut (source_side[v] = 1 iff v cannot reach the sink, as
/// mark_unreached gives it), e.g. from exact labels it computed last;
/// phase2(g, excess) must return every excess but the sink's to the source
/// (return_excess, or a code's own pass).
template <bool NarrowCapacities = false, class Phase1, class Phase2>
void two_phase_flow(const flow_network& net, const flow_options& options, flow_result* result,
                    flow_stats* stats, Phase1&& phase1, Phase2&& phase2) {
  if (!residual_fits_int32(net)) {
    two_phase_flow_as<std::int64_t, capacity_t>(net, options, result, stats, phase1, phase2,
                                                NarrowCapacities);
    return;
  }
  if constexpr (NarrowCapacities) {
    if (narrow_capacities_wanted() && two_phase_flow_as<std::int32_t, std::int32_t>(
                                          net, options, result, stats, phase1, phase2, true)) {
      return;
    }
  }
  two_phase_flow_as<std::int32_t, capacity_t>(net, options, result, stats, phase1, phase2,
                                              NarrowCapacities);
}

}  // namespace matchflow::detail

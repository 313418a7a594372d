// The two-phase frame of the CPU push-relabel codes (pr and ppr).
//
// Phase 1 takes the initial preflow (every arc out of the source saturated)
// to a maximum preflow: the sink's excess is then the flow value, and the
// vertices that cannot reach the sink in the residual graph are a minimum
// cut.  Phase 2, only when a flow is asked for, returns the excess stranded
// at label n to the source, leaving a maximum flow (Cherkassky & Goldberg
// 1997, the two-phase push-relabel; highest_label.hpp).  The codes differ
// only in how each phase discharges; this frame builds, times and reads back.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "matchflow/maxflow.hpp"
#include "residual_graph.hpp"
#include "timing.hpp"

namespace matchflow::detail {

/// Runs both phases on the residual graph of `net` and fills `result` and
/// the stats' three timings.  phase1(g, excess) must leave a maximum
/// preflow; phase2(g, excess), run after result->source_side holds the
/// cut, must leave a flow.
template <class Phase1, class Phase2>
void two_phase_flow(const flow_network& net, const flow_options& options, flow_result* result,
                    flow_stats* stats, Phase1&& phase1, Phase2&& phase2) {
  const auto t0 = std::chrono::steady_clock::now();
  residual_graph g = build_residual_graph(net);
  std::vector<capacity_t> excess(std::size_t(net.n), 0);
  stats->seconds_setup = seconds_since(t0);

  const auto t1 = std::chrono::steady_clock::now();
  saturate_source_arcs(g, net.source, excess);
  phase1(g, excess);
  result->value = excess[std::size_t(net.sink)];
  mark_source_side(g, net.sink, result->source_side);
  stats->seconds_phase1 = seconds_since(t1);

  if (options.return_flow) {
    const auto t2 = std::chrono::steady_clock::now();
    phase2(g, excess);
    if (result->arc_flow != nullptr) write_arc_flow(net, g, result->arc_flow);
    stats->seconds_phase2 = seconds_since(t2);
  }
}

}  // namespace matchflow::detail

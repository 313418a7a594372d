// One highest-label push-relabel pass over a residual graph (push_relabel.cpp).
// pr runs it twice (phase 1 toward the sink, phase 2 back to the source);
// ppr reuses it for its phase 2.
#pragma once

#include <cstdint>
#include <vector>

#include "matchflow/maxflow.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// hi_pr's default global-update frequency (GLOB_UPDT_FREQ): a global
/// relabel once the relabel work exceeds (alpha * n + m) / freq.
constexpr double default_global_update_freq = 0.5;
constexpr double global_update_alpha = 6.0;  ///< hi_pr's ALPHA
constexpr std::int64_t relabel_work_beta = 12;  ///< hi_pr's BETA: fixed work per relabel

/// Moves excess toward `target` until every vertex other than `target` and
/// `origin` with excess > 0 has label n, i.e. cannot reach `target` in the
/// residual graph.  `origin` is held at label n and never receives flow.
/// Phase 1: target = sink, origin = source (a maximum preflow).  Phase 2:
/// target = source, origin = sink (every remaining excess can reach the
/// source, so this ends with a flow).  `freq` <= 0 means the default.
/// `within`, when not null, confines the pass to vertices v with within[v]
/// != 0 (the others keep label n): phase 2 passes the source side of the
/// cut, since every residual path from an excess back to the source runs
/// through vertices that cannot reach the sink.
void highest_label_pass(residual_graph& g, std::vector<capacity_t>& excess, vertex_t target,
                        vertex_t origin, double freq, const std::uint8_t* within,
                        flow_stats* stats);

}  // namespace matchflow::detail

// CPU maximum-flow algorithms (internal to cpp/).  Each fills `result` (value,
// cut, and arc_flow when options.return_flow) and the counters of `stats`
// it uses; dispatch.cpp times nothing they time themselves.
#pragma once

#include "matchflow/maxflow.hpp"

namespace matchflow::detail {

/// Sequential highest-label push-relabel with global relabeling and the gap
/// heuristic, two phases (hi_pr, Cherkassky & Goldberg 1997).  (push_relabel.cpp)
void push_relabel_flow(const flow_network& net, const flow_options& options, flow_result* result,
                       flow_stats* stats);

/// OpenMP synchronous push-relabel (Baumstark, Blelloch & Shun, ESA 2015).
/// (parallel_push_relabel.cpp)
void parallel_push_relabel_flow(const flow_network& net, const flow_options& options,
                                flow_result* result, flow_stats* stats);

/// Boykov-Kolmogorov search trees on the preflow's excess vertices, two
/// phases (Boykov & Kolmogorov, TPAMI 2004).  (boykov_kolmogorov.cpp)
void boykov_kolmogorov_flow(const flow_network& net, const flow_options& options,
                            flow_result* result, flow_stats* stats);

}  // namespace matchflow::detail

// Phase 2 of the CPU push-relabel codes: a maximum preflow made a flow.
#pragma once

#include <vector>

#include "matchflow/maxflow.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// Returns every excess (vertices other than `source` and `sink`) to the
/// source along the flow that brought it, as hi_pr's second stage does
/// (Cherkassky & Goldberg 1997): a depth-first search backward
/// along arcs that carry flow, from each vertex with excess, cancels the
/// flow cycles it meets (the anti-parallel flows of a low-degree vertex in
/// one pass when first met) and orders the vertices it finishes topologically;
/// then each vertex, in that order, sends its excess back along its
/// incoming flow.  Every vertex with excess cannot reach the sink, nor can
/// any vertex that sends it flow, so only flows among vertices that cannot
/// reach the sink change: the minimum cut is unchanged.  Returns false,
/// the excesses untouched (the flow changed by cancelled cycles only), once
/// the cancelled cycles hold more than cycle_arcs_per_vertex arcs per vertex
/// of the graph: the caller then returns the excess by push-relabel.
template <class Arc, class Cap>
bool decompose_excess(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess, vertex_t source,
                      vertex_t sink, double cycle_arcs_per_vertex);

/// pr's phase 2: decompose_excess with pr's budget (flow_decomposition.cpp),
/// else a sequential push-relabel pass back to the source (highest_label
/// with the source as target), its pushes and relabels counted in `stats`.
template <class Arc, class Cap>
void return_excess(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess, vertex_t source,
                   vertex_t sink, flow_stats* stats);

}  // namespace matchflow::detail

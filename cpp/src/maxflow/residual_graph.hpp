// The residual graph shared by the CPU push-relabel codes (pr and ppr).
//
// Every input arc a = (u, v), u != v, becomes a pair of residual arcs: the
// forward copy in u's list (residual capacity caps[a]) and the reverse copy
// in v's list (residual capacity 0), each holding the index of the other in
// `reverse` (hi_pr's paired arcs, Cherkassky & Goldberg 1997).  Both copies live in one CSR, so a vertex's outgoing residual
// arcs are one contiguous range; parallel input arcs stay separate pairs, so
// each keeps its own flow.  Self-loops get no residual arcs: they carry no
// flow.  flow(a) = caps[a] - rescap[forward_of[a]].
//
// Sizes: 4 + 8 + 8 bytes per residual arc, 2 per input arc.
#pragma once

#include <cstdint>
#include <vector>

#include "matchflow/maxflow.hpp"

namespace matchflow::detail {

struct residual_graph {
  vertex_t n = 0;
  std::vector<offset_t> first;       ///< length n + 1: residual arcs of u are [first[u], first[u+1])
  std::vector<vertex_t> head;        ///< head of each residual arc
  std::vector<capacity_t> rescap;    ///< residual capacity of each residual arc
  std::vector<offset_t> reverse;     ///< index of the paired arc
  std::vector<offset_t> forward_of;  ///< per input arc: its forward copy, -1 for a self-loop
};

/// Builds the residual graph of `net` with zero flow.  Arcs of each vertex
/// keep the input order (forward and reverse copies interleaved by tail).
residual_graph build_residual_graph(const flow_network& net);

/// The initial preflow: saturates every arc out of `source`, moving its
/// capacity into the heads' excess (Goldberg & Tarjan 1988, the start of
/// every push-relabel method).  `excess` has g.n entries, all zero.
void saturate_source_arcs(residual_graph& g, vertex_t source, std::vector<capacity_t>& excess);

/// True iff a vertex other than `a` and `b` has positive excess (a preflow
/// that is not yet a flow).
bool has_excess(const residual_graph& g, const std::vector<capacity_t>& excess, vertex_t a,
                vertex_t b);

/// arc_flow[a] = caps[a] - residual capacity of a's forward copy (0 for self-loops).
void write_arc_flow(const flow_network& net, const residual_graph& g, capacity_t* arc_flow);

/// source_side[v] = 1 iff v cannot reach `sink` in the residual graph: a
/// backward BFS from the sink over arcs with positive residual capacity.
/// After a maximum preflow this is a minimum cut (its complement holds every
/// vertex that can still send to the sink).
void mark_source_side(const residual_graph& g, vertex_t sink, std::uint8_t* source_side);

}  // namespace matchflow::detail

// The residual graph shared by the CPU push-relabel codes (pr and ppr).
//
// Every input arc a = (u, v), u != v, becomes a pair of residual arcs: the
// forward copy in u's list (residual capacity caps[a]) and the reverse copy
// in v's list (residual capacity 0), each holding the index of the other
// (hi_pr's paired arcs, Cherkassky & Goldberg 1997).  Both copies live in one
// CSR, so a vertex's outgoing residual arcs are one contiguous range: first
// its forward copies in input order, then its reverse copies ordered by input
// arc (a counting transpose, so the layout is the same for every thread
// count).  Forward copies first was faster than an interleaved layout on
// every instance, and than reverse copies first on road-like and Delaunay
// graphs (NOTES.md, "CPU constants").
// Parallel input arcs stay separate pairs, so each keeps its own flow.
// Value-only builds pair anti-parallel arcs instead (build_residual_graph).
// Self-loops get no residual arcs: they carry no flow.
// flow(a) = caps[a] - rescap(forward copy) = rescap(reverse copy).
//
// Arcs are records {rescap, head, reverse}, as hi_pr's: a scan reads one
// stream.  The arc index type is int32 while the residual arcs fit (16 bytes
// a record, 2 per input arc), else int64 (24 bytes).  pr's records hold the
// residual capacity as int32 where every capacity is below narrow_cap_limit
// (12 bytes a record; two_phase.hpp), else as capacity_t.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../big_array.hpp"
#include "matchflow/maxflow.hpp"

namespace matchflow::detail {

template <class Arc, class Cap = capacity_t>
struct residual_arc {  // no initialisers: the build writes every field
  Cap rescap;          ///< residual capacity
  vertex_t head;
  Arc reverse;  ///< index of the paired arc
};

/// Capacities below this fit residual records of int32: a record's capacity
/// is at most its arc's plus its pair's (anti-parallel arcs share a pair in
/// value-only builds).
constexpr capacity_t narrow_cap_limit = capacity_t(1) << 30;

/// Calls X(Arc, Cap) for each residual graph the CPU codes build: int32 or
/// int64 arc indices with capacity_t capacities, and pr's int32 ones
/// (two_phase.hpp); the explicit instantiations of the .cpp files.
#define MATCHFLOW_RESIDUAL_GRAPHS(X) \
  X(std::int32_t, capacity_t)        \
  X(std::int64_t, capacity_t)        \
  X(std::int32_t, std::int32_t)

template <class Arc, class Cap = capacity_t>
struct residual_graph {
  using arc_t = Arc;
  using cap_t = Cap;
  vertex_t n = 0;
  Arc n_arcs = 0;
  big_array<Arc> first;          ///< length n + 1: residual arcs of u are [first[u], first[u+1])
  big_array<Arc> reverse_first;  ///< length n: u's forward copies are [first[u], reverse_first[u]),
                                 ///< its reverse copies [reverse_first[u], first[u+1])
  big_array<residual_arc<Arc, Cap>> arcs;  ///< n_arcs records
  big_array<Arc> forward_of;               ///< per input arc: its forward copy, -1 for a self-loop
                                           ///< (only when built for flows)
  bool fits = true;  ///< false: a capacity was not below narrow_cap_limit (Cap = int32 only);
                     ///< the records are then unusable
};

/// True when `net`'s residual graph is indexed by int32.
bool residual_fits_int32(const flow_network& net);

/// Builds the residual graph of `net` with zero flow, with `team` OpenMP
/// threads (each owns a range of heads for the transpose; the result does
/// not depend on `team`).  `flows`: with forward_of, which only reading the
/// flows back needs (a ninth of what the build writes).  Without flows, an
/// arc (u, v) and an arc (v, u), neither end a terminal and both rows short,
/// share one residual pair, its records the two forward copies (an image
/// pixel's list: 10 records to 6 on a 4-connected grid); a vertex's forward
/// range still holds its out-arcs, its reverse range only the in-arcs not
/// paired, and the terminals' ranges are as with flows.  Reading flows back
/// (forward_of, the flow matrix, the flow decompositions' reverse ranges)
/// needs the unpaired form.
template <class Arc, class Cap = capacity_t>
residual_graph<Arc, Cap> build_residual_graph(const flow_network& net, int team, bool flows);

/// The initial preflow: saturates every arc out of `source`, moving its
/// capacity into the heads' excess (Goldberg & Tarjan 1988, the start of
/// every push-relabel method), with `team` threads (an image's source has an
/// arc to every pixel: one thread's pass was a sixth of bk's search).
/// `excess` has g.n entries, all zero.
template <class Arc, class Cap>
void saturate_source_arcs(residual_graph<Arc, Cap>& g, vertex_t source,
                          std::vector<capacity_t>& excess, int team);

/// arc_flow[a] = caps[a] - residual capacity of a's forward copy (0 for self-loops).
template <class Arc, class Cap>
void write_arc_flow(const flow_network& net, const residual_graph<Arc, Cap>& g, int team,
                    capacity_t* arc_flow);

/// SciPy's flow matrix into result's matrix buffers (sizes as
/// build_flow_matrix's), read off the residual graph: the reverse copies are
/// each vertex's in-arcs in tail order (flow_matrix.cpp).  Sets matrix_nnz.
template <class Arc, class Cap>
void write_flow_matrix(const flow_network& net, const residual_graph<Arc, Cap>& g, int threads,
                       flow_result* result);

}  // namespace matchflow::detail

// CPU building blocks of the preprocessing entry points (preprocess.hpp).
// They may throw std::bad_alloc; the entry points wrap them in guarded().
#pragma once

#include <cstdint>

#include "matchflow/graph.hpp"

namespace matchflow::detail {

/// Tarjan's strongly connected components, iterative, in Pearce's one-array
/// form (scc.cpp).  Writes the component of each vertex, ids in reverse
/// topological order of the condensation (see strongly_connected_components),
/// and returns their count.
vertex_t tarjan_scc(const adjacency_view& g, vertex_t* component);

/// tarjan_scc's components and id order when the vertices marked in
/// `member` are known to be strongly connected: they are contracted to one
/// vertex and Tarjan runs on the contracted graph (pivot_scc.cpp; the
/// marks come from cuda::gpu_pivot_scc).
vertex_t contracted_scc(const adjacency_view& g, const std::uint8_t* member, int threads,
                        vertex_t* component);

}  // namespace matchflow::detail

// CPU building blocks of the preprocessing entry points (preprocess.hpp).
// They may throw std::bad_alloc; the entry points wrap them in guarded().
#pragma once

#include "matchflow/graph.hpp"

namespace matchflow::detail {

/// Tarjan's strongly connected components, iterative, in Pearce's one-array
/// form (scc.cpp).  Writes the component of each vertex, ids in reverse
/// topological order of the condensation (see strongly_connected_components),
/// and returns their count.
vertex_t tarjan_scc(const adjacency_view& g, vertex_t* component);

}  // namespace matchflow::detail

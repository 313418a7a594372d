// The other orientation of a sparse pattern, built in C++ only when an
// algorithm needs it (the caller hands over the row -> column pattern).
#pragma once

#include <vector>

#include "matchflow/graph.hpp"

namespace matchflow::detail {

/// Owning compressed adjacency; view() is valid while this lives.
struct adjacency_storage {
  std::vector<offset_t> ptr;
  std::vector<vertex_t> adj;
  adjacency_view view() const {
    return adjacency_view{static_cast<vertex_t>(ptr.size() - 1), ptr.data(), adj.data()};
  }
};

/// Transpose of `in` (n_out vertices on the other side): a counting sort, so
/// each output list keeps the input order of its sources (deterministic).
/// Large inputs are sorted by `threads` OpenMP threads (0 = the OpenMP
/// default: OMP_NUM_THREADS or all cores), in two bucketed passes.
adjacency_storage transpose(const adjacency_view& in, vertex_t n_out, int threads = 0);

}  // namespace matchflow::detail

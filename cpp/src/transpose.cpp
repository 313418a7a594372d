#include "transpose.hpp"

namespace matchflow::detail {

adjacency_storage transpose(const adjacency_view& in, vertex_t n_out) {
  adjacency_storage out;
  out.ptr.assign(static_cast<std::size_t>(n_out) + 1, 0);
  out.adj.resize(static_cast<std::size_t>(in.nnz()));
  for (offset_t e = 0; e < in.nnz(); ++e) ++out.ptr[in.adj[e] + 1];
  for (vertex_t v = 0; v < n_out; ++v) out.ptr[v + 1] += out.ptr[v];
  std::vector<offset_t> next(out.ptr.begin(), out.ptr.end() - 1);
  for (vertex_t u = 0; u < in.n; ++u) {
    for (offset_t e = in.ptr[u]; e < in.ptr[u + 1]; ++e) out.adj[next[in.adj[e]]++] = u;
  }
  return out;
}

}  // namespace matchflow::detail

// Strongly connected components after one of them is known: the component
// found on the GPU (cuda::gpu_pivot_scc, the forward-backward step) becomes
// a single vertex, and Tarjan (scc.cpp) runs on the contracted graph.
// Contracting a strongly connected set keeps every other component and the
// condensation's arcs, so Tarjan's ids stay in reverse topological order;
// what it walks sequentially shrinks by the contracted component (on a
// Delaunay graph, one component: all of it).
//
// Contracted vertex ids keep the vertex order, the component taking the
// place of its first vertex.  The passes over the arcs run on the team: each
// vertex's kept arcs (those not inside the component) are counted, placed
// by a prefix sum, then copied.
#include <vector>

#include "../openmp.hpp"
#include "../transpose.hpp"
#include "preprocess_cpu.hpp"

namespace matchflow::detail {
namespace {

/// node[v]: v's vertex in the contracted graph; returns their number.
vertex_t contracted_ids(vertex_t n, const std::uint8_t* member, vertex_t* node) {
  vertex_t next = 0, merged = -1;
  for (vertex_t v = 0; v < n; ++v) {
    if (!member[v]) {
      node[v] = next++;
    } else {
      if (merged < 0) merged = next++;
      node[v] = merged;
    }
  }
  return next;
}

}  // namespace

vertex_t contracted_scc(const adjacency_view& g, const std::uint8_t* member, int threads,
                        vertex_t* component) {
  const vertex_t n = g.n;
  const int team = team_size(threads);
  std::vector<vertex_t> node(static_cast<std::size_t>(n));
  const vertex_t n_nodes = contracted_ids(n, member, node.data());
  // kept[v]: v's arcs but those with both ends in the component.
  std::vector<offset_t> kept(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for num_threads(team) schedule(static, 4096) if (g.nnz() > (1 << 16))
  for (vertex_t v = 0; v < n; ++v) {
    offset_t count = 0;
    for (offset_t a = g.ptr[v]; a < g.ptr[v + 1]; ++a) count += !(member[v] && member[g.adj[a]]);
    kept[std::size_t(v)] = count;
  }
  // The contracted lists in node order; the component's list is its
  // vertices' kept arcs in vertex order.  start[v]: where v's arcs go.
  adjacency_storage out;
  out.ptr.assign(static_cast<std::size_t>(n_nodes) + 1, 0);
  for (vertex_t v = 0; v < n; ++v) {
    out.ptr[std::size_t(node[std::size_t(v)]) + 1] += kept[std::size_t(v)];
  }
  for (vertex_t k = 0; k < n_nodes; ++k) out.ptr[std::size_t(k) + 1] += out.ptr[std::size_t(k)];
  std::vector<offset_t>& start = kept;  // counts become positions, in place
  offset_t merged_at = -1;
  for (vertex_t v = 0; v < n; ++v) {
    const offset_t count = start[std::size_t(v)];
    if (!member[v]) {
      start[std::size_t(v)] = out.ptr[std::size_t(node[std::size_t(v)])];
      continue;
    }
    if (merged_at < 0) merged_at = out.ptr[std::size_t(node[std::size_t(v)])];
    start[std::size_t(v)] = merged_at;
    merged_at += count;
  }
  const offset_t at = out.ptr[std::size_t(n_nodes)];
  out.adj.resize(static_cast<std::size_t>(at));
#pragma omp parallel for num_threads(team) schedule(static, 4096) if (g.nnz() > (1 << 16))
  for (vertex_t v = 0; v < n; ++v) {
    offset_t to = start[std::size_t(v)];
    for (offset_t a = g.ptr[v]; a < g.ptr[v + 1]; ++a) {
      const vertex_t w = g.adj[a];
      if (!(member[v] && member[w])) out.adj[std::size_t(to++)] = node[std::size_t(w)];
    }
  }
  std::vector<vertex_t> node_component(static_cast<std::size_t>(n_nodes));
  const vertex_t n_components = tarjan_scc(out.view(), node_component.data());
#pragma omp parallel for num_threads(team) schedule(static) if (n > (1 << 16))
  for (vertex_t v = 0; v < n; ++v) component[v] = node_component[std::size_t(node[std::size_t(v)])];
  return n_components;
}

}  // namespace matchflow::detail

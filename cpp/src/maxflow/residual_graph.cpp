// Residual graph construction, the initial preflow, flow read-back and the
// minimum cut.
#include "residual_graph.hpp"

#include <algorithm>

namespace matchflow::detail {

residual_graph build_residual_graph(const flow_network& net) {
  residual_graph g;
  const vertex_t n = net.n;
  g.n = n;
  const offset_t m = net.n_arcs();
  g.first.assign(std::size_t(n) + 1, 0);
  // Degree of each vertex in the residual graph: out-arcs plus in-arcs.
  for (vertex_t u = 0; u < n; ++u) {
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) continue;
      ++g.first[std::size_t(u) + 1];
      ++g.first[std::size_t(v) + 1];
    }
  }
  for (vertex_t u = 0; u < n; ++u) g.first[std::size_t(u) + 1] += g.first[std::size_t(u)];
  const offset_t arcs = g.first[std::size_t(n)];
  g.head.resize(std::size_t(arcs));
  g.rescap.resize(std::size_t(arcs));
  g.reverse.resize(std::size_t(arcs));
  g.forward_of.resize(std::size_t(m));
  std::vector<offset_t> fill(g.first.begin(), g.first.end() - 1);
  for (vertex_t u = 0; u < n; ++u) {
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) {
        g.forward_of[std::size_t(a)] = -1;
        continue;
      }
      const offset_t f = fill[std::size_t(u)]++;
      const offset_t r = fill[std::size_t(v)]++;
      g.head[std::size_t(f)] = v;
      g.rescap[std::size_t(f)] = net.caps[a];
      g.reverse[std::size_t(f)] = r;
      g.head[std::size_t(r)] = u;
      g.rescap[std::size_t(r)] = 0;
      g.reverse[std::size_t(r)] = f;
      g.forward_of[std::size_t(a)] = f;
    }
  }
  return g;
}

void saturate_source_arcs(residual_graph& g, vertex_t source, std::vector<capacity_t>& excess) {
  for (offset_t k = g.first[std::size_t(source)]; k < g.first[std::size_t(source) + 1]; ++k) {
    const capacity_t c = g.rescap[std::size_t(k)];
    if (c == 0) continue;
    g.rescap[std::size_t(k)] = 0;
    g.rescap[std::size_t(g.reverse[std::size_t(k)])] += c;
    excess[std::size_t(g.head[std::size_t(k)])] += c;
    excess[std::size_t(source)] -= c;
  }
}

bool has_excess(const residual_graph& g, const std::vector<capacity_t>& excess, vertex_t a,
                vertex_t b) {
  for (vertex_t v = 0; v < g.n; ++v) {
    if (v != a && v != b && excess[std::size_t(v)] > 0) return true;
  }
  return false;
}

void write_arc_flow(const flow_network& net, const residual_graph& g, capacity_t* arc_flow) {
  const offset_t m = net.n_arcs();
  for (offset_t a = 0; a < m; ++a) {
    const offset_t f = g.forward_of[std::size_t(a)];
    arc_flow[a] = f < 0 ? 0 : net.caps[a] - g.rescap[std::size_t(f)];
  }
}

void mark_source_side(const residual_graph& g, vertex_t sink, std::uint8_t* source_side) {
  const vertex_t n = g.n;
  std::fill(source_side, source_side + n, std::uint8_t(1));
  std::vector<vertex_t> queue;
  queue.reserve(std::size_t(n));
  queue.push_back(sink);
  source_side[sink] = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const vertex_t x = queue[q];
    // y reaches x when the arc y -> x, the reverse of x -> y, has capacity left.
    for (offset_t k = g.first[std::size_t(x)]; k < g.first[std::size_t(x) + 1]; ++k) {
      const vertex_t y = g.head[std::size_t(k)];
      if (source_side[y] && g.rescap[std::size_t(g.reverse[std::size_t(k)])] > 0) {
        source_side[y] = 0;
        queue.push_back(y);
      }
    }
  }
}

}  // namespace matchflow::detail

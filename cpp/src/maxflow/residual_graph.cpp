// Residual graph construction, the initial preflow, flow read-back and the
// minimum cut.
//
// The build is a counting transpose done by `team` threads, each owning a
// range of vertices: every thread scans all arcs in input order and handles
// those whose head lies in its range (both copies of the arc), and counts
// the out-degrees of the tails in its range.  Two passes: degrees, then the
// records.  No atomics, and each reverse list is filled in input-arc order
// whatever the team, so the graph, and every pr run on it, is reproducible
// (ppr's lock-free epochs race: the same value and cut, not always the same
// flow).
// Each thread reads all heads, a streaming read that costs less than a
// locked increment per arc (as flow_matrix.cpp's transpose).  The big arrays
// are left uninitialised: every record is written once.
#include "residual_graph.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "../openmp.hpp"
#include "parallel_bfs.hpp"

namespace matchflow::detail {
namespace {

// Below this many input arcs the build runs on the calling thread.
constexpr offset_t parallel_min_arcs = offset_t(1) << 16;

/// This thread's place in the team and the team's size (OpenMP may give
/// fewer threads than asked for).
std::pair<int, int> thread_in_team() {
#ifdef _OPENMP
  return {omp_get_thread_num(), omp_get_num_threads()};
#else
  return {0, 1};
#endif
}

/// Degrees: reverse_first[u] = u's non-loop out-arcs, first[v + 1] = v's
/// non-loop in-arcs, for the vertices in [lo, hi).
template <class Arc>
void count_degrees(const flow_network& net, vertex_t lo, vertex_t hi, residual_graph<Arc>& g) {
  for (vertex_t u = 0; u < net.n; ++u) {
    const bool own_tail = u >= lo && u < hi;
    Arc out = 0;
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) continue;
      ++out;
      if (v >= lo && v < hi) ++g.first[std::size_t(v) + 1];
    }
    if (own_tail) g.reverse_first[std::size_t(u)] = out;
  }
}

/// Both copies of every arc whose head is in [lo, hi), and forward_of for
/// the arcs and self-loops there.  A forward copy's index is its tail's
/// first arc plus its rank among the tail's non-loop arcs, counted as the
/// row is read; a reverse copy's is the next free slot of its head.
template <class Arc>
void fill_arcs(const flow_network& net, vertex_t lo, vertex_t hi, residual_graph<Arc>& g) {
  std::vector<Arc> cursor(g.reverse_first.begin() + lo, g.reverse_first.begin() + hi);
  for (vertex_t u = 0; u < net.n; ++u) {
    Arc f = g.first[std::size_t(u)];
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      const bool own = v >= lo && v < hi;
      if (v == u) {
        if (own) g.forward_of[std::size_t(a)] = -1;
        continue;
      }
      if (own) {
        const Arc r = cursor[std::size_t(v - lo)]++;
        g.arcs[std::size_t(f)] = residual_arc<Arc>{net.caps[a], v, r};
        g.arcs[std::size_t(r)] = residual_arc<Arc>{0, u, f};
        g.forward_of[std::size_t(a)] = f;
      }
      ++f;
    }
  }
}

}  // namespace

bool residual_fits_int32(const flow_network& net) {
  return 2 * net.n_arcs() < offset_t(std::numeric_limits<std::int32_t>::max());
}

template <class Arc>
residual_graph<Arc> build_residual_graph(const flow_network& net, int team) {
  residual_graph<Arc> g;
  const vertex_t n = net.n;
  if (net.n_arcs() < parallel_min_arcs) team = 1;
  g.n = n;
  g.first.assign(std::size_t(n) + 1, 0);
  g.reverse_first.resize(std::size_t(n));
  g.forward_of = big_array_of<Arc>(std::size_t(net.n_arcs()));
#pragma omp parallel num_threads(team)
  {
    const auto [c, size] = thread_in_team();
    const vertex_t lo = vertex_t(std::int64_t(n) * c / size);
    const vertex_t hi = vertex_t(std::int64_t(n) * (c + 1) / size);
    count_degrees(net, lo, hi, g);
#pragma omp barrier
#pragma omp single
    {
      for (vertex_t u = 0; u < n; ++u) {  // first: out-arcs then in-arcs of each vertex
        const Arc out = g.reverse_first[std::size_t(u)];
        const Arc in = g.first[std::size_t(u) + 1];
        g.reverse_first[std::size_t(u)] = g.first[std::size_t(u)] + out;
        g.first[std::size_t(u) + 1] = g.first[std::size_t(u)] + out + in;
      }
      g.n_arcs = g.first[std::size_t(n)];
      g.arcs = big_array_of<residual_arc<Arc>>(std::size_t(g.n_arcs));
    }  // implicit barrier
    fill_arcs(net, lo, hi, g);
  }
  return g;
}

template <class Arc>
void saturate_source_arcs(residual_graph<Arc>& g, vertex_t source,
                          std::vector<capacity_t>& excess) {
  for (Arc k = g.first[std::size_t(source)]; k < g.reverse_first[std::size_t(source)]; ++k) {
    residual_arc<Arc>& arc = g.arcs[std::size_t(k)];
    const capacity_t c = arc.rescap;
    if (c == 0) continue;
    arc.rescap = 0;
    g.arcs[std::size_t(arc.reverse)].rescap += c;
    excess[std::size_t(arc.head)] += c;
    excess[std::size_t(source)] -= c;
  }
}

template <class Arc>
void write_arc_flow(const flow_network& net, const residual_graph<Arc>& g, int team,
                    capacity_t* arc_flow) {
  const offset_t m = net.n_arcs();
  if (m < parallel_min_arcs) team = 1;
#pragma omp parallel for num_threads(team) schedule(static)
  for (offset_t a = 0; a < m; ++a) {
    const Arc f = g.forward_of[std::size_t(a)];
    arc_flow[a] = f < 0 ? 0 : net.caps[a] - g.arcs[std::size_t(f)].rescap;
  }
}

template <class Arc>
void mark_source_side(const residual_graph<Arc>& g, vertex_t sink, int team,
                      std::uint8_t* source_side) {
  const vertex_t n = g.n;
  std::vector<vertex_t> label(static_cast<std::size_t>(n));
  bfs_levels levels;
  reverse_residual_bfs(g, sink, vertex_t(-1), team, label.data(), levels);
#pragma omp parallel for num_threads(team) schedule(static) if (n > (1 << 16))
  for (vertex_t v = 0; v < n; ++v) source_side[v] = label[std::size_t(v)] == n;
}

#define MATCHFLOW_RESIDUAL_GRAPH(Arc)                                                        \
  template residual_graph<Arc> build_residual_graph<Arc>(const flow_network&, int);          \
  template void saturate_source_arcs<Arc>(residual_graph<Arc>&, vertex_t,                    \
                                          std::vector<capacity_t>&);                         \
  template void write_arc_flow<Arc>(const flow_network&, const residual_graph<Arc>&, int,    \
                                    capacity_t*);                                            \
  template void mark_source_side<Arc>(const residual_graph<Arc>&, vertex_t, int,             \
                                      std::uint8_t*);
MATCHFLOW_RESIDUAL_GRAPH(std::int32_t)
MATCHFLOW_RESIDUAL_GRAPH(std::int64_t)
#undef MATCHFLOW_RESIDUAL_GRAPH

}  // namespace matchflow::detail

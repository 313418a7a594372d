// Residual graph construction, the initial preflow, flow read-back and the
// minimum cut.
//
// The build is a counting transpose done by `team` threads, each owning a
// range of vertices: every thread scans all arcs in input order, counts the
// in-degrees of the heads and the out-degrees of the tails in its range, then
// writes the reverse copies of its heads' in-arcs and, after a barrier, the
// forward copies of its tails' out-arcs (split_build; a lone thread writes
// both copies in one pass).  No atomics, and each reverse list is filled in input-arc order
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

#include "matchflow/detail/env_number.hpp"
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

/// Calls visit(a, u, v, f, r) for every non-loop input arc a = (u, v) whose
/// head is in [lo, hi), in input order, with f its forward copy's index
/// (its tail's first arc plus its rank among the tail's non-loop arcs,
/// counted as the row is read) and r its reverse copy's (the next free slot
/// of its head); and loop(a) for every self-loop a whose tail is there.
template <class Arc, class Visit, class Loop>
void for_each_arc_into(const flow_network& net, vertex_t lo, vertex_t hi,
                       const residual_graph<Arc>& g, Visit visit, Loop loop) {
  std::vector<Arc> cursor(g.reverse_first.begin() + lo, g.reverse_first.begin() + hi);
  for (vertex_t u = 0; u < net.n; ++u) {
    Arc f = g.first[std::size_t(u)];
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      const bool own = v >= lo && v < hi;
      if (v == u) {
        if (own) loop(a);
        continue;
      }
      if (own) visit(a, u, v, f, cursor[std::size_t(v - lo)]++);
      ++f;
    }
  }
}

/// Both copies of every arc whose head is in [lo, hi), and forward_of for
/// the arcs and self-loops there: the one-pass build.
template <class Arc>
void fill_arcs(const flow_network& net, vertex_t lo, vertex_t hi, residual_graph<Arc>& g) {
  for_each_arc_into(
      net, lo, hi, g,
      [&](offset_t a, vertex_t u, vertex_t v, Arc f, Arc r) {
        g.arcs[std::size_t(f)] = residual_arc<Arc>{net.caps[a], v, r};
        g.arcs[std::size_t(r)] = residual_arc<Arc>{0, u, f};
        g.forward_of[std::size_t(a)] = f;
      },
      [&](offset_t a) { g.forward_of[std::size_t(a)] = -1; });
}

/// The split build's first pass: the reverse copies of the arcs whose head
/// is in [lo, hi), and rev[a] = each one's index.
template <class Arc>
void fill_reverse_copies(const flow_network& net, vertex_t lo, vertex_t hi,
                         residual_graph<Arc>& g, Arc* rev) {
  for_each_arc_into(
      net, lo, hi, g,
      [&](offset_t a, vertex_t u, vertex_t, Arc f, Arc r) {
        g.arcs[std::size_t(r)] = residual_arc<Arc>{0, u, f};
        rev[a] = r;
      },
      [](offset_t) {});
}

/// The split build's second pass: the forward copies of the tails in
/// [lo, hi), row by row, and forward_of for their arcs and self-loops.
template <class Arc>
void fill_forward_copies(const flow_network& net, vertex_t lo, vertex_t hi,
                         residual_graph<Arc>& g, const Arc* rev) {
  for (vertex_t u = lo; u < hi; ++u) {
    Arc f = g.first[std::size_t(u)];
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) {
        g.forward_of[std::size_t(a)] = -1;
        continue;
      }
      g.arcs[std::size_t(f)] = residual_arc<Arc>{net.caps[a], v, rev[a]};
      g.forward_of[std::size_t(a)] = f;
      ++f;
    }
  }
}

/// Whether a team writes the records in two passes (split build): the
/// reverse copies by their head's thread, then the forward copies by their
/// tail's, so that each thread writes only its own vertices' records (in
/// one pass each thread writes the forward copies of its heads' in-arcs
/// into every tail's records, cache lines that other threads write too).
/// The graph is the same either way.  Off unless MATCHFLOW_RESIDUAL_SPLIT=1:
/// on the dev host (2 threads) it took Delaunay 2^20's setup from 0.13 to
/// 0.11 s, but on the H200 host the one pass was faster at every team size
/// measured (results/h200/residual-split.txt: the one pass's setup time
/// over the two passes' 0.86 at 2 threads, 0.85 at 4, 0.99 at 8, 0.92 at
/// 16).
bool split_build() { return env_number("MATCHFLOW_RESIDUAL_SPLIT", 0, 0) != 0; }

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
  const bool split = team > 1 && split_build();
  big_array<Arc> rev = split ? big_array_of<Arc>(std::size_t(net.n_arcs())) : big_array<Arc>();
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
    if (split) {
      fill_reverse_copies(net, lo, hi, g, rev.get());
#pragma omp barrier
      fill_forward_copies(net, lo, hi, g, rev.get());
    } else {
      fill_arcs(net, lo, hi, g);
    }
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

// Which vertices can reach a root along residual arcs: the minimum cut's
// read-back (two_phase.hpp: the vertices that cannot reach the sink).
//
// The cut needs no distances, so no levels either.  A level-synchronous BFS
// (parallel_bfs.hpp, which the global relabels need) pays a barrier a level,
// and a 1024 x 1024 grid's search from its sink has about 1,500 levels of
// about 700 vertices.  Here each thread runs a depth-first search from a
// stack of its own; a stack grown past two grains hands its top grain to an
// OpenMP task that an idle thread picks up, so the team stays busy without
// a barrier until the search is done (NOTES.md, "CPU constants").  The
// root's own arcs are split over the team first (expand_share).
#pragma once

#include <cstdint>
#include <vector>

#include "../openmp.hpp"
#include "parallel_bfs.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// Vertices a thread hands to another at once.
constexpr std::size_t reach_grain = 256;

/// Reads as "v cannot reach the root yet": cleared once, by the thread that
/// reaches v first.
template <class Arc, class Cap>
class residual_reach {
 public:
  residual_reach(const residual_graph<Arc, Cap>& g, std::uint8_t* unreached, int team)
      : g_(g), unreached_(unreached), team_(team) {}

  /// This thread's share of `root`'s arcs (an OpenMP worksharing loop: every
  /// thread of the team calls it): the still-unreached vertices they reach,
  /// pushed on `stack`.  The sink of a graph cut has an arc from most pixels
  /// (a million on a 128^3 volume), a scan one thread made alone.
  void expand_share(vertex_t root, std::vector<vertex_t>& stack) {
    const Arc begin = g_.first[std::size_t(root)], end = g_.first[std::size_t(root) + 1];
#pragma omp for schedule(static) nowait
    for (Arc k = begin; k < end; ++k) visit(g_.arcs[std::size_t(k)], stack);
  }

  /// Searches from `stack` until no vertex is left, handing grains to tasks
  /// while fewer than two a thread wait.
  void search(std::vector<vertex_t>& stack) {
    while (!stack.empty()) {
      const vertex_t x = stack.back();
      stack.pop_back();
      expand(x, stack);
      if (stack.size() >= 2 * reach_grain && team_ > 1 &&
          __atomic_load_n(&waiting_, __ATOMIC_RELAXED) < 2 * team_) {
        hand_off(stack);
      }
    }
  }

 private:
  /// Pushes every still-unreached y with a residual arc y -> x.
  void expand(vertex_t x, std::vector<vertex_t>& stack) {
    for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
      visit(g_.arcs[std::size_t(k)], stack);
    }
  }

  /// Pushes the head y of `arc` (an arc x -> y) if y is still unreached and
  /// y -> x has residual capacity.
  void visit(const residual_arc<Arc, Cap>& arc, std::vector<vertex_t>& stack) {
    const vertex_t y = arc.head;
    std::uint8_t* flag = &unreached_[std::size_t(y)];
    if (!__atomic_load_n(flag, __ATOMIC_RELAXED)) return;
    if (g_.arcs[std::size_t(arc.reverse)].rescap == 0) return;
    if (__atomic_exchange_n(flag, std::uint8_t(0), __ATOMIC_RELAXED)) {
      prefetch_arcs(g_, y);
      stack.push_back(y);
    }
  }

  void hand_off(std::vector<vertex_t>& stack) {
    std::vector<vertex_t> part(stack.end() - std::ptrdiff_t(reach_grain), stack.end());
    stack.resize(stack.size() - reach_grain);
    __atomic_fetch_add(&waiting_, 1, __ATOMIC_RELAXED);
#pragma omp task firstprivate(part)
    {
      __atomic_fetch_sub(&waiting_, 1, __ATOMIC_RELAXED);
      search(part);
    }
  }

  const residual_graph<Arc, Cap>& g_;
  std::uint8_t* unreached_;
  const int team_;
  int waiting_ = 0;  ///< tasks made and not yet started
};

/// unreached[v] = 1 iff v cannot reach `root` along residual arcs (y reaches
/// x by the arc y -> x, the reverse of an arc of x, when it has residual
/// capacity), found by `team` threads.  `unreached` has g.n entries.
template <class Arc, class Cap>
void mark_unreached(const residual_graph<Arc, Cap>& g, vertex_t root, int team,
                    std::uint8_t* unreached) {
  const vertex_t n = g.n;
  const bool parallel = team > 1 && n > bfs_team_min_vertices;
  residual_reach<Arc, Cap> reach(g, unreached, parallel ? team : 1);
#pragma omp parallel num_threads(team) if (parallel)
  {
#pragma omp for schedule(static)
    for (vertex_t v = 0; v < n; ++v) unreached[v] = 1;
#pragma omp single
    unreached[root] = 0;
    std::vector<vertex_t> stack;
    reach.expand_share(root, stack);
    reach.search(stack);
  }  // the region's barrier waits for every task
}

}  // namespace matchflow::detail

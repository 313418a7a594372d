// Level-synchronous parallel BFS over reverse residual arcs: ppr's global
// relabeling (Baumstark, Blelloch & Shun, ESA 2015, section 3: a parallel
// BFS from the sink).  The minimum cut needs no levels: residual_reach.hpp.
//
// One parallel region for the whole search: a level costs one barrier, not
// a team's start and end.  A level narrower than bfs_narrow vertices is
// expanded by one thread, which goes on level by level while the frontier
// stays narrow (one barrier for a run of them).  Late in a run GENRMF long
// a32's BFSs have 2,000-4,500 levels, most of 16-64 vertices, so
// the team takes those too.  The reached vertices are kept in one queue,
// level after level, so the caller can fill per-level structures
// (highest_label's buckets) or find the active vertices without a sweep
// over all n.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../openmp.hpp"
#include "matchflow/detail/environment.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// Levels narrower than this are expanded on one thread: the team's barrier
/// costs more than their work (benchmarks/NOTES.md, "ppr's constants";
/// MATCHFLOW_PPR_BFS_NARROW moves it).
constexpr std::int64_t bfs_narrow = 32;

/// Graphs of at most this many vertices are searched by the calling thread
/// alone: a team's start costs more than their whole BFS.
constexpr std::int64_t bfs_team_min_vertices = 256;

inline std::int64_t bfs_narrow_width() {
  return std::int64_t(env_number("MATCHFLOW_PPR_BFS_NARROW", double(bfs_narrow), 1));
}

/// Starts the loads of x's first arc records, for a BFS: a level's
/// vertices lie far apart (a grid's frontier is a diagonal, a Delaunay
/// graph's numbering is random), so each costs its own trips to memory;
/// issued a few vertices ahead, they overlap (NOTES.md, "ppr's constants").
/// A hint: no fault even past the last record.
template <class Arc, class Cap>
inline void prefetch_arcs(const residual_graph<Arc, Cap>& g, vertex_t x) {
  const char* first = reinterpret_cast<const char*>(g.arcs.get() + g.first[std::size_t(x)]);
  __builtin_prefetch(first);
  __builtin_prefetch(first + 64);  // the next line
}

/// How many queued vertices ahead a BFS prefetches on one thread.
constexpr std::int64_t bfs_prefetch_ahead = 8;

/// The reached vertices of a BFS in level order: level l (distance l) is
/// queue[level_start[l], level_start[l + 1]).
struct bfs_levels {
  std::vector<vertex_t> queue;
  std::vector<std::int64_t> level_start;
  std::int64_t reached() const { return level_start.empty() ? 0 : level_start.back(); }
  vertex_t levels() const { return vertex_t(level_start.size()) - 1; }
};

/// One thread's new vertices of a level, padded against false sharing.
struct alignas(64) bfs_thread_part {
  std::vector<vertex_t> items;
};

/// The search behind reverse_residual_bfs: narrow levels expanded by thread
/// 0 alone, wide ones by the team with one barrier a level.
template <class Arc>
class reverse_residual_search {
 public:
  reverse_residual_search(const residual_graph<Arc>& g, vertex_t root, vertex_t skip, int team,
                          vertex_t* label, bfs_levels& out)
      : g_(g),
        n_(g.n),
        root_(root),
        skip_(skip),
        team_(team),
        label_(label),
        out_(out),
        parts_(static_cast<std::size_t>(team)) {
    out.queue.resize(std::size_t(n_));
    out.level_start.assign({0, 1});
    queue_ = out.queue.data();
  }

  void run() {
#pragma omp parallel num_threads(team_) if (team_ > 1 && \
                                                n_ > std::max(narrow_, bfs_team_min_vertices))
    {
#ifdef _OPENMP
      const int tid = omp_get_thread_num(), threads = omp_get_num_threads();
#else
      const int tid = 0, threads = 1;
#endif
      search(tid, threads);
    }
    out_.level_start.pop_back();  // the last level was empty
  }

 private:
  /// One thread's part of the search, from the root to the last level.
  void search(int tid, int threads) {
#pragma omp for schedule(static)
    for (vertex_t v = 0; v < n_; ++v) label_[v] = n_;
    if (tid == 0) {
      label_[root_] = 0;
      queue_[0] = root_;
    }
#pragma omp barrier
    std::int64_t lo = 0, hi = 1;
    vertex_t level = 1;
    std::int64_t wide_levels = 0;  // the same count on every thread
    while (hi > lo) {
      if (hi - lo < narrow_ || threads == 1) {
        narrow_stretch(tid, threads, lo, hi, level);
      } else {
        wide_level(tid, threads, wide_levels++, lo, hi, level);
      }
    }
  }

  /// Levels narrower than narrow_ (all of them on one thread), expanded by
  /// thread 0 alone, so that it alone appends to level_start; every thread
  /// leaves with the frontier after them.
  void narrow_stretch(int tid, int threads, std::int64_t& lo, std::int64_t& hi, vertex_t& level) {
    if (tid == 0) {
      while (hi > lo && (hi - lo < narrow_ || threads == 1)) {
        const std::int64_t tail = expand_alone(lo, hi, level++);
        lo = hi;
        hi = tail;
        out_.level_start.push_back(hi);
      }
      shared_lo_ = lo;
      shared_hi_ = hi;
      shared_level_ = level;
    }
#pragma omp barrier
    lo = shared_lo_;
    hi = shared_hi_;
    level = shared_level_;
  }

  /// Expands queue[lo, hi) into queue[hi, ...) on the calling thread;
  /// returns the new end.
  std::int64_t expand_alone(std::int64_t lo, std::int64_t hi, vertex_t level) {
    std::int64_t tail = hi;
    for (std::int64_t i = lo; i < std::min(hi, lo + bfs_prefetch_ahead); ++i) prefetch(i);
    for (std::int64_t i = lo; i < hi; ++i) {
      if (i + bfs_prefetch_ahead < hi) prefetch(i + bfs_prefetch_ahead);
      const vertex_t x = queue_[i];
      for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
        const residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
        const vertex_t y = arc.head;
        if (label_[y] != n_ || y == skip_ || g_.arcs[std::size_t(arc.reverse)].rescap == 0)
          continue;
        label_[y] = level;
        queue_[tail++] = y;
      }
    }
    return tail;
  }

  /// One barrier a wide level: threads claim chunks of the frontier and
  /// reserve room behind it from counters that rotate over three slots, one
  /// a wide level.  Thread 0 clears the next wide level's slot during this
  /// one: its last use was two wide levels back, and every thread read it
  /// before the barrier that ended the last one.
  void wide_level(int tid, int threads, std::int64_t wide_levels, std::int64_t& lo,
                  std::int64_t& hi, vertex_t& level) {
    bfs_thread_part& mine = parts_[std::size_t(tid)];
    mine.items.clear();
    // About four claims a thread, so that a few high-degree vertices
    // (R-MAT's hubs) do not hold up a level.
    const std::int64_t chunk = std::max<std::int64_t>(4, (hi - lo) / (4 * threads));
    const int slot = int(wide_levels % 3), next = int((wide_levels + 1) % 3);
    if (tid == 0) claimed_[next] = appended_[next] = 0;
    for (;;) {
      const std::int64_t first = lo + __atomic_fetch_add(&claimed_[slot], chunk, __ATOMIC_RELAXED);
      if (first >= hi) break;
      const std::int64_t last = std::min(first + chunk, hi);
      for (std::int64_t i = first; i < last; ++i) prefetch(i);
      for (std::int64_t i = first; i < last; ++i) expand_claimed(i, level, mine);
    }
    const std::int64_t count = std::int64_t(mine.items.size());
    if (count > 0) {
      const std::int64_t at = hi + __atomic_fetch_add(&appended_[slot], count, __ATOMIC_RELAXED);
      std::copy(mine.items.begin(), mine.items.end(), queue_ + at);
    }
#pragma omp barrier  // the copies are the next level's frontier
    lo = hi;
    hi += __atomic_load_n(&appended_[slot], __ATOMIC_RELAXED);
    ++level;
    if (tid == 0) out_.level_start.push_back(hi);
  }

  /// Claims queue[i]'s unlabelled residual predecessors for `level` (a
  /// label is claimed by compare-and-swap: each vertex joins one thread's part).
  void expand_claimed(std::int64_t i, vertex_t level, bfs_thread_part& mine) {
    const vertex_t x = queue_[i];
    for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
      const residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
      const vertex_t y = arc.head;
      if (y == skip_ || __atomic_load_n(&label_[y], __ATOMIC_RELAXED) != n_) continue;
      if (g_.arcs[std::size_t(arc.reverse)].rescap == 0) continue;
      vertex_t expected = n_;
      if (__atomic_compare_exchange_n(&label_[y], &expected, level, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        mine.items.push_back(y);
      }
    }
  }

  void prefetch(std::int64_t i) const { prefetch_arcs(g_, queue_[i]); }

  const residual_graph<Arc>& g_;
  const vertex_t n_, root_, skip_;
  const int team_;
  vertex_t* const label_;
  bfs_levels& out_;
  vertex_t* queue_ = nullptr;
  std::vector<bfs_thread_part> parts_;
  const std::int64_t narrow_ = bfs_narrow_width();
  // Shared state, written only by thread 0 in a narrow stretch.
  std::int64_t shared_lo_ = 0, shared_hi_ = 1;
  vertex_t shared_level_ = 1;
  std::int64_t claimed_[3] = {0, 0, 0}, appended_[3] = {0, 0, 0};
};

/// Distances to `root` along residual arcs: y is one level beyond x when the
/// arc y -> x (the reverse of an arc of x) has residual capacity.  On return
/// label[v] is the distance, or g.n when v cannot reach `root` or is `skip`
/// (the source, held at n; no_vertex-like values skip nothing), and `out`
/// holds the reached vertices by level.  `label` has g.n entries.
template <class Arc>
void reverse_residual_bfs(const residual_graph<Arc>& g, vertex_t root, vertex_t skip, int team,
                          vertex_t* label, bfs_levels& out) {
  reverse_residual_search<Arc>(g, root, skip, team, label, out).run();
}

}  // namespace matchflow::detail

// ppr's global relabel BFS, several levels a barrier, where the levels are
// narrow (parallel_push_relabel.cpp, default_bfs_window, says when and
// what it measured); parallel_bfs.hpp's level-synchronous search otherwise.
//
// Late in a GENRMF run a global relabel has thousands of levels of tens of
// vertices, and each costs a barrier plus the trips to memory of a few
// vertices a thread.  Here a barrier closes a window of `window` levels:
// the threads split the window's first level and search on from their
// shares without waiting for each other, each from a FIFO queue of its
// own, labelling by compare-and-swap down to the least label seen (a label
// correcting search, as Delta-stepping's buckets: Meyer & Sanders 2003).
// A thread that lowers a label requeues the vertex, so when every queue is
// empty each vertex closer than the window's end has its distance, and the
// vertices labelled with the window's end start the next one.  The reached
// vertices are then sorted by label into the same level structure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../big_array.hpp"
#include "../openmp.hpp"
#include "parallel_bfs.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// One thread's queues in a windowed search, padded against false sharing.
struct alignas(64) window_queues {
  std::vector<std::pair<vertex_t, vertex_t>> work;  ///< (vertex, label when queued)
  std::vector<vertex_t> next;           ///< labelled with the window's end: the next window
  std::vector<vertex_t> reached;        ///< first labelled by this thread
  std::vector<std::int64_t> per_label;  ///< the sort's counts, then offsets
};

template <class Arc>
class windowed_bfs {
 public:
  windowed_bfs(const residual_graph<Arc>& g, vertex_t skip, vertex_t* label, vertex_t window)
      : g_(g), n_(g.n), skip_(skip), label_(label), window_(window) {}

  /// label[v] = distance to `root` along residual arcs (g.n: unreached or
  /// `skip`); `out` gets the reached vertices by level, as
  /// reverse_residual_bfs gives them.
  void run(vertex_t root, int team, bfs_levels& out) {
    std::vector<window_queues> queues(static_cast<std::size_t>(team));
    big_array<vertex_t> frontier = big_array_of<vertex_t>(std::size_t(n_));
    std::int64_t begin = 0, end = 1, appended = 0;
    vertex_t levels = 1;  // the greatest label + 1, found by the sort
#pragma omp parallel num_threads(team)
    {
      const auto [tid, threads] = thread_in_team();
      window_queues& mine = queues[std::size_t(tid)];
#pragma omp for schedule(static)
      for (vertex_t v = 0; v < n_; ++v) label_[v] = n_;
#pragma omp single
      {
        label_[root] = 0;
        frontier[0] = root;
      }  // implicit barrier
      for (vertex_t start = 0; begin < end; start += window_) {
        const std::int64_t width = end - begin;
        for (std::int64_t i = begin + width * tid / threads;
             i < begin + width * (tid + 1) / threads; ++i) {
          mine.work.emplace_back(frontier[i], start);
        }
        drain(mine, start + window_);
        const std::int64_t count = std::int64_t(mine.next.size());
        const std::int64_t at = end + __atomic_fetch_add(&appended, count, __ATOMIC_RELAXED);
        std::copy(mine.next.begin(), mine.next.end(), frontier.get() + at);
        mine.next.clear();
#pragma omp barrier  // the window's labels are final and its end's vertices listed
#pragma omp single
        {
          begin = end;
          end += appended;
          appended = 0;
        }  // implicit barrier
      }
      sort_by_label(queues, root, tid, threads, levels, out);
    }
  }

 private:
  /// Searches from `mine.work` until it is empty: labels below `limit` are
  /// expanded here, the vertices labelled `limit` wait for the next window.
  void drain(window_queues& mine, vertex_t limit) {
    for (std::size_t head = 0; head < mine.work.size(); ++head) {
      if (head + bfs_prefetch_ahead < mine.work.size())
        prefetch_arcs(g_, mine.work[head + bfs_prefetch_ahead].first);
      const auto [x, queued] = mine.work[head];
      if (__atomic_load_n(&label_[x], __ATOMIC_RELAXED) != queued) continue;  // lowered since
      const vertex_t d = queued + 1;
      for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
        const residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
        const vertex_t y = arc.head;
        if (y == skip_ || __atomic_load_n(&label_[y], __ATOMIC_RELAXED) <= d) continue;
        if (g_.arcs[std::size_t(arc.reverse)].rescap == 0) continue;
        if (!lower(y, d, mine)) continue;
        if (d < limit) {
          mine.work.emplace_back(y, d);
        } else {
          mine.next.push_back(y);
        }
      }
    }
    mine.work.clear();
  }

  /// label[y] = d if that lowers it; records y as reached when it had none.
  bool lower(vertex_t y, vertex_t d, window_queues& mine) {
    vertex_t seen = __atomic_load_n(&label_[y], __ATOMIC_RELAXED);
    while (d < seen) {
      if (__atomic_compare_exchange_n(&label_[y], &seen, d, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        if (seen == n_) mine.reached.push_back(y);
        return true;
      }
    }
    return false;
  }

  /// out = the root, then every reached vertex by label (a counting sort:
  /// per-thread counts per label, then offsets in thread order).  `levels`
  /// (shared) gets the greatest label + 1.
  void sort_by_label(std::vector<window_queues>& queues, vertex_t root, int tid, int threads,
                     vertex_t& levels, bfs_levels& out) {
    window_queues& mine = queues[std::size_t(tid)];
    vertex_t top = 0;
    for (const vertex_t v : mine.reached) top = std::max(top, label_[v]);
    for (vertex_t seen = __atomic_load_n(&levels, __ATOMIC_RELAXED); top + 1 > seen;) {
      if (__atomic_compare_exchange_n(&levels, &seen, top + 1, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        break;
      }
    }
#pragma omp barrier
    mine.per_label.assign(std::size_t(levels), 0);
    for (const vertex_t v : mine.reached) ++mine.per_label[std::size_t(label_[v])];
#pragma omp barrier
#pragma omp single
    {
      out.queue.resize(std::size_t(n_));
      out.level_start.assign(std::size_t(levels) + 1, 0);
      out.queue[0] = root;
      std::int64_t at = 1;
      out.level_start[1] = 1;
      for (vertex_t d = 1; d < levels; ++d) {
        for (int c = 0; c < threads; ++c) {
          std::int64_t& slot = queues[std::size_t(c)].per_label[std::size_t(d)];
          const std::int64_t count = slot;
          slot = at;
          at += count;
        }
        out.level_start[std::size_t(d) + 1] = at;
      }
    }  // implicit barrier
    for (const vertex_t v : mine.reached) {
      out.queue[std::size_t(mine.per_label[std::size_t(label_[v])]++)] = v;
    }
    mine.reached.clear();
  }

  const residual_graph<Arc>& g_;
  const vertex_t n_, skip_;
  vertex_t* label_;
  const vertex_t window_;
};

}  // namespace matchflow::detail

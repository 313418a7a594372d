// Asynchronous multithreaded discharge between ppr's global relabels, after
// Hong's lock-free push-relabel (B. Hong, "A lock-free multi-threaded
// algorithm for the maximum flow problem", MTAAP 2008; Hong & He, IEEE TPDS
// 2011): each active vertex is discharged by one thread at a time, with no
// rounds and no barriers; pushes update residual capacities and excesses
// with atomic read-modify-writes.
//
// Ownership.  A vertex belongs to the thread that raised its excess from 0
// (the fetch-add that returned 0) until that thread's own fetch-sub brings
// it back to 0, or the vertex is relabelled to n.  Only the owner lowers
// the vertex's excess and residual capacities out of it, writes its label
// and current arc; other threads only raise its excess (pushes into it) and
// its arcs' capacities (pushes along their reverses).  So what the owner
// reads is a lower bound of the truth and its pushes keep every capacity and
// excess nonnegative: the preflow stays valid whatever the timing.  Labels
// read from other vertices may be stale (too low), so labels may be
// momentarily invalid; as in the synchronous rounds, the caller only stops
// after a global relabel finds no active vertex.  A vertex's state (current
// arc) is written before the fetch-sub that may release it.
//
// Order.  Each thread discharges the vertices it owns highest label first
// (a heap: hi_pr's order, per thread) and steals another thread's highest
// when it owns none; a stack per thread pushed several times as much
// (benchmarks/NOTES.md, "ppr's constants").  Pushes follow hi_pr's rule
// (current arc, admissible when d(v) = d(w) + 1 by the labels read); a
// relabel scans all arcs.  The epoch ends when the summed relabel work
// passes the caller's threshold (hi_pr's measure) or when every thread is
// idle with an empty heap.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "../openmp.hpp"
#include "highest_label.hpp"
#include "matchflow/maxflow.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// A spinning thread's hint to the core (x86 PAUSE): it frees the
/// pipeline for the sibling hyperthread and eases the lock's cache line.
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// One thread's owned vertices, highest label first (a binary heap of
/// (label when queued, vertex)), behind a spin lock (thieves take from it
/// too).  Padded against false sharing.
struct alignas(64) owned_heap {
  std::vector<std::pair<vertex_t, vertex_t>> items;
  std::atomic<std::int64_t> size{0};
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  std::int64_t pushes = 0, relabels = 0;

  void acquire() {
    while (lock.test_and_set(std::memory_order_acquire)) spin_pause();
  }
  void release() { lock.clear(std::memory_order_release); }
  void put(vertex_t v, vertex_t label) {
    acquire();
    items.emplace_back(label, v);
    std::push_heap(items.begin(), items.end());
    size.store(std::int64_t(items.size()), std::memory_order_relaxed);
    release();
  }
  /// The vertex of highest label; false when empty.
  bool take(vertex_t& v) {
    acquire();
    const bool any = !items.empty();
    if (any) {
      std::pop_heap(items.begin(), items.end());
      v = items.back().second;
      items.pop_back();
    }
    size.store(std::int64_t(items.size()), std::memory_order_relaxed);
    release();
    return any;
  }
};

template <class Arc>
class lock_free_discharge {
 public:
  /// `label` holds exact labels (a global relabel's) on entry and the
  /// epoch's labels on return; `current` one current arc per vertex.
  lock_free_discharge(residual_graph<Arc>& g, std::vector<capacity_t>& excess,
                      std::vector<vertex_t>& label, vertex_t target, int team)
      : g_(g),
        excess_(excess),
        label_(label),
        n_(g.n),
        t_(target),
        team_(team),
        current_(std::size_t(g.n)),
        count_(std::size_t(g.n) + 1),
        heaps_(std::size_t(team)) {}

  /// Discharges from `active` (vertices with excess and label < n, in
  /// ascending label order) until the relabel work passes `threshold` or no
  /// vertex is left to discharge;
  /// counts pushes and relabels into `stats`.
  /// `reached` (`count` of them) are the vertices with label < n, whose
  /// current arcs are reset: only they can receive a push.
  void run(const std::vector<vertex_t>& active, const vertex_t* reached, std::int64_t count,
           double threshold, flow_stats* stats) {
    std::atomic<std::int64_t> work{0};
    std::atomic<int> idle{0};
    std::atomic<bool> stop{false};
#pragma omp parallel num_threads(team_)
    {
#ifdef _OPENMP
      const int tid = omp_get_thread_num();
#pragma omp single
      threads_ = omp_get_num_threads();  // OpenMP may give fewer than asked for
#else
      const int tid = 0;
      threads_ = 1;
#endif
#pragma omp for schedule(static)
      for (int c = 0; c < threads_; ++c) deal(active, c);
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i)
        current_[std::size_t(reached[i])] = g_.first[std::size_t(reached[i])];
#pragma omp for schedule(static)
      for (vertex_t d = 0; d <= n_; ++d) count_[std::size_t(d)] = 0;
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        __atomic_add_fetch(&count_[std::size_t(label_[std::size_t(reached[i])])], 1,
                           __ATOMIC_RELAXED);
      }
      worker(tid, work, idle, stop, std::int64_t(threshold));
    }
    for (int c = 0; c < threads_; ++c) {
      owned_heap& own = heaps_[std::size_t(c)];
      stats->pushes += own.pushes;
      stats->relabels += own.relabels;
      own.items.clear();
    }
  }

 private:
  /// Heap c gets the c-th of threads_ contiguous blocks of `active` (a band
  /// of labels each).
  void deal(const std::vector<vertex_t>& active, int c) {
    const std::int64_t actives = std::int64_t(active.size());
    owned_heap& own = heaps_[std::size_t(c)];
    own.items.clear();
    for (std::int64_t i = actives * c / threads_; i < actives * (c + 1) / threads_; ++i) {
      const vertex_t v = active[std::size_t(i)];
      own.items.emplace_back(label_[std::size_t(v)], v);
    }
    std::make_heap(own.items.begin(), own.items.end());
    own.size.store(std::int64_t(own.items.size()), std::memory_order_relaxed);
    own.pushes = own.relabels = 0;
  }

  void worker(int tid, std::atomic<std::int64_t>& work, std::atomic<int>& idle,
              std::atomic<bool>& stop, std::int64_t threshold) {
    owned_heap& own = heaps_[std::size_t(tid)];
    std::int64_t local_work = 0;
    vertex_t v;
    while (!stop.load(std::memory_order_relaxed)) {
      if (own.take(v)) {
        discharge(v, own, local_work);
        // Flush the relabel work now and then: one shared counter.
        if (local_work >= flush_work) {
          if (work.fetch_add(local_work, std::memory_order_relaxed) + local_work > threshold) {
            stop.store(true, std::memory_order_relaxed);
          }
          local_work = 0;
        }
        continue;
      }
      // Idle: every thread idle means every heap is empty (only a heap's
      // owner adds to it, and it idles only once its heap is empty).
      idle.fetch_add(1, std::memory_order_acq_rel);
      for (;;) {
        if (idle.load(std::memory_order_acquire) == threads_ ||
            stop.load(std::memory_order_relaxed)) {
          return;
        }
        const int victim = find_victim(tid);
        if (victim < 0) {
          spin_pause();
          continue;
        }
        idle.fetch_sub(1, std::memory_order_acq_rel);  // not idle while it may hold work
        if (heaps_[std::size_t(victim)].take(v)) {
          own.put(v, load_label(v));
          break;
        }
        idle.fetch_add(1, std::memory_order_acq_rel);
      }
    }
  }

  int find_victim(int tid) const {
    for (int k = 1; k < threads_; ++k) {
      const int c = (tid + k) % threads_;
      if (heaps_[std::size_t(c)].size.load(std::memory_order_relaxed) > 0) return c;
    }
    return -1;
  }

  vertex_t load_label(vertex_t w) const {
    return __atomic_load_n(&label_[std::size_t(w)], __ATOMIC_RELAXED);
  }

  /// Pushes and relabels v, owned by the calling thread, until its excess
  /// reaches 0 (ownership passes on) or its label n.
  void discharge(vertex_t v, owned_heap& own, std::int64_t& local_work) {
    const Arc begin = g_.first[std::size_t(v)], end = g_.first[std::size_t(v) + 1];
    capacity_t* ev = &excess_[std::size_t(v)];
    capacity_t e = __atomic_load_n(ev, __ATOMIC_ACQUIRE);
    vertex_t d = label_[std::size_t(v)];
    Arc k = current_[std::size_t(v)];
    for (;;) {
      for (; k < end; ++k) {
        residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
        const capacity_t cap = __atomic_load_n(&arc.rescap, __ATOMIC_RELAXED);
        if (cap == 0) continue;
        const vertex_t w = arc.head;
        if (load_label(w) != d - 1) continue;
        const capacity_t delta = std::min(cap, e);
        __atomic_fetch_sub(&arc.rescap, delta, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g_.arcs[std::size_t(arc.reverse)].rescap, delta, __ATOMIC_RELAXED);
        ++own.pushes;
        current_[std::size_t(v)] = k;  // before the fetch-sub that may release v
        const capacity_t before =
            __atomic_fetch_add(&excess_[std::size_t(w)], delta, __ATOMIC_ACQ_REL);
        if (before == 0 && w != t_) own.put(w, d - 1);        // w's owner now
        e = __atomic_sub_fetch(ev, delta, __ATOMIC_ACQ_REL);  // others' pushes included
        if (e == 0) return;                                   // released: v is no longer ours
      }
      // No admissible arc by the labels read: relabel over every arc.
      ++own.relabels;
      local_work += relabel_work_beta + (end - begin);
      vertex_t best = n_;
      Arc best_arc = begin;
      for (Arc j = begin; j < end; ++j) {
        const residual_arc<Arc>& arc = g_.arcs[std::size_t(j)];
        if (__atomic_load_n(&arc.rescap, __ATOMIC_RELAXED) == 0) continue;
        const vertex_t dw = load_label(arc.head);
        if (dw < best) best = dw, best_arc = j;
      }
      // hi_pr's gap, for v alone: when v was the last vertex at its old
      // label, it cannot reach the target (if the labels read were valid;
      // if not, the next global relabel gives it its exact label back).
      const bool gap = __atomic_sub_fetch(&count_[std::size_t(d)], 1, __ATOMIC_RELAXED) == 0;
      d = gap ? n_ : std::min(best + 1, n_);
      if (d < n_) __atomic_add_fetch(&count_[std::size_t(d)], 1, __ATOMIC_RELAXED);
      __atomic_store_n(&label_[std::size_t(v)], d, __ATOMIC_RELAXED);
      if (d >= n_) return;  // keeps its excess; the next global relabel decides
      k = best_arc;
      e = __atomic_load_n(ev, __ATOMIC_ACQUIRE);
    }
  }

  /// Relabel work a thread adds up before it touches the shared counter.
  static constexpr std::int64_t flush_work = 4096;

  residual_graph<Arc>& g_;
  std::vector<capacity_t>& excess_;
  std::vector<vertex_t>& label_;
  const vertex_t n_, t_;
  const int team_;
  int threads_ = 1;  // the team OpenMP gave the current run
  std::vector<Arc> current_;
  std::vector<std::int64_t> count_;  // vertices per label below n (atomic)
  std::vector<owned_heap> heaps_;
};

}  // namespace matchflow::detail

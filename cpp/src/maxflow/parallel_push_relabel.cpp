// OpenMP synchronous push-relabel for maximum flow.
//
// Baumstark, Blelloch & Shun, "Efficient implementation of a synchronous
// parallel push-relabel algorithm", ESA 2015: its synchronous rounds and its
// parallel global relabeling.
//
// Rounds.  Each round discharges every active vertex (excess > 0, label < n)
// in parallel, against the labels and excesses the round started with:
// - a vertex works on a private copy of its label (new_label) and excess;
// - a push to w adds to added_excess[w] (atomic fetch-add) and puts w on the
//   next active set the first time (test-and-set on `discovered`);
// - when both ends of an admissible arc are active, the paper's rule lets
//   exactly one of them push along the pair: v "wins" against w iff
//   d(v) = d(w) + 1, d(v) < d(w) - 1, or d(v) = d(w) and v < w; a loser
//   stops for this round ("skipped") and keeps its excess.  So each residual
//   capacity pair has at most one writer per round; the other end may read
//   it concurrently (relaxed atomics, below);
// - after the round, labels and excesses are committed and the next active
//   set is the compaction of the per-thread discovered lists.
// The vertex's scan has no current arc: a relabel rescans (as in the paper).
//
// Epochs.  Between two global relabels the run is one of:
// - parallel rounds, while the relabel finds at least parallel_min_active
//   active vertices (the epoch also ends when a round leaves fewer than an
//   eighth of that);
// - the lock-free asynchronous discharge on the team (lock_free_discharge.hpp,
//   after Hong's lock-free push-relabel) from lock_free_min_active of them,
//   until its relabel work calls for the next global relabel;
// - below that, hi_pr's sequential highest-label discharge
//   (highest_label.hpp, its buckets filled by the team from the BFS levels),
//   until it has used handover_share of its relabel work: then the run hands
//   over to the lock-free epochs for good.
// A few active vertices make a team's barriers dearer than a round's work,
// and highest-label order pushes less than the synchronous rule; a long run
// of few vertices still needs the team (benchmarks/NOTES.md, "ppr: lock-free
// epochs" and "ppr's constants").  With one thread the run is pr's.
//
// Global relabeling: level-synchronous parallel BFS from the sink over
// reverse residual arcs (parallel_bfs.hpp; windowed_bfs.hpp after a search of
// narrow levels); a label is claimed by compare-and-swap; the active set is
// read off its queue, not a sweep over all n.  Run at the start and, in a
// parallel epoch, whenever the relabel work (BETA + degree per relabel,
// summed over threads) exceeds (ALPHA * n + m) / freq, hi_pr's measure.
//
// Termination.  A reader of a residual capacity that its owner is writing
// may see the old value, so a relabel can overshoot and the labels be
// momentarily invalid (too high).  The run therefore only stops after a
// global relabel, which restores exact labels, finds no active vertex: then
// no vertex with excess can reach the sink and the preflow is maximum.
// Values and cuts do not depend on timing; flows and counters may.
//
// No gap heuristic in the rounds (optional in the paper; the sequential
// epochs have hi_pr's, and every global relabel drops the vertices its BFS
// does not reach to label n).
//
// Phase 2 (excess back to the source) starts as pr's sequential flow
// decomposition (flow_decomposition.hpp) with a smaller budget of cancelled
// cycle arcs (phase2_cycle_arcs); where the preflow's cycles exceed it
// (grids, R-MAT), these same rounds run with the ends swapped (the source
// the target, the sink held at n) instead of pr's sequential pass.
//
// The constants below are measured choices (benchmarks/NOTES.md, "ppr's
// constants"); those that decide which code path runs can be moved by an
// environment variable, so that tests reach every path on small graphs
// (README, "Environment variables").
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "../openmp.hpp"
#include "flow_decomposition.hpp"
#include "highest_label.hpp"
#include "lock_free_discharge.hpp"
#include "matchflow/detail/environment.hpp"
#include "maxflow_cpu.hpp"
#include "parallel_bfs.hpp"
#include "residual_graph.hpp"
#include "two_phase.hpp"
#include "windowed_bfs.hpp"

namespace matchflow::detail {
namespace {

// Residual capacities of a pair may be read by one end while the other
// writes them: relaxed atomics (plain moves on x86).
capacity_t load_cap(const capacity_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
void store_cap(capacity_t* p, capacity_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

// Loops shorter than this run on the calling thread: a team's start and
// barrier cost more than they save.
constexpr std::int64_t parallel_cutoff = 4096;

/// Active vertices a global relabel must find for a parallel epoch
/// (MATCHFLOW_PPR_MIN_ACTIVE).
std::int64_t parallel_min_active() {
  return std::int64_t(env_number("MATCHFLOW_PPR_MIN_ACTIVE", 4096, 1));
}

/// Active vertices a lock-free epoch starts from; fewer get a sequential
/// epoch until the handover (MATCHFLOW_PPR_LOCK_FREE_MIN).
std::int64_t lock_free_min_active() {
  return std::int64_t(env_number("MATCHFLOW_PPR_LOCK_FREE_MIN", 64, 1));
}

/// The share of its relabel-work threshold after which a sequential epoch
/// hands the run over to the lock-free epochs (MATCHFLOW_PPR_HANDOVER).
double handover_share() { return env_number("MATCHFLOW_PPR_HANDOVER", 0.25, 1e-6); }

// Global relabeling frequency factors: of the rounds (four times hi_pr's,
// as every round costs a barrier), of the sequential and of the lock-free
// epochs (twice hi_pr's: their BFS runs on the team).
constexpr double default_round_update_freq = 2.0;
constexpr double default_epoch_update_freq = 1.0;
constexpr double default_lock_free_update_freq = 1.0;

/// Levels a barrier in the global relabels' BFS (windowed_bfs.hpp) after a
/// BFS whose levels averaged fewer than windowed_bfs_max_arcs residual arcs;
/// else, and at the first relabel, the level-synchronous search.  A wide
/// level gives the team work enough, and a window's corrections cost more
/// than its barriers (MATCHFLOW_PPR_BFS_WINDOW; 1: never windowed).
constexpr double windowed_bfs_max_arcs = 16384;

vertex_t bfs_window() {
  return vertex_t(std::min(env_number("MATCHFLOW_PPR_BFS_WINDOW", 4, 1), double(1 << 20)));
}

/// Per-thread output of a round or a BFS level, padded against false sharing.
/// `to_target`: what the thread's pushes sent to the rounds' target t (the
/// sink; the source in phase 2) in a round, added to t's excess after it
/// (the sink takes a push from every sink-linked pixel, and one atomic add a
/// push on its excess made all the team's threads write one cache line).
struct alignas(64) thread_buffer {
  std::vector<vertex_t> items;
  std::int64_t pushes = 0, relabels = 0, work = 0;
  capacity_t to_target = 0;
};

/// Phase 1: moves excess toward the sink `t` (label 0); the source `s` is
/// held at label n.  `target_arcs_read` false (value only): pushes into t
/// leave their reverse copies, in t's own list, as they were
/// (highest_label's comment says why).
template <class Arc>
class synchronous_push_relabel {
 public:
  synchronous_push_relabel(residual_graph<Arc>& g, std::vector<capacity_t>& excess, vertex_t s,
                           vertex_t t, double freq, int team, flow_stats* stats,
                           bool target_arcs_read = true)
      : g_(g),
        excess_(excess),
        n_(g.n),
        s_(s),
        t_(t),
        team_(team),
        target_arcs_read_(target_arcs_read),
        stats_(stats),
        label_(std::size_t(g.n)),
        buffers_(std::size_t(team)) {
    const double f = freq > 0 ? freq : default_round_update_freq;
    sequential_freq_ = freq;
    epoch_freq_ = freq > 0 ? freq : default_epoch_update_freq;
    lock_free_freq_ = freq > 0 ? freq : default_lock_free_update_freq;
    update_threshold_ = (global_update_alpha * double(n_) + double(g.n_arcs)) / f;
    active_.reserve(std::size_t(n_));
  }

  /// Returns true when it ended on a global relabel, whose labels then
  /// give the minimum cut (mark_cut).
  bool run() {
    if (team_ == 1) {  // pr's run: every epoch would be sequential
      highest_label<Arc>(g_, excess_, t_, s_, sequential_freq_, stats_, target_arcs_read_).run();
      return false;
    }
    std::int64_t work = 0;
    bool labels_exact = false;
    for (;;) {
      const bool few = std::int64_t(active_.size()) < std::max<std::int64_t>(1, min_active_ / 8);
      if (!labels_exact && (few || double(work) > update_threshold_)) {
        global_relabel();
        collect_active();
        labels_exact = true;
        work = 0;
        if (active_.empty()) return true;
        if (std::int64_t(active_.size()) < min_active_) {
          if (handed_over_ || std::int64_t(active_.size()) >= lock_free_min_active_) {
            lock_free_epoch();
          } else if (!sequential_epoch()) {
            return false;  // no active vertex left: a maximum preflow
          }
          active_.clear();  // labels and active set are stale: relabel next
          labels_exact = false;
          continue;
        }
      }
      work += round();
      labels_exact = false;
      ++stats_->iterations;
    }
  }

  /// source_side[v] = 1 iff v cannot reach the target, from the exact labels
  /// of the global relabel run() ended on: the vertices its BFS did not
  /// reach have label n.  Only the source is skipped there, and in a
  /// maximum preflow the source cannot reach the sink, so no vertex reaches
  /// it through the source: this is mark_unreached's cut (two_phase.hpp).
  void mark_cut(std::uint8_t* source_side) const {
#pragma omp parallel for num_threads(team_) schedule(static) if (n_ > (1 << 16))
    for (vertex_t v = 0; v < n_; ++v) source_side[v] = label_[std::size_t(v)] == n_;
  }

 private:
  /// hi_pr's sequential highest-label discharge from the exact labels just
  /// computed, until its own relabel work calls for a global update (returns
  /// true) or no vertex is active (false).
  bool sequential_epoch() {
    if (!sequential_) {
      sequential_ = std::make_unique<highest_label<Arc>>(g_, excess_, t_, s_, epoch_freq_, stats_,
                                                         target_arcs_read_);
    }
    sequential_->adopt_levels(label_, levels_, team_);
    handed_over_ = sequential_->discharge_until_update(handover_share_);
    return handed_over_;
  }

  /// The lock-free asynchronous discharge (lock_free_discharge.hpp) from
  /// the exact labels just computed, until its relabel work calls for a
  /// global update or it runs out of vertices; either way a global relabel
  /// follows (the labels it leaves may be invalid).
  void lock_free_epoch() {
    if (!lock_free_discharge_) {
      lock_free_discharge_ =
          std::make_unique<lock_free_discharge<Arc>>(g_, excess_, label_, t_, team_);
    }
    const double threshold =
        (global_update_alpha * double(n_) + double(g_.n_arcs)) / lock_free_freq_;
    lock_free_discharge_->run(active_, levels_.queue.data() + 1, levels_.reached() - 1, threshold,
                              stats_);
  }

  bool wins(vertex_t v, vertex_t dv, vertex_t w, vertex_t dw) const {
    return dv == dw + 1 || dv < dw - 1 || (dv == dw && v < w);
  }

  void discover(vertex_t w, thread_buffer& out) {
    unsigned char* flag = &discovered_[std::size_t(w)];
    // Read first: most targets are already discovered, and a plain read
    // spares the locked exchange.
    if (!__atomic_load_n(flag, __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(flag, static_cast<unsigned char>(1), __ATOMIC_RELAXED)) {
      out.items.push_back(w);
    }
  }

  /// The paper's discharge of one active vertex v within a round.
  void discharge(vertex_t v, thread_buffer& out) {
    const vertex_t dv = label_[std::size_t(v)];
    vertex_t d = dv;
    const capacity_t e0 = excess_[std::size_t(v)];
    capacity_t e = e0;
    const Arc begin = g_.first[std::size_t(v)], end = g_.first[std::size_t(v) + 1];
    while (e > 0) {
      vertex_t next_label = n_;
      bool skipped = false;
      for (Arc k = begin; k < end && e > 0; ++k) {
        residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
        capacity_t cap = load_cap(&arc.rescap);
        if (cap == 0) continue;
        const vertex_t w = arc.head;
        const vertex_t dw = label_[std::size_t(w)];
        if (d == dw + 1) {
          if (w != t_ && excess_[std::size_t(w)] > 0 && !wins(v, dv, w, dw)) {
            skipped = true;  // w is active and pushes along this pair, if anyone
            continue;
          }
          const capacity_t delta = std::min(cap, e);
          cap -= delta;
          store_cap(&arc.rescap, cap);
          if (w != t_ || target_arcs_read_) {
            capacity_t* back = &g_.arcs[std::size_t(arc.reverse)].rescap;
            store_cap(back, load_cap(back) + delta);
          }
          e -= delta;
          if (w == t_) {
            out.to_target += delta;
          } else {
            __atomic_fetch_add(&added_excess_[std::size_t(w)], delta, __ATOMIC_RELAXED);
            discover(w, out);
          }
          ++out.pushes;
        }
        if (cap > 0 && dw >= d) next_label = std::min(next_label, dw + 1);
      }
      if (e == 0 || skipped) break;
      d = next_label;  // relabel against the round's labels
      ++out.relabels;
      out.work += relabel_work_beta + (end - begin);
      if (d >= n_) {
        d = n_;
        break;
      }
    }
    new_label_[std::size_t(v)] = d;
    __atomic_fetch_add(&added_excess_[std::size_t(v)], e - e0, __ATOMIC_RELAXED);
    if (e > 0 && d < n_) discover(v, out);
  }

  /// After the round: the discharged vertex's new label and excess.
  void commit(vertex_t v) {
    label_[std::size_t(v)] = new_label_[std::size_t(v)];
    excess_[std::size_t(v)] += added_excess_[std::size_t(v)];
    added_excess_[std::size_t(v)] = 0;
  }

  /// The rounds' per-vertex state, made by the team at the first round: a
  /// run that the first global relabel hands to a sequential or lock-free
  /// epoch (grids, roads, Delaunay) never pays for its 13 bytes a vertex.
  void make_round_state() {
    const std::size_t n = std::size_t(n_);
    new_label_ = big_array_of<vertex_t>(n);
    added_excess_ = big_array_of<capacity_t>(n);
    discovered_ = big_array_of<unsigned char>(n);
#pragma omp parallel for num_threads(team_) schedule(static) if (n > parallel_cutoff)
    for (std::size_t v = 0; v < n; ++v) added_excess_[v] = 0, discovered_[v] = 0;
  }

  /// One synchronous round; returns its relabel work.
  std::int64_t round() {
    if (!added_excess_) make_round_state();
    const std::int64_t count = std::int64_t(active_.size());
    for (auto& b : buffers_) b.items.clear(), b.pushes = b.relabels = b.work = b.to_target = 0;
#pragma omp parallel num_threads(team_)
    {
      thread_buffer& out = own_buffer();
#pragma omp for schedule(dynamic, 32)
      for (std::int64_t i = 0; i < count; ++i) discharge(active_[std::size_t(i)], out);
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) commit(active_[std::size_t(i)]);
    }
    std::int64_t work = 0;
    for (auto& b : buffers_) {
      excess_[std::size_t(t_)] += b.to_target;
      stats_->pushes += b.pushes;
      stats_->relabels += b.relabels;
      work += b.work;
    }
    gather_discovered();
    return work;
  }

  /// Next active set: the discovered lists, concatenated; each vertex's
  /// pending excess is committed and its flag cleared.  Vertices left at
  /// label n wait for phase 2.
  void gather_discovered() {
    std::vector<std::size_t> offset(buffers_.size() + 1, 0);
    for (std::size_t b = 0; b < buffers_.size(); ++b) {
      offset[b + 1] = offset[b] + buffers_[b].items.size();
    }
    const std::int64_t count = std::int64_t(offset.back());
    if (count <= parallel_cutoff) {
      active_.clear();
      for (const auto& b : buffers_) {
        for (const vertex_t v : b.items) {
          excess_[std::size_t(v)] += added_excess_[std::size_t(v)];
          added_excess_[std::size_t(v)] = 0;
          discovered_[std::size_t(v)] = 0;
          if (label_[std::size_t(v)] < n_) active_.push_back(v);
        }
      }
      return;
    }
    active_.resize(std::size_t(count));
#pragma omp parallel num_threads(team_)
    {
#pragma omp for schedule(static)
      for (std::size_t b = 0; b < buffers_.size(); ++b) {
        std::copy(buffers_[b].items.begin(), buffers_[b].items.end(),
                  active_.begin() + std::ptrdiff_t(offset[b]));
      }
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const vertex_t v = active_[std::size_t(i)];
        excess_[std::size_t(v)] += added_excess_[std::size_t(v)];
        added_excess_[std::size_t(v)] = 0;
        discovered_[std::size_t(v)] = 0;
      }
    }
    active_.erase(std::remove_if(active_.begin(), active_.end(),
                                 [&](vertex_t v) { return label_[std::size_t(v)] >= n_; }),
                  active_.end());
  }

  /// The calling thread's buffer (one per thread of the team).
  thread_buffer& own_buffer() {
#ifdef _OPENMP
    return buffers_[std::size_t(omp_get_thread_num())];
#else
    return buffers_[0];
#endif
  }

  /// into = every thread's items, in thread order.
  void gather_items(std::vector<vertex_t>& into) const {
    into.clear();
    for (const auto& b : buffers_) into.insert(into.end(), b.items.begin(), b.items.end());
  }

  /// Exact distances to the sink, by level-synchronous parallel BFS.
  void global_relabel() {
    ++stats_->global_relabels;
    const auto start = clock_type::now();
    if (bfs_window_ > 1 && narrow_levels_ && n_ > bfs_team_min_vertices) {
      windowed_bfs<Arc>(g_, s_, label_.data(), bfs_window_).run(t_, team_, levels_);
    } else {
      reverse_residual_bfs(g_, t_, s_, team_, label_.data(), levels_);
    }
    const double arcs_a_vertex = double(g_.n_arcs) / double(n_);
    narrow_levels_ = arcs_a_vertex * double(levels_.reached()) <
                     windowed_bfs_max_arcs * double(levels_.levels());
    stats_->seconds_global_relabel += seconds_since(start);
    stats_->bfs_levels += levels_.levels();
  }

  /// Active set from the BFS queue: excess > 0 (the sink, level 0, excluded;
  /// the source is never reached).
  void collect_active() {
    for (auto& b : buffers_) b.items.clear();
    const std::int64_t reached = levels_.reached();
    const vertex_t* queue = levels_.queue.data();
#pragma omp parallel num_threads(team_) if (reached > parallel_cutoff)
    {
      thread_buffer& out = own_buffer();
#pragma omp for schedule(static)
      for (std::int64_t i = 1; i < reached; ++i) {
        if (excess_[std::size_t(queue[i])] > 0) out.items.push_back(queue[i]);
      }
    }
    gather_items(active_);
  }

  residual_graph<Arc>& g_;
  std::vector<capacity_t>& excess_;
  const vertex_t n_, s_, t_;
  const int team_;
  const bool target_arcs_read_;
  flow_stats* stats_;
  std::vector<vertex_t> label_;
  big_array<vertex_t> new_label_;        // the round state (make_round_state)
  big_array<capacity_t> added_excess_;   // sync: atomic fetch-add during a round
  big_array<unsigned char> discovered_;  // sync: test-and-set during a round
  std::vector<thread_buffer> buffers_;
  std::vector<vertex_t> active_;
  const std::int64_t min_active_ = parallel_min_active();
  double update_threshold_ = 0;
  double sequential_freq_ = 0;  // the user's, else hi_pr's default there (one thread)
  double epoch_freq_ = 0;       // the user's, else default_epoch_update_freq
  bfs_levels levels_;           // the last global relabel's BFS
  std::unique_ptr<highest_label<Arc>> sequential_;  // made at the first sequential epoch
  double lock_free_freq_ = 0;  // the user's, else default_lock_free_update_freq
  const std::int64_t lock_free_min_active_ = lock_free_min_active();
  const double handover_share_ = handover_share();
  bool handed_over_ = false;  // a sequential epoch ran out of its share: lock-free from now
  const vertex_t bfs_window_ = bfs_window();
  bool narrow_levels_ = false;  // the last global relabel's BFS levels were narrow
  std::unique_ptr<lock_free_discharge<Arc>> lock_free_discharge_;  // made at the first such epoch
};

}  // namespace

/// Cancelled-cycle arcs per vertex after which ppr's phase 2 stops the flow
/// decomposition and runs the synchronous rounds back to the source instead
/// (MATCHFLOW_PPR_CYCLE_ARCS; 0 skips the decomposition).  Lower than pr's
/// 3: the rounds use the team, the search does not.
double phase2_cycle_arcs() { return env_number("MATCHFLOW_PPR_CYCLE_ARCS", 1.0, 0); }

void parallel_push_relabel_flow(const flow_network& net, const flow_options& options,
                                flow_result* result, flow_stats* stats) {
  const int team = team_size(options.threads);
  two_phase_flow(
      net, options, result, stats,
      [&](auto& g, std::vector<capacity_t>& excess, std::uint8_t* source_side) {
        using Arc = typename std::decay_t<decltype(g)>::arc_t;
        synchronous_push_relabel<Arc> phase1(g, excess, net.source, net.sink, options.relabel_freq,
                                             team, stats, options.return_flow);
        if (!phase1.run()) return false;
        phase1.mark_cut(source_side);
        return true;
      },
      [&](auto& g, std::vector<capacity_t>& excess) {
        using Arc = typename std::decay_t<decltype(g)>::arc_t;
        if (team == 1) return return_excess(g, excess, net.source, net.sink, stats);  // pr's
        const double cycle_arcs = phase2_cycle_arcs();
        if (cycle_arcs > 0 && decompose_excess(g, excess, net.source, net.sink, cycle_arcs)) {
          return;
        }
        // The rounds with the ends swapped: the source is the target, the
        // sink is held at label n.
        synchronous_push_relabel<Arc>(g, excess, net.sink, net.source, 0, team, stats).run();
      });
}

}  // namespace matchflow::detail

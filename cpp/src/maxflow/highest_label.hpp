// hi_pr's highest-label discharge loop (push_relabel.cpp describes it),
// shared by pr, which runs it alone, and ppr (parallel_push_relabel.cpp),
// which runs it between global relabels when few vertices are active; and
// hi_pr's global-update constants, which both use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../openmp.hpp"
#include "matchflow/detail/environment.hpp"
#include "matchflow/maxflow.hpp"
#include "matchflow/timing.hpp"
#include "parallel_bfs.hpp"
#include "residual_graph.hpp"

namespace matchflow::detail {

/// hi_pr's default global-update frequency (GLOB_UPDT_FREQ): a global
/// relabel once the relabel work exceeds (alpha * n + m) / freq.
constexpr double default_global_update_freq = 0.5;
constexpr double global_update_alpha = 6.0;     ///< hi_pr's ALPHA
constexpr std::int64_t relabel_work_beta = 12;  ///< hi_pr's BETA: fixed work per relabel
/// highest_label::starts_local(): n / this many active vertices and target arcs at least.
constexpr double local_start_share = 8;

inline constexpr vertex_t no_vertex = -1;

/// adopt_levels fills the buckets on the calling thread below this many
/// vertices: a team's start costs more.
constexpr std::int64_t adopt_parallel_min = 1 << 14;

/// Phase 1: moves excess toward `target` (the sink) until every vertex
/// other than `target` and `origin` (the source, held at label n) with
/// excess > 0 has label n, i.e. cannot reach the target: a maximum preflow.
/// With target = source and origin = sink it returns a maximum preflow's
/// excess to the source (flow_decomposition.cpp's fallback).
/// `target_arcs_read` false: nothing reads the room on the target's own arcs
/// after the run (a value-only call: the cut's search and the global updates
/// read the arcs into the target, not the copies in its list), so a push into
/// the target leaves its reverse copy as it was: a write far from the rest of
/// the push, and on graph cuts every sink-linked pixel pushes into the
/// sink (NOTES.md, "pr's start").
template <class Arc, class Cap = capacity_t>
class highest_label {
 public:
  highest_label(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess, vertex_t target,
                vertex_t origin, double freq, flow_stats* stats, bool target_arcs_read = true)
      : g_(g),
        excess_(excess),
        n_(g.n),
        target_(target),
        origin_(origin),
        target_arcs_read_(target_arcs_read),
        stats_(stats),
        label_(big_array_of<vertex_t>(std::size_t(g.n))),
        current_(big_array_of<Arc>(std::size_t(g.n))),
        active_first_(big_array_of<vertex_t>(std::size_t(g.n) + 1)),
        inactive_first_(big_array_of<vertex_t>(std::size_t(g.n) + 1)),
        next_(big_array_of<vertex_t>(std::size_t(g.n))),
        prev_(big_array_of<vertex_t>(std::size_t(g.n))) {
    std::fill_n(active_first_.get(), std::size_t(n_) + 1, no_vertex);
    std::fill_n(inactive_first_.get(), std::size_t(n_) + 1, no_vertex);
    const double f = freq > 0 ? freq : default_global_update_freq;
    update_threshold_ = (global_update_alpha * double(n_) + double(g.n_arcs)) / f;
  }

  void run() {
    if (starts_local()) {
      initial_labels();
    } else {
      timed_global_update();
    }
    while (discharge_until_update()) timed_global_update();
  }

  /// Discharges active vertices, highest label first, until the relabel
  /// work calls for a global update, or passes `share` of that threshold
  /// (returns true), or none is left (false).
  bool discharge_until_update(double share = 1.0) {
    const double threshold = share * update_threshold_;
    while (highest_active_ >= lowest_active_) {
      if (double(work_) > threshold) return true;
      const vertex_t v = active_first_[std::size_t(highest_active_)];
      if (v == no_vertex) {
        --highest_active_;
        continue;
      }
      const vertex_t after = next_[std::size_t(v)];
      active_first_[std::size_t(highest_active_)] = after;
      // Most often the next one discharged (NOTES.md, "pr's start").
      if (after != no_vertex) prefetch_arcs(g_, after);
      discharge(v);
    }
    return false;
  }

  /// Takes exact labels computed elsewhere in place of a global update:
  /// ppr's parallel global relabel, whose BFS `levels` hold the vertices
  /// that reach the target by label (the rest have label n).  Fills the
  /// buckets and resets the current arcs with `team` threads, each owning
  /// the levels that start in its share of the queue (a bucket's lists are
  /// then written by one thread).
  void adopt_levels(const std::vector<vertex_t>& labels, const bfs_levels& levels, int team) {
    reset_buckets();
    const vertex_t n = n_, count = levels.levels();
    const std::int64_t reached = levels.reached();
    const std::int64_t* start = levels.level_start.data();
    vertex_t highest_active = 0, lowest_active = n;
#pragma omp parallel num_threads(team) if (team > 1 && reached > adopt_parallel_min) \
    reduction(max : highest_active) reduction(min : lowest_active)
    {
#ifdef _OPENMP
      const int tid = omp_get_thread_num(), threads = omp_get_num_threads();
#else
      const int tid = 0, threads = 1;
#endif
#pragma omp for schedule(static)
      for (vertex_t v = 0; v < n; ++v) label_[std::size_t(v)] = labels[std::size_t(v)];
      const auto first_level = [&](int p) {
        return vertex_t(std::lower_bound(start, start + count, reached * p / threads) - start);
      };
      // Level 0 is the target alone: it is never bucketed.
      for (vertex_t d = std::max<vertex_t>(1, first_level(tid)); d < first_level(tid + 1); ++d) {
        if (fill_bucket(d, levels.queue.data() + start[d], start[d + 1] - start[d])) {
          highest_active = std::max(highest_active, d);
          lowest_active = std::min(lowest_active, d);
        }
      }
    }
    highest_active_ = highest_active;
    lowest_active_ = lowest_active;
    highest_used_label_ = std::max<vertex_t>(0, count - 1);
  }

 private:
  /// Whether to start at hi_pr's labels without a global update: when the
  /// preflow left excess at an eighth of the vertices or more and as many
  /// arcs have room into the target (graph cuts, whose pixels are linked to both
  /// terminals; matching as flow).  Excess there moves a few arcs to the
  /// target, and the highest-label order from exact labels sends it the
  /// long way first: phase 1 of a 1024^2 segmentation took 0.226 s with the
  /// first global update and 0.078 s without (dev host, one thread); R-MAT,
  /// grids, roads and the Washington graphs lost 20-30% without it
  /// (NOTES.md, "pr's start").
  /// MATCHFLOW_PR_LOCAL_START moves the eighth (0: never).
  bool starts_local() const {
    const double share = env_number("MATCHFLOW_PR_LOCAL_START", local_start_share, 0);
    if (share <= 0) return false;
    const double least = double(n_) / share;
    std::int64_t into_target = 0;  // arcs with room into the target
    for (Arc k = g_.first[std::size_t(target_)]; k < g_.first[std::size_t(target_) + 1]; ++k) {
      into_target += g_.arcs[std::size_t(g_.arcs[std::size_t(k)].reverse)].rescap > 0;
    }
    if (double(into_target) < least) return false;
    std::int64_t active = 0;
    for (vertex_t v = 0; v < n_; ++v) active += excess_[std::size_t(v)] > 0;
    return double(active) >= least;
  }

  /// hi_pr's start (its init without INIT_UPDATE, as pbbs builds it): the
  /// target at 0, the origin at n, every other vertex at 1, all in bucket
  /// 1.  Valid labels: the origin's residual arcs are saturated or it never
  /// pushes.
  void initial_labels() {
    reset_buckets();
    for (vertex_t v = 0; v < n_; ++v) {
      current_[std::size_t(v)] = g_.first[std::size_t(v)];
      if (v == target_ || v == origin_) {
        label_[std::size_t(v)] = v == target_ ? 0 : n_;
        continue;
      }
      label_[std::size_t(v)] = 1;
      if (excess_[std::size_t(v)] > 0) {
        add_active(v, 1);
      } else {
        add_inactive(v, 1);
      }
    }
    highest_used_label_ = 1;
  }

  /// Buckets of label d from its vertices (a BFS level): the active ones
  /// stacked, the others listed, each list in the order hi_pr's BFS builds
  /// it; current arcs reset.  Returns whether any is active.
  bool fill_bucket(vertex_t d, const vertex_t* vertices, std::int64_t count) {
    vertex_t active = no_vertex, inactive = no_vertex;
    for (std::int64_t i = 0; i < count; ++i) {
      const vertex_t v = vertices[i];
      current_[std::size_t(v)] = g_.first[std::size_t(v)];
      if (excess_[std::size_t(v)] > 0) {
        next_[std::size_t(v)] = active;
        active = v;
      } else {
        next_[std::size_t(v)] = inactive;
        prev_[std::size_t(v)] = no_vertex;
        if (inactive != no_vertex) prev_[std::size_t(inactive)] = v;
        inactive = v;
      }
    }
    active_first_[std::size_t(d)] = active;
    inactive_first_[std::size_t(d)] = inactive;
    return active != no_vertex;
  }

  // ---- bucket lists ----
  void add_active(vertex_t v, vertex_t d) {
    next_[std::size_t(v)] = active_first_[std::size_t(d)];
    active_first_[std::size_t(d)] = v;
    highest_active_ = std::max(highest_active_, d);
    lowest_active_ = std::min(lowest_active_, d);
  }
  void add_inactive(vertex_t v, vertex_t d) {
    const vertex_t h = inactive_first_[std::size_t(d)];
    next_[std::size_t(v)] = h;
    prev_[std::size_t(v)] = no_vertex;
    if (h != no_vertex) prev_[std::size_t(h)] = v;
    inactive_first_[std::size_t(d)] = v;
  }
  void remove_inactive(vertex_t v, vertex_t d) {
    const vertex_t nx = next_[std::size_t(v)], pv = prev_[std::size_t(v)];
    if (pv == no_vertex) {
      inactive_first_[std::size_t(d)] = nx;
    } else {
      next_[std::size_t(pv)] = nx;
    }
    if (nx != no_vertex) prev_[std::size_t(nx)] = pv;
  }

  void reset_buckets() {
    work_ = 0;
    std::fill_n(active_first_.get(), std::size_t(highest_used_label_) + 1, no_vertex);
    std::fill_n(inactive_first_.get(), std::size_t(highest_used_label_) + 1, no_vertex);
    highest_active_ = highest_used_label_ = 0;
    lowest_active_ = n_;
  }

  void timed_global_update() {
    const auto start = detail::clock_type::now();
    global_update();
    stats_->seconds_global_relabel += seconds_since(start);
  }

  /// Global relabeling: exact distances to the target by backward BFS; vertices
  /// that cannot reach it (and the origin) get n and leave the buckets.
  void global_update() {
    ++stats_->global_relabels;
    reset_buckets();
    queue_.resize(std::size_t(n_));  // once: ppr adopts its own BFS's levels instead
    std::fill_n(label_.get(), std::size_t(n_), n_);
    label_[std::size_t(target_)] = 0;
    std::size_t tail = 0;
    queue_[tail++] = target_;
    for (std::size_t q = 0; q < tail; ++q) {
      // parallel_bfs.hpp's prefetch (NOTES.md, "ppr's constants").
      if (q + bfs_prefetch_ahead < tail) prefetch_arcs(g_, queue_[q + bfs_prefetch_ahead]);
      const vertex_t x = queue_[q];
      const vertex_t dy = label_[std::size_t(x)] + 1;
      for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
        const residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
        const vertex_t y = arc.head;
        if (label_[std::size_t(y)] != n_ || y == origin_) continue;
        if (g_.arcs[std::size_t(arc.reverse)].rescap == 0) continue;
        label_[std::size_t(y)] = dy;
        queue_[tail++] = y;
        current_[std::size_t(y)] = g_.first[std::size_t(y)];
        if (excess_[std::size_t(y)] > 0) {
          add_active(y, dy);
        } else {
          add_inactive(y, dy);
        }
        highest_used_label_ = dy;  // BFS order: labels never decrease
      }
    }
  }

  /// Pushes from v along arc k (to w, label d(v) - 1); activates w.
  void push(vertex_t v, residual_arc<Arc, Cap>& arc, vertex_t w) {
    const Cap delta = Cap(std::min<capacity_t>(excess_[std::size_t(v)], arc.rescap));
    arc.rescap -= delta;
    if (w != target_ || target_arcs_read_) g_.arcs[std::size_t(arc.reverse)].rescap += delta;
    excess_[std::size_t(v)] -= delta;
    if (excess_[std::size_t(w)] == 0 && w != target_) {
      const vertex_t dw = label_[std::size_t(w)];
      remove_inactive(w, dw);
      add_active(w, dw);
    }
    excess_[std::size_t(w)] += delta;
    ++stats_->pushes;
  }

  /// New label: 1 + the least label over residual arcs, current arc there.
  /// discharge() relabels v only once no arc of v is admissible, and labels
  /// are valid, so no residual arc leads below v's own label: the first arc
  /// at that label ends the scan with the label and current arc a full scan
  /// gives.
  void relabel(vertex_t v) {
    ++stats_->relabels;
    const Arc begin = g_.first[std::size_t(v)], end = g_.first[std::size_t(v) + 1];
    work_ += relabel_work_beta + (end - begin);
    const vertex_t least = label_[std::size_t(v)];
    vertex_t best = n_;
    Arc best_arc = begin;
    for (Arc k = begin; k < end; ++k) {
      const residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
      if (arc.rescap == 0) continue;
      const vertex_t d = label_[std::size_t(arc.head)];
      if (d < best) {
        best = d;
        best_arc = k;
        if (d == least) break;
      }
    }
    label_[std::size_t(v)] = std::min(best + 1, n_);
    current_[std::size_t(v)] = best_arc;
  }

  /// Gap heuristic: no vertex is left at label d; everything above it is
  /// cut off from the target.  Only inactive vertices live above d.
  void gap(vertex_t d) {
    ++stats_->gaps;
    for (vertex_t l = d + 1; l <= highest_used_label_; ++l) {
      for (vertex_t u = inactive_first_[std::size_t(l)]; u != no_vertex;
           u = next_[std::size_t(u)]) {
        label_[std::size_t(u)] = n_;
      }
      inactive_first_[std::size_t(l)] = no_vertex;
    }
    highest_used_label_ = d - 1;
    highest_active_ = d - 1;
  }

  /// Pushes and relabels v until its excess is gone or its label reaches n.
  void discharge(vertex_t v) {
    const Arc end = g_.first[std::size_t(v) + 1];
    for (;;) {
      const vertex_t d = label_[std::size_t(v)];
      Arc k = current_[std::size_t(v)];
      for (; k < end; ++k) {
        residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
        if (arc.rescap == 0) continue;
        const vertex_t w = arc.head;
        if (label_[std::size_t(w)] != d - 1) continue;
        push(v, arc, w);
        if (excess_[std::size_t(v)] == 0) break;
      }
      current_[std::size_t(v)] = k;
      if (excess_[std::size_t(v)] == 0) {
        add_inactive(v, d);
        return;
      }
      if (active_first_[std::size_t(d)] == no_vertex &&
          inactive_first_[std::size_t(d)] == no_vertex) {
        gap(d);
        label_[std::size_t(v)] = n_;
        return;
      }
      relabel(v);
      const vertex_t nd = label_[std::size_t(v)];
      if (nd >= n_) return;
      highest_used_label_ = std::max(highest_used_label_, nd);
      highest_active_ = std::max(highest_active_, nd);
    }
  }

  residual_graph<Arc, Cap>& g_;
  std::vector<capacity_t>& excess_;
  const vertex_t n_, target_, origin_;
  const bool target_arcs_read_;
  flow_stats* stats_;
  // Per-vertex and per-label arrays from the scratch cache (no page faults
  // on a repeated call), each written before it is read: labels by the
  // global update or adopt_levels, current arcs and list links for the
  // vertices they reach (no other vertex is discharged or pushed to).
  big_array<vertex_t> label_;
  big_array<Arc> current_;
  big_array<vertex_t> active_first_, inactive_first_;  // per label, no_vertex when empty
  big_array<vertex_t> next_, prev_;                    // list links per vertex
  std::vector<vertex_t> queue_;                        // BFS scratch
  // Bounds of the labels in the buckets (hi_pr's aMax, aMin, dMax): the
  // highest and lowest label of an active vertex, the highest of any vertex.
  vertex_t highest_active_ = 0, lowest_active_ = 0, highest_used_label_ = 0;
  std::int64_t work_ = 0;
  double update_threshold_ = 0;
};

}  // namespace matchflow::detail

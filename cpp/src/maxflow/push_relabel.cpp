// Sequential highest-label push-relabel for maximum flow, hi_pr-class.
//
// Cherkassky & Goldberg 1997, "On implementing push-relabel method for the
// maximum flow problem" (Algorithmica 19), the "hi_pr" variant:
//
// - Highest-label selection: labels index buckets; each bucket
//   holds a stack of active vertices (excess > 0) and a doubly linked list
//   of inactive ones, so that a vertex moves between them in O(1) when a
//   push gives it excess.  a_max / a_min bound the labels of active
//   vertices, d_max those of all bucketed vertices.
// - Current arcs: a vertex resumes its scan where the last one stopped; a
//   relabel sets the current arc to the arc of minimum label.
// - Global relabeling: exact labels by backward BFS from the
//   target over residual arcs, at the start and whenever the relabel work
//   (BETA per relabel plus the arcs it scans) exceeds (ALPHA * n + m) / freq.
// - Gap heuristic: when a relabel empties the bucket of the
//   vertex's old label d, every vertex above d cannot reach the target; all
//   get label n.  With highest-label selection, those are all inactive.
// - Two phases.  Phase 1 finds a maximum preflow: only
//   vertices with label < n are active.  Phase 2 returns the excess stranded
//   at label n to the source by flow decomposition (flow_decomposition.hpp),
//   as hi_pr does.
//
// The algorithm is sequential; the residual graph's construction uses
// options.threads threads (two_phase.hpp).
//
// Labels are int32 (at most n), excesses int64 (bounded by the capacity out
// of the source, below 2^62 by the Python layer's check).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "highest_label.hpp"
#include "maxflow_cpu.hpp"
#include "residual_graph.hpp"
#include "two_phase.hpp"

namespace matchflow::detail {
namespace {

constexpr vertex_t none = -1;

/// Phase 1: moves excess toward `target` (the sink) until every vertex
/// other than `target` and `origin` (the source, held at label n) with
/// excess > 0 has label n, i.e. cannot reach the target: a maximum preflow.
template <class Arc>
class highest_label {
 public:
  highest_label(residual_graph<Arc>& g, std::vector<capacity_t>& excess, vertex_t target,
                vertex_t origin, double freq, flow_stats* stats)
      : g_(g),
        excess_(excess),
        n_(g.n),
        target_(target),
        origin_(origin),
        stats_(stats),
        label_(std::size_t(g.n)),
        current_(std::size_t(g.n)),
        active_first_(std::size_t(g.n) + 1, none),
        inactive_first_(std::size_t(g.n) + 1, none),
        next_(std::size_t(g.n)),
        prev_(std::size_t(g.n)),
        queue_(std::size_t(g.n)) {
    const double f = freq > 0 ? freq : default_global_update_freq;
    update_threshold_ = (global_update_alpha * double(n_) + double(g.n_arcs)) / f;
  }

  void run() {
    global_update();
    while (a_max_ >= a_min_) {
      if (double(work_) > update_threshold_) {
        global_update();
        continue;
      }
      const vertex_t v = active_first_[std::size_t(a_max_)];
      if (v == none) {
        --a_max_;
        continue;
      }
      active_first_[std::size_t(a_max_)] = next_[std::size_t(v)];
      discharge(v);
    }
  }

 private:
  // ---- bucket lists ----
  void add_active(vertex_t v, vertex_t d) {
    next_[std::size_t(v)] = active_first_[std::size_t(d)];
    active_first_[std::size_t(d)] = v;
    a_max_ = std::max(a_max_, d);
    a_min_ = std::min(a_min_, d);
  }
  void add_inactive(vertex_t v, vertex_t d) {
    const vertex_t h = inactive_first_[std::size_t(d)];
    next_[std::size_t(v)] = h;
    prev_[std::size_t(v)] = none;
    if (h != none) prev_[std::size_t(h)] = v;
    inactive_first_[std::size_t(d)] = v;
  }
  void remove_inactive(vertex_t v, vertex_t d) {
    const vertex_t nx = next_[std::size_t(v)], pv = prev_[std::size_t(v)];
    if (pv == none) {
      inactive_first_[std::size_t(d)] = nx;
    } else {
      next_[std::size_t(pv)] = nx;
    }
    if (nx != none) prev_[std::size_t(nx)] = pv;
  }

  /// Global relabeling: exact distances to the target by backward BFS; vertices
  /// that cannot reach it (and the origin) get n and leave the buckets.
  void global_update() {
    ++stats_->global_relabels;
    work_ = 0;
    std::fill(label_.begin(), label_.end(), n_);
    std::fill(active_first_.begin(), active_first_.begin() + (d_max_ + 1), none);
    std::fill(inactive_first_.begin(), inactive_first_.begin() + (d_max_ + 1), none);
    a_max_ = d_max_ = 0;
    a_min_ = n_;
    label_[std::size_t(target_)] = 0;
    std::size_t tail = 0;
    queue_[tail++] = target_;
    for (std::size_t q = 0; q < tail; ++q) {
      const vertex_t x = queue_[q];
      const vertex_t dy = label_[std::size_t(x)] + 1;
      for (Arc k = g_.first[std::size_t(x)]; k < g_.first[std::size_t(x) + 1]; ++k) {
        const residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
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
        d_max_ = dy;  // BFS order: labels never decrease
      }
    }
  }

  /// Pushes from v along arc k (to w, label d(v) - 1); activates w.
  void push(vertex_t v, residual_arc<Arc>& arc, vertex_t w) {
    const capacity_t delta = std::min(excess_[std::size_t(v)], arc.rescap);
    arc.rescap -= delta;
    g_.arcs[std::size_t(arc.reverse)].rescap += delta;
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
  void relabel(vertex_t v) {
    ++stats_->relabels;
    const Arc begin = g_.first[std::size_t(v)], end = g_.first[std::size_t(v) + 1];
    work_ += relabel_work_beta + (end - begin);
    vertex_t best = n_;
    Arc best_arc = begin;
    for (Arc k = begin; k < end; ++k) {
      const residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
      if (arc.rescap == 0) continue;
      const vertex_t d = label_[std::size_t(arc.head)];
      if (d < best) {
        best = d;
        best_arc = k;
      }
    }
    label_[std::size_t(v)] = std::min(best + 1, n_);
    current_[std::size_t(v)] = best_arc;
  }

  /// Gap heuristic: no vertex is left at label d; everything above it is
  /// cut off from the target.  Only inactive vertices live above d.
  void gap(vertex_t d) {
    ++stats_->gaps;
    for (vertex_t l = d + 1; l <= d_max_; ++l) {
      for (vertex_t u = inactive_first_[std::size_t(l)]; u != none; u = next_[std::size_t(u)]) {
        label_[std::size_t(u)] = n_;
      }
      inactive_first_[std::size_t(l)] = none;
    }
    d_max_ = d - 1;
    a_max_ = d - 1;
  }

  /// Pushes and relabels v until its excess is gone or its label reaches n.
  void discharge(vertex_t v) {
    const Arc end = g_.first[std::size_t(v) + 1];
    for (;;) {
      const vertex_t d = label_[std::size_t(v)];
      Arc k = current_[std::size_t(v)];
      for (; k < end; ++k) {
        residual_arc<Arc>& arc = g_.arcs[std::size_t(k)];
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
      if (active_first_[std::size_t(d)] == none && inactive_first_[std::size_t(d)] == none) {
        gap(d);
        label_[std::size_t(v)] = n_;
        return;
      }
      relabel(v);
      const vertex_t nd = label_[std::size_t(v)];
      if (nd >= n_) return;
      d_max_ = std::max(d_max_, nd);
      a_max_ = std::max(a_max_, nd);
    }
  }

  residual_graph<Arc>& g_;
  std::vector<capacity_t>& excess_;
  const vertex_t n_, target_, origin_;
  flow_stats* stats_;
  std::vector<vertex_t> label_;
  std::vector<Arc> current_;
  std::vector<vertex_t> active_first_, inactive_first_;  // per label
  std::vector<vertex_t> next_, prev_;                    // list links per vertex
  std::vector<vertex_t> queue_;                          // BFS scratch
  vertex_t a_max_ = 0, a_min_ = 0, d_max_ = 0;
  std::int64_t work_ = 0;
  double update_threshold_ = 0;
};

}  // namespace

void push_relabel_flow(const flow_network& net, const flow_options& options,
                       flow_result* result, flow_stats* stats) {
  two_phase_flow(net, options, result, stats, [&](auto& g, std::vector<capacity_t>& excess) {
    using Arc = typename std::decay_t<decltype(g)>::arc_t;
    highest_label<Arc>(g, excess, net.sink, net.source, options.relabel_freq, stats).run();
  });
}

}  // namespace matchflow::detail

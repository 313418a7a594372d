// Boykov-Kolmogorov maximum flow: augmenting paths found by two search
// trees that are kept between augmentations (Y. Boykov and V. Kolmogorov,
// "An experimental comparison of min-cut/max-flow algorithms for energy
// minimization in vision", IEEE TPAMI 26(9), 2004), the method of choice for
// graph cuts on images: many terminal arcs, short paths, few neighbours.
//
// It runs inside the CPU two-phase frame (two_phase.hpp): after the frame
// saturates the source's arcs, every vertex holding excess is a root of the
// source tree S (the paper's terminal arc s -> p, with capacity the excess)
// and the sink is the root of the sink tree T.  Section 3 of the paper:
//  * growth: active vertices take free neighbours over residual arcs into
//    their tree, until an arc joins S to T;
//  * augmentation: the path root -> ... -> sink through that arc gets its
//    bottleneck; vertices whose tree arc (or root excess) it saturates
//    become orphans;
//  * adoption: an orphan looks for a new parent in its tree whose own root
//    is still a root (the walk up to it uses the timestamp and distance
//    marks of Kolmogorov's implementation, Section 3.2.3, to stop early and
//    to prefer parents closer to the root), or becomes free, its children
//    orphans and its tree neighbours active.
// When no active vertex is left no excess vertex reaches the sink: a
// maximum preflow; the frame reads the cut and (phase 2) returns the excess
// that stayed to the source.  Sequential.
#include <deque>
#include <limits>
#include <vector>

#include "flow_decomposition.hpp"
#include "maxflow_cpu.hpp"
#include "two_phase.hpp"

namespace matchflow::detail {
namespace {

// outside: the source vertex, whose arcs the preflow saturated: no
// augmenting path passes it (it would need room on an arc out of it), and
// with an arc to every pixel of an image it would make every scan of it,
// and every adoption near it, cost a pass over the image.
enum tree_kind : std::uint8_t { free_vertex = 0, source_tree = 1, sink_tree = 2, outside = 3 };

template <class Arc>
class boykov_kolmogorov {
 public:
  boykov_kolmogorov(residual_graph<Arc>& g, std::vector<capacity_t>& excess, vertex_t source,
                    vertex_t sink, flow_stats* stats)
      : g_(g),
        excess_(excess),
        source_(source),
        sink_(sink),
        stats_(stats),
        tree_(std::size_t(g.n), free_vertex),
        parent_(std::size_t(g.n), no_parent),
        active_(std::size_t(g.n), 0),
        next_arc_(std::size_t(g.n), 0),
        stamp_(std::size_t(g.n), 0),
        dist_(std::size_t(g.n), 0) {}

  void run() {
    tree_[source_] = outside;
    for (vertex_t v = 0; v < g_.n; ++v)
      if (excess_[v] > 0 && v != sink_ && v != source_) make_root(v, source_tree);
    make_root(sink_, sink_tree);
    while (true) {
      const Arc bridge = grow();
      if (bridge == no_parent) return;
      ++time_;
      augment(bridge);
      adopt_orphans();
      ++stats_->iterations;
    }
  }

 private:
  static constexpr Arc no_parent = -1;  // free, or an orphan waiting for adoption
  static constexpr Arc terminal = -2;   // a root: an excess vertex, or the sink

  capacity_t& rescap(Arc a) { return g_.arcs[a].rescap; }
  vertex_t head(Arc a) const { return g_.arcs[a].head; }
  Arc reverse(Arc a) const { return g_.arcs[a].reverse; }

  void make_root(vertex_t v, tree_kind t) {
    tree_[v] = t;
    parent_[v] = terminal;
    stamp_[v] = time_;
    dist_[v] = 1;
    activate(v);
  }

  /// Queues v for growth, its scan from its first arc again (a neighbour
  /// may have become free behind where an earlier scan stopped).
  void activate(vertex_t v) {
    next_arc_[v] = g_.first[v];
    if (active_[v]) return;
    active_[v] = 1;
    queue_.push_back(v);
  }

  /// Residual room from u to its neighbour over u's arc a, in the
  /// direction that u's tree grows: away from the root in S, towards it in T.
  capacity_t room(tree_kind t, Arc a) { return t == source_tree ? rescap(a) : rescap(reverse(a)); }

  /// Growth (Section 3.2.1): returns an arc from S to T, or no_parent when
  /// no active vertex is left.  Keeps the vertex at the front, and where
  /// its scan stopped, while it may still have such arcs: the sink, root of
  /// T, has an arc from every pixel of an image with a sink link, and
  /// rescanning it from its first arc after every augmentation made a
  /// 256 x 256 segmentation take 0.9 s instead of 0.02.
  Arc grow() {
    while (!queue_.empty()) {
      const vertex_t p = queue_.front();
      const tree_kind t = static_cast<tree_kind>(tree_[p]);
      if (t == free_vertex) {  // freed since it was queued
        active_[p] = 0;
        queue_.pop_front();
        continue;
      }
      for (Arc a = next_arc_[p]; a < g_.first[p + 1]; ++a) {
        if (room(t, a) <= 0) continue;
        const vertex_t q = head(a);
        if (tree_[q] == free_vertex) {
          tree_[q] = t;
          parent_[q] = reverse(a);  // q's arc to p
          stamp_[q] = stamp_[p];
          dist_[q] = dist_[p] + 1;
          activate(q);
        } else if (tree_[q] != t && tree_[q] != outside) {
          next_arc_[p] = a;
          return t == source_tree ? a : reverse(a);
        }
      }
      active_[p] = 0;
      queue_.pop_front();
    }
    return no_parent;
  }

  /// Augmentation (Section 3.2.2) along root -> ... -> tail(bridge) ->
  /// head(bridge) -> ... -> sink.
  void augment(Arc bridge) {
    const vertex_t x = head(reverse(bridge)), y = head(bridge);
    capacity_t delta = rescap(bridge);
    vertex_t v = x;
    for (; parent_[v] != terminal; v = head(parent_[v]))
      delta = std::min(delta, rescap(reverse(parent_[v])));
    delta = std::min(delta, excess_[v]);
    for (v = y; parent_[v] != terminal; v = head(parent_[v]))
      delta = std::min(delta, rescap(parent_[v]));
    push(bridge, delta);
    for (v = x; parent_[v] != terminal;) {
      const Arc a = parent_[v];
      const vertex_t up = head(a);
      push(reverse(a), delta);
      if (rescap(reverse(a)) == 0) orphan(v);
      v = up;
    }
    excess_[v] -= delta;
    if (excess_[v] == 0) orphan(v);
    for (v = y; parent_[v] != terminal;) {
      const Arc a = parent_[v];
      const vertex_t up = head(a);
      push(a, delta);
      if (rescap(a) == 0) orphan(v);
      v = up;
    }
    excess_[sink_] += delta;
  }

  void push(Arc a, capacity_t delta) {
    rescap(a) -= delta;
    rescap(reverse(a)) += delta;
    ++stats_->pushes;
  }

  void orphan(vertex_t v) {
    parent_[v] = no_parent;
    orphans_.push_back(v);
  }

  /// The distance from v to its tree's root through valid parents, or -1
  /// when the walk meets an orphan (v's root is gone).  Marks the vertices
  /// passed with this augmentation's time and their distance.
  int root_distance(vertex_t v) {
    int d = 0;
    vertex_t w = v;
    while (true) {
      if (stamp_[w] == time_) {
        d += dist_[w];
        break;
      }
      const Arc a = parent_[w];
      if (a == no_parent) return -1;
      ++d;
      if (a == terminal) {
        stamp_[w] = time_;
        dist_[w] = 1;
        break;
      }
      w = head(a);
    }
    for (w = v; stamp_[w] != time_; w = head(parent_[w])) {  // mark the path walked
      stamp_[w] = time_;
      dist_[w] = d--;
    }
    return static_cast<int>(dist_[v]);
  }

  /// Adoption (Section 3.2.3), orphans first in, first out.
  void adopt_orphans() {
    while (!orphans_.empty()) {
      const vertex_t p = orphans_.front();
      orphans_.pop_front();
      adopt(p);
    }
  }

  void adopt(vertex_t p) {
    const tree_kind t = static_cast<tree_kind>(tree_[p]);
    if (t == source_tree && excess_[p] > 0) {  // still a root by its own excess
      parent_[p] = terminal;
      stamp_[p] = time_;
      dist_[p] = 1;
      return;
    }
    Arc best = no_parent;
    int best_dist = std::numeric_limits<int>::max();
    for (Arc a = g_.first[p]; a < g_.first[p + 1]; ++a) {
      const vertex_t q = head(a);
      // q can be p's parent when the tree arc q -> p (S) or p -> q (T) has room
      if (tree_[q] != t || (t == source_tree ? rescap(reverse(a)) : rescap(a)) <= 0) continue;
      const int d = root_distance(q);
      if (d >= 0 && d < best_dist) best = a, best_dist = d;
    }
    if (best != no_parent) {
      parent_[p] = best;
      stamp_[p] = time_;
      dist_[p] = best_dist + 1;
      return;
    }
    tree_[p] = free_vertex;  // no parent: p leaves its tree
    for (Arc a = g_.first[p]; a < g_.first[p + 1]; ++a) {
      const vertex_t q = head(a);
      if (tree_[q] != t) continue;
      if ((t == source_tree ? rescap(reverse(a)) : rescap(a)) > 0) activate(q);
      const Arc qa = parent_[q];
      if (qa >= 0 && head(qa) == p) orphan(q);
    }
  }

  residual_graph<Arc>& g_;
  std::vector<capacity_t>& excess_;
  vertex_t source_, sink_;
  flow_stats* stats_;
  std::vector<std::uint8_t> tree_;
  std::vector<Arc> parent_;  // the vertex's arc to its parent (terminal, no_parent)
  std::vector<std::uint8_t> active_;
  std::vector<Arc> next_arc_;  // where the vertex's growth scan resumes
  std::vector<std::int64_t> stamp_;
  std::vector<std::int32_t> dist_;
  std::deque<vertex_t> queue_, orphans_;
  std::int64_t time_ = 1;
};

}  // namespace

void boykov_kolmogorov_flow(const flow_network& net, const flow_options& options,
                            flow_result* result, flow_stats* stats) {
  two_phase_flow(
      net, options, result, stats,
      [&](auto& g, std::vector<capacity_t>& excess, std::uint8_t*) {
        using Arc = typename std::decay_t<decltype(g)>::arc_t;
        boykov_kolmogorov<Arc>(g, excess, net.source, net.sink, stats).run();
        return false;  // the frame's search marks the cut
      },
      [&](auto& g, std::vector<capacity_t>& excess) {
        return_excess(g, excess, net.source, net.sink, stats);
      });
}

}  // namespace matchflow::detail

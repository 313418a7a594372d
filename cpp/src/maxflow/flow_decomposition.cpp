// Phase 2 by flow decomposition (hi_pr's second stage), in linear time apart
// from cycle cancelling.  A residual graph's reverse copies at v, with
// positive residual capacity, are exactly the input arcs carrying flow into
// v (rescap of a reverse copy = flow on its input arc), so the search scans
// only [reverse_first[v], first[v + 1]).
#include "flow_decomposition.hpp"

#include <algorithm>
#include <cstdint>

#include "highest_label.hpp"

namespace matchflow::detail {
namespace {

constexpr vertex_t none = -1;

/// Vertices with more arcs skip cancel_two_cycles: on R-MAT 18 the pass over
/// every hub's arcs cost more than the cycles it saved; caps 16 to 64 were
/// alike (NOTES.md, "CPU constants").  Grids and Delaunay graphs stay under it.
constexpr int two_cycle_max_arcs = 32;

/// pr's budget for decompose_excess: the search gives up once the cycles
/// it cancelled hold more than this many arcs per vertex of the graph; a
/// push-relabel pass back to the source (highest_label with the source as
/// target) then returns the excess, as the cancelling left it.  Dev host,
/// pr, threads=1 (benchmarks/NOTES.md): R-MAT 18 cancels 13.8 arcs a
/// vertex, and the pass takes 0.15-0.17 s to the search's 0.28-0.36 s; the
/// 1024 x 1024 grid cancels 2.0 a vertex, where both take about 0.09 s;
/// Delaunay and road-like graphs under 0.3.
constexpr double cycle_arcs_per_vertex = 3;

/// white: never met; met: not searched, but cancel_two_cycles has seen it
enum color : std::uint8_t { white, met, grey, black };

template <class Arc, class Cap>
class excess_return {
 public:
  excess_return(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess,
                double arcs_per_vertex)
      : g_(g),
        excess_(excess),
        color_(std::size_t(g.n), white),
        depth_(std::size_t(g.n)),
        marked_(std::size_t(g.n), Arc(none)),
        current_(g.reverse_first.get(), g.reverse_first.get() + g.n),
        cycle_budget_(std::int64_t(arcs_per_vertex * double(g.n))) {
    finished_.reserve(std::size_t(g.n));
  }

  /// Searches from every vertex with excess; the finishing order, reversed,
  /// is topological along the flow (a vertex before those that send it flow).
  /// False when it gave up (the budget): the flow changed only by
  /// cancelled cycles, the excesses not at all.
  bool order(vertex_t source, vertex_t sink) {
    for (vertex_t v = 0; v < g_.n && cycle_budget_ >= 0; ++v) {
      const bool start = v != source && v != sink && excess_[std::size_t(v)] > 0;
      if (start && color_[std::size_t(v)] <= met) search(v);
    }
    while (!pending_.empty() && cycle_budget_ >= 0) {  // excess a cancelled cycle left white
      const vertex_t v = pending_.back();
      pending_.pop_back();
      if (color_[std::size_t(v)] <= met) search(v);
    }
    return cycle_budget_ >= 0;
  }

  /// Each vertex, in topological order, sends its excess back along its
  /// incoming flow.  Excess never exceeds inflow (inflow - outflow >= it),
  /// so the scan finds enough; what it sends lands on vertices later in the
  /// order, and at the source.
  void send_back(vertex_t source, vertex_t sink) {
    for (auto it = finished_.rbegin(); it != finished_.rend(); ++it) {
      const vertex_t v = *it;
      if (v == source || v == sink) continue;
      for (Arc k = g_.reverse_first[std::size_t(v)]; excess_[std::size_t(v)] > 0; ++k) {
        residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
        if (arc.rescap == 0) continue;
        const capacity_t delta = std::min<capacity_t>(excess_[std::size_t(v)], arc.rescap);
        move(arc, delta);
        excess_[std::size_t(v)] -= delta;
        excess_[std::size_t(arc.head)] += delta;
      }
    }
  }

 private:
  /// Takes delta units off the flow that `arc` (a reverse copy) carries back.
  void move(residual_arc<Arc, Cap>& arc, capacity_t delta) {
    arc.rescap -= Cap(delta);
    g_.arcs[std::size_t(arc.reverse)].rescap += Cap(delta);
  }

  /// Iterative depth-first search backward along flow from `root`.  The grey
  /// vertices form path_, each one's current arc leading to the next; an
  /// arc to a grey vertex closes a flow cycle.
  void search(vertex_t root) {
    if (color_[std::size_t(root)] == white) cancel_two_cycles(root);
    push_path(root);
    while (!path_.empty() && cycle_budget_ >= 0) {
      const vertex_t v = path_.back();
      const Arc end = g_.first[std::size_t(v) + 1];
      Arc& k = current_[std::size_t(v)];
      for (; k < end; ++k) {
        const residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
        if (arc.rescap == 0) continue;
        const std::uint8_t c = color_[std::size_t(arc.head)];
        if (c <= met) {  // white or met: not yet searched
          if (c == white) cancel_two_cycles(arc.head);
          if (arc.rescap > 0) push_path(arc.head);  // else the next pass moves past arc
          break;
        }
        if (c == grey) {
          cancel_cycle(arc.head);
          break;
        }
      }
      if (k == end) {  // every flow into v comes from finished vertices
        color_[std::size_t(v)] = black;
        finished_.push_back(v);
        path_.pop_back();
      }
    }
  }

  /// Cancels the anti-parallel flows between v and its neighbours (flow
  /// cycles of two arcs) when the search first meets v, if v has at most
  /// two_cycle_max_arcs arcs: one pass over them, the tails of v's inflow
  /// marked.  Push-relabel leaves many such cycles (363,869 of the 370,421
  /// the search met on a 1024 x 1024 grid); cancelled by the search, each
  /// breaks the path and its vertices are searched again.  Only flow on v's
  /// own arcs drops, which breaks no grey path except at v's parent, whose
  /// current arc the caller checks.
  void cancel_two_cycles(vertex_t v) {
    color_[std::size_t(v)] = met;
    const Arc rf = g_.reverse_first[std::size_t(v)], end = g_.first[std::size_t(v) + 1];
    if (end - g_.first[std::size_t(v)] > two_cycle_max_arcs) return;
    bool any = false;
    for (Arc k = rf; k < end; ++k) {  // reverse copies: flow from arc.head into v
      const residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
      if (arc.rescap > 0) marked_[std::size_t(arc.head)] = k, any = true;
    }
    if (!any) return;
    for (Arc k = g_.first[std::size_t(v)]; k < rf; ++k) {  // forward copies: v to arc.head
      const residual_arc<Arc, Cap>& arc = g_.arcs[std::size_t(k)];
      const Arc twin = marked_[std::size_t(arc.head)];
      if (twin == Arc(none)) continue;
      residual_arc<Arc, Cap>& into = g_.arcs[std::size_t(twin)];  // flow from arc.head into v
      residual_arc<Arc, Cap>& back = g_.arcs[std::size_t(arc.reverse)];  // flow from v to arc.head
      const capacity_t delta = std::min(into.rescap, back.rescap);
      move(into, delta);
      move(back, delta);
      if (into.rescap == 0) marked_[std::size_t(arc.head)] = Arc(none);
    }
    for (Arc k = rf; k < end; ++k) marked_[std::size_t(g_.arcs[std::size_t(k)].head)] = Arc(none);
  }

  void push_path(vertex_t v) {
    color_[std::size_t(v)] = grey;
    depth_[std::size_t(v)] = vertex_t(path_.size());
    path_.push_back(v);
  }

  /// The current arcs of path_ from grey w to its top, the last one back to
  /// w, form a cycle of flow: cancels its least flow.  The search resumes at
  /// the first vertex from w whose current arc lost all its flow; those
  /// above it on the path go back to met, unsearched (their path is broken).
  void cancel_cycle(vertex_t w) {
    const std::size_t from = std::size_t(depth_[std::size_t(w)]), top = path_.size();
    cycle_budget_ -= std::int64_t(top - from);
    capacity_t delta = -1;
    std::size_t resume = from;
    for (std::size_t i = from; i < top; ++i) {
      const capacity_t c = g_.arcs[std::size_t(current_[std::size_t(path_[i])])].rescap;
      if (delta < 0 || c < delta) delta = c, resume = i;
    }
    for (std::size_t i = from; i < top; ++i)
      move(g_.arcs[std::size_t(current_[std::size_t(path_[i])])], delta);
    for (std::size_t i = resume + 1; i < top; ++i) {
      const vertex_t x = path_[i];
      color_[std::size_t(x)] = met;
      if (excess_[std::size_t(x)] > 0) pending_.push_back(x);  // it may not be met again
    }
    path_.resize(resume + 1);
  }

  residual_graph<Arc, Cap>& g_;
  std::vector<capacity_t>& excess_;
  std::vector<std::uint8_t> color_;
  std::vector<vertex_t> depth_;     // a grey vertex's place on path_
  std::vector<Arc> marked_;         // cancel_two_cycles' scratch, all none between calls
  std::vector<vertex_t> path_;      // the grey vertices, root first
  std::vector<Arc> current_;        // next arc to scan: starts at the reverse copies
  std::vector<vertex_t> finished_;  // vertices in finishing order
  std::vector<vertex_t> pending_;   // searches still to start
  std::int64_t cycle_budget_;       // arcs of cycles still to cancel before giving up
};

}  // namespace

template <class Arc, class Cap>
bool decompose_excess(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess, vertex_t source,
                      vertex_t sink, double cycle_arcs_per_vertex) {
  bool any = false;
  for (vertex_t v = 0; v < g.n && !any; ++v)
    any = v != source && v != sink && excess[std::size_t(v)] > 0;
  if (!any) return true;  // the preflow is already a flow: no allocations
  excess_return<Arc, Cap> pass(g, excess, cycle_arcs_per_vertex);
  if (!pass.order(source, sink)) return false;
  pass.send_back(source, sink);
  return true;
}

template <class Arc, class Cap>
void return_excess(residual_graph<Arc, Cap>& g, std::vector<capacity_t>& excess, vertex_t source,
                   vertex_t sink, flow_stats* stats) {
  if (decompose_excess(g, excess, source, sink, cycle_arcs_per_vertex)) return;
  highest_label<Arc, Cap>(g, excess, source, sink, 0, stats).run();  // counts into stats
}

#define MATCHFLOW_FLOW_DECOMPOSITION(Arc, Cap)                                                  \
  template bool decompose_excess<Arc, Cap>(residual_graph<Arc, Cap>&, std::vector<capacity_t>&, \
                                           vertex_t, vertex_t, double);                         \
  template void return_excess<Arc, Cap>(residual_graph<Arc, Cap>&, std::vector<capacity_t>&,    \
                                        vertex_t, vertex_t, flow_stats*);
MATCHFLOW_RESIDUAL_GRAPHS(MATCHFLOW_FLOW_DECOMPOSITION)
#undef MATCHFLOW_FLOW_DECOMPOSITION

}  // namespace matchflow::detail

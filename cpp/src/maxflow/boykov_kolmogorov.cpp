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
// that stayed to the source.
//
// On a team, the trees first grow in parts of the graph at once (Liu & Sun,
// "Parallel graph-cuts by adaptive bottom-up merging", CVPR 2010): the
// vertices are cut into one range of ids per thread (an image's rows in
// strips), and each thread runs the search above on its range and the sink
// alone, arcs to other ranges ignored.  Each part touches only its own
// vertices' records and arcs (an arc into the sink is its tail's), so the
// parts need no locks.  Then neighbouring ranges are merged pairwise, level
// by level (in parallel), the last merge being the whole graph: each merge's
// search goes on from the trees its halves left (still valid trees: every
// parent lies in its child's range, or is the sink), its queue their tree
// vertices with an arc leaving their half: only what crosses the seams is
// left to it.
#include <algorithm>
#include <exception>
#include <limits>
#include <vector>

#include "../big_array.hpp"
#include "../openmp.hpp"
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

/// A vertex's search state, in one record: growth, augmentation and
/// adoption read several fields of each vertex they touch.
template <class Arc>
struct bk_node {
  Arc parent;           // the vertex's arc to its parent (terminal, no_parent)
  Arc next_arc;         // where the vertex's growth scan resumes
  std::int32_t stamp;   // the augmentation at which dist was valid (Section 3.2.3 marks)
  std::int32_t dist;    // distance to the tree's root at `stamp`
  std::uint8_t tree;    // tree_kind
  std::uint8_t active;  // queued for growth
};

/// A first-in, first-out queue of vertices in which each vertex is at most
/// once at a time (the active vertices, kept so by their flag; the orphans,
/// each queued as its parent arc goes): a ring of `capacity` slots, so that
/// no push or pop allocates (std::deque's blocks were allocated and freed as
/// the queue moved).
class vertex_fifo {
 public:
  explicit vertex_fifo(std::size_t capacity) : mask_(ring_mask(capacity)) {}
  bool empty() const { return head_ == tail_; }
  vertex_t front() const { return slot_[head_ & mask_]; }
  void pop_front() { ++head_; }
  void push_back(vertex_t v) { slot_[tail_++ & mask_] = v; }

 private:
  static std::size_t ring_mask(std::size_t capacity) {
    std::size_t size = 1;
    while (size < capacity) size *= 2;
    return size - 1;
  }
  std::size_t mask_;
  big_array<vertex_t> slot_ = big_array_of<vertex_t>(mask_ + 1);
  std::size_t head_ = 0, tail_ = 0;  // pops and pushes so far
};

/// Parts smaller than this are not worth a thread: the whole search's pass
/// over their borders would cost what the part saved.
constexpr vertex_t least_part = 1 << 14;

/// The search over the vertices [lo, hi) and the sink (one part of the
/// graph when `Part`, else the whole graph), on the records `node` it shares
/// with the other parts.  (Not testing the range on the whole graph saved
/// 3-7% of its search on one thread.)
template <class Arc, bool Part>
class boykov_kolmogorov {
 public:
  using node = bk_node<Arc>;
  static constexpr Arc no_parent = -1;  // free, or an orphan waiting for adoption
  static constexpr Arc terminal = -2;   // a root: an excess vertex, or the sink

  boykov_kolmogorov(residual_graph<Arc>& g, std::vector<capacity_t>& excess, node* nodes,
                    vertex_t source, vertex_t sink, vertex_t lo, vertex_t hi, std::int32_t time)
      : g_(g),
        excess_(excess),
        node_(nodes),
        source_(source),
        sink_(sink),
        lo_(lo),
        hi_(hi),
        queue_(std::size_t(hi - lo)),
        orphans_(std::size_t(hi - lo)),
        time_(time) {}

  /// Flow the search has sent into the sink, and its counts.
  capacity_t sink_gain = 0;
  flow_stats counts;
  std::int32_t time() const { return time_; }

  /// source_side[v] = 1 iff v cannot reach the sink, read off the trees
  /// after run().  T's vertices can, through their tree arcs; S's cannot (a
  /// finished search leaves no S vertex with room into a vertex outside S:
  /// that would be a growth or a bridge, and such room opens only along
  /// T's paths).  A free vertex can when it has room into T, directly or
  /// through other free vertices: an S orphan set free keeps its room into
  /// T, as Kolmogorov's code, which wakes only its S neighbours, does too.
  /// Those are found by a search back from T over free vertices alone.
  void mark_cut(std::uint8_t* source_side) const {
    std::vector<vertex_t> reach;  // free vertices that can reach the sink
    for (vertex_t v = 0; v < g_.n; ++v) {
      source_side[v] = node_[v].tree != sink_tree;
      if (node_[v].tree != free_vertex) continue;
      for (Arc a = g_.first[v]; a < g_.first[v + 1]; ++a)
        if (rescap(a) > 0 && node_[head(a)].tree == sink_tree) {
          reach.push_back(v);
          break;
        }
    }
    for (const vertex_t v : reach) source_side[v] = 0;
    while (!reach.empty()) {
      const vertex_t x = reach.back();
      reach.pop_back();
      for (Arc b = g_.first[x]; b < g_.first[x + 1]; ++b) {
        const vertex_t f = head(b);
        if (node_[f].tree != free_vertex || !source_side[f] || rescap(reverse(b)) <= 0) continue;
        source_side[f] = 0;
        reach.push_back(f);
      }
    }
  }

  /// Growth, augmentation and adoption until no active vertex is left.
  void run() {
    while (true) {
      const Arc bridge = grow();
      if (bridge == no_parent) return;
      next_time();
      augment(bridge);
      adopt_orphans();
      ++counts.iterations;
    }
  }

  /// The roots of S in the range (every excess vertex) and T's vertices
  /// there (start_nodes), queued in vertex order, so that both trees grow
  /// side by side across an image (Kolmogorov's code queues its
  /// terminal-linked nodes so).  With the sink queued after the excess
  /// vertices, T waited until S had flooded the image: phase 1 of a 1024 x
  /// 1024 segmentation took 0.20 s instead of 0.10 (NOTES.md, "Graph cuts").
  void plant() {
    for (vertex_t v = lo_; v < hi_; ++v) {
      if (v == sink_ || v == source_) continue;
      if (excess_[v] > 0)
        make_root(v, source_tree);
      else if (node_[v].tree == sink_tree)
        activate(v);
    }
  }

  /// The vertices of the range (in any tree, or none) with an arc that
  /// leaves it, other than to the source or the sink: all of them
  /// (`among` null), or those of `among`, in order.
  std::vector<vertex_t> leaving(const std::vector<vertex_t>* among) const {
    std::vector<vertex_t> out;
    const auto leaves = [&](vertex_t v) {
      for (Arc a = g_.first[v]; a < g_.first[v + 1]; ++a)
        if (!mine(head(a)) && head(a) != source_) return true;
      return false;
    };
    if (among != nullptr) {
      for (const vertex_t v : *among)
        if (leaves(v)) out.push_back(v);
      return out;
    }
    for (vertex_t v = lo_; v < hi_; ++v)
      if (v != sink_ && v != source_ && leaves(v)) out.push_back(v);
    return out;
  }

  /// Queues those of `vertices` that are in a tree: where a search of a
  /// smaller range stopped short.
  void wake(const std::vector<vertex_t>& vertices) {
    for (const vertex_t v : vertices) {
      const std::uint8_t t = node_[v].tree;
      if (t == source_tree || t == sink_tree) activate(v);
    }
  }

 private:
  capacity_t& rescap(Arc a) { return g_.arcs[a].rescap; }
  capacity_t rescap(Arc a) const { return g_.arcs[a].rescap; }
  vertex_t head(Arc a) const { return g_.arcs[a].head; }
  Arc reverse(Arc a) const { return g_.arcs[a].reverse; }

  /// The next augmentation's time stamp; stamps restart before they wrap
  /// (a stamp older than every current one only makes a walk go on; the
  /// walks stay in the range, the sink's stamp unread).
  void next_time() {
    if (time_ == std::numeric_limits<std::int32_t>::max()) {
      for (vertex_t v = lo_; v < hi_; ++v) node_[v].stamp = 0;
      time_ = 0;
    }
    ++time_;
  }

  void make_root(vertex_t v, tree_kind t) {
    node& x = node_[v];
    x.tree = t;
    x.parent = terminal;
    x.stamp = time_;
    x.dist = 1;
    activate(v);
  }

  /// Whether the search may touch q: a vertex of its range, or the sink
  /// (whose record no search writes: it is every part's root of T).
  bool mine(vertex_t q) const { return !Part || (q >= lo_ && q < hi_) || q == sink_; }

  /// Queues v for growth, its scan from its first arc again (a neighbour
  /// may have become free behind where an earlier scan stopped).  Never the
  /// sink: every vertex with room to it joined T at the start, and room to
  /// it never grows (augmentations send flow into it), so a scan of its
  /// arcs finds no free vertex to take.
  void activate(vertex_t v) {
    if (v == sink_) return;
    node& x = node_[v];
    x.next_arc = g_.first[v];
    if (x.active) return;
    x.active = 1;
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
      node& x = node_[p];
      const tree_kind t = static_cast<tree_kind>(x.tree);
      if (t == free_vertex) {  // freed since it was queued
        x.active = 0;
        queue_.pop_front();
        continue;
      }
      for (Arc a = x.next_arc; a < g_.first[p + 1]; ++a) {
        if (room(t, a) <= 0) continue;
        const vertex_t q = head(a);
        if (!mine(q)) continue;
        node& y = node_[q];
        if (y.tree == free_vertex) {
          y.tree = t;
          y.parent = reverse(a);  // q's arc to p
          y.stamp = x.stamp;
          y.dist = x.dist + 1;
          activate(q);
        } else if (y.tree != t && y.tree != outside) {
          x.next_arc = a;
          return t == source_tree ? a : reverse(a);
        }
      }
      x.active = 0;
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
    for (; node_[v].parent != terminal; v = head(node_[v].parent))
      delta = std::min(delta, rescap(reverse(node_[v].parent)));
    delta = std::min(delta, excess_[v]);
    for (v = y; node_[v].parent != terminal; v = head(node_[v].parent))
      delta = std::min(delta, rescap(node_[v].parent));
    push(bridge, delta);
    for (v = x; node_[v].parent != terminal;) {
      const Arc a = node_[v].parent;
      const vertex_t up = head(a);
      push(reverse(a), delta);
      if (rescap(reverse(a)) == 0) orphan(v);
      v = up;
    }
    excess_[v] -= delta;
    if (excess_[v] == 0) orphan(v);
    for (v = y; node_[v].parent != terminal;) {
      const Arc a = node_[v].parent;
      const vertex_t up = head(a);
      push(a, delta);
      if (rescap(a) == 0) orphan(v);
      v = up;
    }
    sink_gain += delta;
  }

  void push(Arc a, capacity_t delta) {
    rescap(a) -= delta;
    rescap(reverse(a)) += delta;
    ++counts.pushes;
  }

  void orphan(vertex_t v) {
    node_[v].parent = no_parent;
    orphans_.push_back(v);
  }

  /// The distance from v to its tree's root through valid parents, or -1
  /// when the walk meets an orphan (v's root is gone).  Marks the vertices
  /// passed with this augmentation's time and their distance.
  int root_distance(vertex_t v) {
    int d = 0;
    vertex_t w = v;
    while (true) {
      if (w == sink_) {  // T's root, at distance 1 (its record is not marked: see mine)
        ++d;
        break;
      }
      node& x = node_[w];
      if (x.stamp == time_) {
        d += x.dist;
        break;
      }
      const Arc a = x.parent;
      if (a == no_parent) return -1;
      ++d;
      if (a == terminal) {
        x.stamp = time_;
        x.dist = 1;
        break;
      }
      w = head(a);
    }
    for (w = v; w != sink_ && node_[w].stamp != time_; w = head(node_[w].parent)) {
      node_[w].stamp = time_;  // mark the path walked
      node_[w].dist = d--;
    }
    return v == sink_ ? 1 : static_cast<int>(node_[v].dist);
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
    node& x = node_[p];
    const tree_kind t = static_cast<tree_kind>(x.tree);
    if (t == source_tree && excess_[p] > 0) {  // still a root by its own excess
      x.parent = terminal;
      x.stamp = time_;
      x.dist = 1;
      return;
    }
    Arc best = no_parent;
    int best_dist = std::numeric_limits<int>::max();
    for (Arc a = g_.first[p]; a < g_.first[p + 1]; ++a) {
      const vertex_t q = head(a);
      // q can be p's parent when the tree arc q -> p (S) or p -> q (T) has room
      if (!mine(q) || node_[q].tree != t ||
          (t == source_tree ? rescap(reverse(a)) : rescap(a)) <= 0)
        continue;
      const int d = root_distance(q);
      if (d >= 0 && d < best_dist) best = a, best_dist = d;
    }
    if (best != no_parent) {
      x.parent = best;
      x.stamp = time_;
      x.dist = best_dist + 1;
      return;
    }
    x.tree = free_vertex;  // no parent: p leaves its tree
    for (Arc a = g_.first[p]; a < g_.first[p + 1]; ++a) {
      const vertex_t q = head(a);
      if (!mine(q) || node_[q].tree != t) continue;
      if ((t == source_tree ? rescap(reverse(a)) : rescap(a)) > 0) activate(q);
      const Arc qa = node_[q].parent;
      if (qa >= 0 && head(qa) == p) orphan(q);
    }
  }

  residual_graph<Arc>& g_;
  std::vector<capacity_t>& excess_;
  node* node_;
  vertex_t source_, sink_, lo_, hi_;
  vertex_fifo queue_, orphans_;  // a range's vertices (never the sink or the source), once each
  std::int32_t time_;
};

/// The records at the start: the source outside every tree (see
/// tree_kind), the sink the root of T, and every vertex with room to the
/// sink in T already, its tree arc that room (as the sink's first scan
/// would).  From the scratch cache, each part's range written first by its
/// thread: a fresh array's page faults took 8 ms of a 1024 x 1024
/// segmentation's 80 ms search; the pass over the sink's arcs is on the
/// team too (9% of one thread's search there, perf).
template <class Arc>
big_array<bk_node<Arc>> start_nodes(const residual_graph<Arc>& g, vertex_t source, vertex_t sink,
                                    int parts) {
  using bk = boykov_kolmogorov<Arc, false>;
  big_array<bk_node<Arc>> node = big_array_of<bk_node<Arc>>(std::size_t(g.n));
#pragma omp parallel for num_threads(parts) schedule(static)
  for (vertex_t v = 0; v < g.n; ++v) node[v] = {bk::no_parent, 0, 0, 0, free_vertex, 0};
  node[source].tree = outside;
  node[sink] = {bk::terminal, 0, 1, 1, sink_tree, 0};
  const auto join_sink_tree = [&](Arc b) {  // b: the sink's copy of an arc with q
    const vertex_t q = g.arcs[b].head;
    const Arc to_sink = g.arcs[b].reverse;
    if (q == source || node[q].tree != free_vertex || g.arcs[to_sink].rescap <= 0) return;
    node[q] = {to_sink, 0, 1, 2, sink_tree, 0};
  };
  const Arc in_first = g.reverse_first[sink], in_last = g.first[sink + 1];
  for (Arc b = g.first[sink]; b < in_first; ++b) join_sink_tree(b);
  // The sink's in-arcs (an image's every pixel) on the team: they are in
  // tail order, and each share starts at a new tail, so that parallel arcs
  // from one vertex stay with one thread.
  const auto share_start = [&](int c) {
    Arc b = in_first + Arc(std::int64_t(in_last - in_first) * c / parts);
    while (b > in_first && b < in_last && g.arcs[b].head == g.arcs[b - 1].head) ++b;
    return b;
  };
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int c = 0; c < parts; ++c)
    for (Arc b = share_start(c); b < share_start(c + 1); ++b) join_sink_tree(b);
  return node;
}

/// Runs task(0), ..., task(count - 1) on `count` threads, and rethrows the
/// first exception one of them threw (none may leave an OpenMP region).
template <class Task>
void on_team(int count, Task task) {
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(count));
#pragma omp parallel for num_threads(count) schedule(static, 1)
  for (int k = 0; k < count; ++k) {
    try {
      task(k);
    } catch (...) {
      failed[std::size_t(k)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

/// A range of vertex ids whose search has finished: its last time stamp,
/// and its vertices with an arc leaving it (where a search of a larger
/// range must look again).
struct searched_range {
  vertex_t lo = 0, hi = 0;
  std::int32_t time = 1;
  std::vector<vertex_t> edge;
  capacity_t sink_gain = 0;
  flow_stats counts;
};

/// A maximum preflow by the search trees, on `team` threads (see the file
/// comment): the parts' searches, then pairs of neighbouring ranges merged
/// level by level, each merge a search of the pair's union woken at its
/// halves' edges (so the seams are searched in parallel too: on a 128^3
/// volume cut in 16 slabs, one search from all 15 seams at once took 40 ms
/// of the 183 ms one thread takes in all), and last the whole graph.
/// Writes the minimum cut into source_side.
template <class Arc>
void search_trees(residual_graph<Arc>& g, std::vector<capacity_t>& excess, vertex_t source,
                  vertex_t sink, int team, flow_stats* stats, std::uint8_t* source_side) {
  using part_search = boykov_kolmogorov<Arc, true>;
  using whole_search = boykov_kolmogorov<Arc, false>;
  const int parts = int(std::max<vertex_t>(1, std::min<vertex_t>(team, g.n / least_part)));
  big_array<bk_node<Arc>> node = start_nodes(g, source, sink, parts);
  const auto finish = [](part_search& search, searched_range& r,
                         const std::vector<vertex_t>* among) {
    search.run();
    r.time = search.time();
    r.edge = search.leaving(among);
    r.sink_gain += search.sink_gain;
    r.counts.pushes += search.counts.pushes;
    r.counts.iterations += search.counts.iterations;
  };
  std::vector<searched_range> level(static_cast<std::size_t>(parts));
  if (parts > 1) {
    on_team(parts, [&](int k) {
      searched_range& r = level[std::size_t(k)];
      r.lo = vertex_t(std::int64_t(g.n) * k / parts);
      r.hi = vertex_t(std::int64_t(g.n) * (k + 1) / parts);
      part_search search(g, excess, node.get(), source, sink, r.lo, r.hi, 1);
      search.plant();
      finish(search, r, nullptr);
    });
  }
  while (level.size() > 2) {  // merge neighbours: (0, 1), (2, 3), ...; an odd last one waits
    std::vector<searched_range> next((level.size() + 1) / 2);
    if (level.size() % 2 != 0) next.back() = std::move(level.back());
    on_team(int(level.size() / 2), [&](int k) {
      searched_range &a = level[2 * std::size_t(k)], &b = level[2 * std::size_t(k) + 1];
      searched_range& r = next[std::size_t(k)];
      r.lo = a.lo;
      r.hi = b.hi;
      r.sink_gain = a.sink_gain + b.sink_gain;
      r.counts.pushes = a.counts.pushes + b.counts.pushes;
      r.counts.iterations = a.counts.iterations + b.counts.iterations;
      part_search search(g, excess, node.get(), source, sink, r.lo, r.hi,
                         std::max(a.time, b.time) + 1);
      search.wake(a.edge);
      search.wake(b.edge);
      a.edge.insert(a.edge.end(), b.edge.begin(), b.edge.end());
      finish(search, r, &a.edge);
    });
    level = std::move(next);
  }
  // The whole graph: from scratch on one part, else from the ranges' trees
  // (stamps older than its time only make its walks go on).
  std::int32_t time = 1;
  capacity_t gain = 0;
  for (const searched_range& r : level) {
    time = std::max(time, r.time);
    gain += r.sink_gain;
    stats->pushes += r.counts.pushes;
    stats->iterations += r.counts.iterations;
  }
  whole_search whole(g, excess, node.get(), source, sink, 0, g.n, time + 1);
  if (parts == 1) whole.plant();
  for (const searched_range& r : level) whole.wake(r.edge);
  whole.run();
  excess[sink] += gain + whole.sink_gain;
  stats->pushes += whole.counts.pushes;
  stats->iterations += whole.counts.iterations;
  whole.mark_cut(source_side);
}

/// Phase 2 for the search trees: excess is left at roots of S only (an
/// augmentation takes it from its root to the sink, and no path of the
/// search passes the source), and came to each root over its own arcs from
/// the source, which the frame saturated.  So each root sends what it kept
/// straight back over them, on `team` threads: no flow decomposition.  (At
/// 1024^2, return_excess took 30 ms, the search 80.)  Should excess be left
/// anywhere else, return_excess takes the rest.
template <class Arc>
void return_to_source(residual_graph<Arc>& g, std::vector<capacity_t>& excess, vertex_t source,
                      vertex_t sink, int team, flow_stats* stats) {
  bool stranded = false;
#pragma omp parallel for num_threads(team) schedule(static) \
    reduction(|| : stranded) if (g.n >= 2 * least_part)
  for (vertex_t v = 0; v < g.n; ++v) {
    if (v == source || v == sink || excess[v] <= 0) continue;
    // v's reverse copies are its in-arcs, the source's arcs to v among them
    for (Arc a = g.reverse_first[v]; a < g.first[v + 1] && excess[v] > 0; ++a) {
      residual_arc<Arc>& back = g.arcs[a];
      if (back.head != source || back.rescap <= 0) continue;
      const capacity_t d = std::min(excess[v], back.rescap);
      back.rescap -= d;
      g.arcs[back.reverse].rescap += d;
      excess[v] -= d;
    }
    stranded = stranded || excess[v] > 0;
  }
  if (stranded) return_excess(g, excess, source, sink, stats);
}

}  // namespace

void boykov_kolmogorov_flow(const flow_network& net, const flow_options& options,
                            flow_result* result, flow_stats* stats) {
  two_phase_flow(
      net, options, result, stats,
      [&](auto& g, std::vector<capacity_t>& excess, std::uint8_t* source_side) {
        search_trees(g, excess, net.source, net.sink, team_size(options.threads), stats,
                     source_side);
        return true;
      },
      [&](auto& g, std::vector<capacity_t>& excess) {
        return_to_source(g, excess, net.source, net.sink, team_size(options.threads), stats);
      });
}

}  // namespace matchflow::detail

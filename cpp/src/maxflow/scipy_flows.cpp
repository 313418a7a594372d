// SciPy's own maximum-flow algorithms, Edmonds-Karp and Dinic, as
// scipy.sparse.csgraph.maximum_flow runs them, so that a caller who names
// one gets the very flow SciPy returns (not just another maximum flow):
//
//  * SciPy's residual graph: each row's arcs sorted by head (stably, so
//    parallel arcs keep their stored order), merged with the row's entries
//    of the transpose; a column in both gives one arc with the input's
//    capacity, a column only in the transpose a reverse arc of capacity 0;
//  * each arc's reverse: the arc at the same place in the transpose's CSR
//    order;
//  * Edmonds-Karp (Edmonds & Karp 1972): breadth-first search from the
//    source in arc order, stopping at the first arc into the sink, then the
//    path's bottleneck pushed;
//  * Dinic (1970): a BFS level graph, then depth-first searches from the
//    source that keep each vertex's current arc, one path at a time.
//
// Not fast (SciPy's complexity): "auto" never picks these.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "matchflow/maxflow.hpp"

namespace matchflow {
namespace {

constexpr capacity_t unbounded = std::numeric_limits<capacity_t>::max();

/// SciPy's residual graph (its `_add_reverse_edges`) and arc reverses.
struct scipy_residual {
  std::vector<offset_t> ptr;
  std::vector<vertex_t> heads, tails;
  std::vector<capacity_t> caps;
  std::vector<offset_t> rev;
};

/// Each row's arcs by head, stably: (head, capacity) pairs in CSR order.
void sorted_rows(const flow_network& net, std::vector<vertex_t>& heads,
                 std::vector<capacity_t>& caps) {
  const offset_t m = net.n_arcs();
  std::vector<offset_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), offset_t(0));
  for (vertex_t u = 0; u < net.n; ++u)
    std::stable_sort(order.begin() + net.ptr[u], order.begin() + net.ptr[u + 1],
                     [&](offset_t a, offset_t b) { return net.heads[a] < net.heads[b]; });
  heads.resize(static_cast<std::size_t>(m));
  caps.resize(static_cast<std::size_t>(m));
  for (offset_t k = 0; k < m; ++k) {
    heads[k] = net.heads[order[k]];
    caps[k] = net.cap(order[k]);
  }
}

/// The transpose of a CSR pattern by a stable counting sort: for each
/// column, the positions (or tails) of its entries in row order.
std::vector<offset_t> transpose_offsets(vertex_t n, const std::vector<vertex_t>& heads) {
  std::vector<offset_t> start(static_cast<std::size_t>(n) + 1, 0);
  for (vertex_t h : heads) ++start[h + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  return start;
}

scipy_residual build_residual(const flow_network& net) {
  std::vector<vertex_t> a_heads;
  std::vector<capacity_t> a_caps;
  sorted_rows(net, a_heads, a_caps);
  const vertex_t n = net.n;
  std::vector<offset_t> t_ptr = transpose_offsets(n, a_heads);
  std::vector<vertex_t> t_rows(a_heads.size());
  {
    std::vector<offset_t> next(t_ptr.begin(), t_ptr.end() - 1);
    for (vertex_t u = 0; u < n; ++u)
      for (offset_t k = net.ptr[u]; k < net.ptr[u + 1]; ++k) t_rows[next[a_heads[k]]++] = u;
  }
  scipy_residual r;
  r.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (vertex_t u = 0; u < n; ++u) {
    offset_t a = net.ptr[u], a_end = net.ptr[u + 1], t = t_ptr[u], t_end = t_ptr[u + 1];
    while (a != a_end || t != t_end) {  // SciPy's merge: a column in both is one arc
      const bool take_a = a != a_end && (t == t_end || a_heads[a] <= t_rows[t]);
      const bool take_t = t != t_end && (a == a_end || t_rows[t] <= a_heads[a]);
      r.heads.push_back(take_a ? a_heads[a] : t_rows[t]);
      r.caps.push_back(take_a ? a_caps[a] : 0);
      r.tails.push_back(u);
      a += take_a;
      t += take_t;
    }
    r.ptr[u + 1] = static_cast<offset_t>(r.heads.size());
  }
  // The reverse of the arc at place k of the transpose's CSR order is the
  // arc that sits at place k of the graph's own order (SciPy's
  // `_make_edge_pointers`).
  std::vector<offset_t> start = transpose_offsets(n, r.heads);
  std::vector<offset_t> transposed(r.heads.size());
  for (offset_t e = 0; e < static_cast<offset_t>(r.heads.size()); ++e)
    transposed[start[r.heads[e]]++] = e;
  r.rev = std::move(transposed);
  return r;
}

/// Edmonds-Karp: shortest augmenting paths by BFS in arc order.
std::vector<capacity_t> edmonds_karp(const scipy_residual& r, vertex_t s, vertex_t t) {
  const vertex_t n = static_cast<vertex_t>(r.ptr.size() - 1);
  std::vector<capacity_t> flow(r.heads.size(), 0);
  std::vector<offset_t> pred(static_cast<std::size_t>(n));
  std::vector<vertex_t> queue(static_cast<std::size_t>(n));
  while (true) {
    std::fill(pred.begin(), pred.end(), -1);
    std::size_t head = 0, tail = 0;
    queue[tail++] = s;
    bool found = false;
    while (head != tail && !found) {
      const vertex_t u = queue[head++];
      for (offset_t e = r.ptr[u]; e < r.ptr[u + 1]; ++e) {
        const vertex_t v = r.heads[e];
        if (pred[v] != -1 || v == s || r.caps[e] <= flow[e]) continue;
        pred[v] = e;
        if (v == t) {
          found = true;
          break;
        }
        queue[tail++] = v;
      }
    }
    if (!found) return flow;
    capacity_t push = unbounded;
    for (vertex_t v = t; v != s; v = r.tails[pred[v]])
      push = std::min(push, r.caps[pred[v]] - flow[pred[v]]);
    for (vertex_t v = t; v != s; v = r.tails[pred[v]]) {
      flow[pred[v]] += push;
      flow[r.rev[pred[v]]] -= push;
    }
  }
}

/// Dinic's BFS level graph over arcs of positive residual capacity; false
/// when the sink is not reached.
bool level_graph(const scipy_residual& r, const std::vector<capacity_t>& residual, vertex_t s,
                 vertex_t t, std::vector<vertex_t>& level, std::vector<vertex_t>& queue) {
  std::fill(level.begin(), level.end(), -1);
  std::size_t head = 0, tail = 0;
  queue[tail++] = s;
  level[s] = 0;
  while (head != tail) {
    const vertex_t u = queue[head++];
    if (u == t) return true;
    for (offset_t e = r.ptr[u]; e < r.ptr[u + 1]; ++e) {
      const vertex_t v = r.heads[e];
      if (residual[e] > 0 && level[v] == -1) {
        level[v] = level[u] + 1;
        queue[tail++] = v;
      }
    }
  }
  return false;
}

/// One depth-first search of Dinic's blocking flow from the source, each
/// vertex resuming at its current arc (`current`); pushes the path it finds.
bool augment_path(const scipy_residual& r, vertex_t s, vertex_t t,
                  const std::vector<vertex_t>& level, std::vector<capacity_t>& residual,
                  std::vector<offset_t>& current, std::vector<capacity_t>& flow,
                  std::vector<std::pair<vertex_t, capacity_t>>& stack) {
  int top = 0;
  stack[0] = {s, unbounded};
  while (true) {
    vertex_t u = stack[top].first;
    const offset_t e = current[u];
    const vertex_t v = r.heads[e];
    if (residual[e] > 0 && level[v] == level[u] + 1) {
      const capacity_t push = std::min(stack[top].second, residual[e]);
      if (v == t) {
        for (; top >= 0; --top) {
          const offset_t a = current[stack[top].first];
          residual[a] -= push;
          residual[r.rev[a]] += push;
          flow[a] += push;
          flow[r.rev[a]] -= push;
        }
        return true;
      }
      stack[++top] = {v, push};
      continue;
    }
    while (current[u] == r.ptr[u + 1] - 1) {  // u's arcs are spent: back to its parent
      if (--top < 0) return false;
      u = stack[top].first;
    }
    ++current[u];
  }
}

std::vector<capacity_t> dinic(const scipy_residual& r, vertex_t s, vertex_t t) {
  const std::size_t n = r.ptr.size() - 1;
  std::vector<capacity_t> residual = r.caps, flow(r.heads.size(), 0);
  std::vector<vertex_t> level(n), queue(n);
  std::vector<offset_t> current(n);
  std::vector<std::pair<vertex_t, capacity_t>> stack(n + 1);
  while (level_graph(r, residual, s, t, level, queue)) {
    std::copy(r.ptr.begin(), r.ptr.end() - 1, current.begin());
    while (augment_path(r, s, t, level, residual, current, flow, stack)) {
    }
  }
  return flow;
}

/// A minimum cut's source side as the other methods give it: the vertices
/// that cannot reach the sink through arcs of positive residual capacity
/// (found backwards from the sink: w reaches v when the arc w -> v, the
/// reverse of v's arc e, has room).
void source_side_of(const scipy_residual& r, const std::vector<capacity_t>& flow, vertex_t t,
                    std::uint8_t* side) {
  const std::size_t n = r.ptr.size() - 1;
  std::fill(side, side + n, std::uint8_t(1));
  std::vector<vertex_t> stack{t};
  side[t] = 0;
  while (!stack.empty()) {
    const vertex_t v = stack.back();
    stack.pop_back();
    for (offset_t e = r.ptr[v]; e < r.ptr[v + 1]; ++e) {
      const vertex_t w = r.heads[e];
      const offset_t in = r.rev[e];
      if (side[w] && r.caps[in] > flow[in]) {
        side[w] = 0;
        stack.push_back(w);
      }
    }
  }
}

}  // namespace

status solve_maxflow_scipy(const flow_network& net, bool use_dinic, capacity_t* value,
                           std::uint8_t* source_side, offset_t* indptr, vertex_t* indices,
                           capacity_t* data, offset_t* nnz) noexcept {
  return guarded([&] {
    const scipy_residual r = build_residual(net);
    const std::vector<capacity_t> flow =
        use_dinic ? dinic(r, net.source, net.sink) : edmonds_karp(r, net.source, net.sink);
    *value = 0;
    for (offset_t e = r.ptr[net.source]; e < r.ptr[net.source + 1]; ++e) *value += flow[e];
    source_side_of(r, flow, net.sink, source_side);
    std::copy(r.ptr.begin(), r.ptr.end(), indptr);
    std::copy(r.heads.begin(), r.heads.end(), indices);
    std::copy(flow.begin(), flow.end(), data);
    *nnz = static_cast<offset_t>(flow.size());
    return status::ok;
  });
}

}  // namespace matchflow

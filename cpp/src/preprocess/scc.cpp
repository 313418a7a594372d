// Strongly connected components: Tarjan's algorithm (SIAM J. Comput. 1,
// 1972), with the depth-first search driven by an explicit stack so that
// paths of millions of vertices (a long chain of blocks in a block
// triangular form) cannot overflow the call stack.
//
// State per vertex: order[v], its preorder number (-1 while unvisited), and
// low[v], the smallest preorder number reachable from v's subtree through at
// most one non-tree arc into a vertex still on Tarjan's stack.  A vertex is
// on Tarjan's stack exactly while it is visited and has no component yet, so
// no separate flag is kept.  The search stack holds (vertex, next arc) pairs:
// the arc cursor is what a recursive version keeps in its frame.
//
// A component is emitted when its root v finishes with low[v] == order[v];
// every component reachable from it has been emitted before, so ids come out
// in reverse topological order (component 0 is a sink).
#include <algorithm>
#include <vector>

#include "matchflow/preprocess.hpp"
#include "preprocess_cpu.hpp"

namespace matchflow {
namespace detail {

vertex_t tarjan_scc(const adjacency_view& g, vertex_t* component) {
  const vertex_t n = g.n;
  std::vector<vertex_t> order(static_cast<std::size_t>(n), -1);
  std::vector<vertex_t> low(static_cast<std::size_t>(n));
  std::vector<vertex_t> tarjan_stack;   // visited vertices without a component
  std::vector<vertex_t> search_vertex;  // depth-first search path
  std::vector<offset_t> search_arc;     // next arc of each vertex on the path
  tarjan_stack.reserve(static_cast<std::size_t>(n));
  std::fill(component, component + n, vertex_t(-1));
  vertex_t counter = 0, n_components = 0;

  auto visit = [&](vertex_t v) {
    order[v] = low[v] = counter++;
    tarjan_stack.push_back(v);
    search_vertex.push_back(v);
    search_arc.push_back(g.ptr[v]);
  };
  for (vertex_t root = 0; root < n; ++root) {
    if (order[root] >= 0) continue;
    visit(root);
    while (!search_vertex.empty()) {
      const vertex_t v = search_vertex.back();
      offset_t& arc = search_arc.back();
      const offset_t end = g.ptr[v + 1];
      // Scan v's arcs until one leads to an unvisited vertex (a tree arc).
      vertex_t next = -1;
      while (arc < end) {
        const vertex_t w = g.adj[arc++];
        if (order[w] < 0) {
          next = w;
          break;
        }
        if (component[w] < 0) low[v] = std::min(low[v], order[w]);  // w on the stack
      }
      if (next >= 0) {
        visit(next);  // invalidates `arc`; it is not used again
        continue;
      }
      // v is finished: pop it from the search path, emit its component if
      // it is a root, and pass its low link to its parent.
      search_vertex.pop_back();
      search_arc.pop_back();
      if (low[v] == order[v]) {
        vertex_t w;
        do {
          w = tarjan_stack.back();
          tarjan_stack.pop_back();
          component[w] = n_components;
        } while (w != v);
        ++n_components;
      }
      if (!search_vertex.empty()) {
        const vertex_t parent = search_vertex.back();
        low[parent] = std::min(low[parent], low[v]);
      }
    }
  }
  return n_components;
}

}  // namespace detail

status strongly_connected_components(const adjacency_view& g, vertex_t* component,
                                     vertex_t* n_components) noexcept {
  return guarded([&] {
    *n_components = detail::tarjan_scc(g, component);
    return status::ok;
  });
}

}  // namespace matchflow

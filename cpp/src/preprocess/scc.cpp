// Strongly connected components: Tarjan's algorithm (SIAM J. Comput. 1,
// 1972) in Pearce's space-efficient form (D. J. Pearce, A space-efficient
// algorithm for finding strongly connected components, Inf. Process. Lett.
// 116, 2016: PEA_FIND_SCC2), with the depth-first search driven by an
// explicit stack so that paths of millions of vertices (a long chain of
// blocks in a block triangular form) cannot overflow the call stack.
//
// One int32 per vertex, rindex, does the work of Tarjan's preorder number,
// low link and on-stack flag: 0 while unvisited; while v's component is
// open, the smallest preorder number v is known to reach; once the component
// is closed, its id counted down from n - 1.  Closing a component decrements
// the preorder counter for each of its vertices, so open values stay below
// every closed id and one comparison, rindex[w] < rindex[v], is both "w is
// open" and Tarjan's low-link update (Pearce, section 3).  Each arc costs one
// random read, of rindex[w], where Tarjan's form reads two or three arrays.
// rindex lives in the output array; the ids are turned around at the end.
//
// A component closes when its root finishes, after every component it
// reaches, so ids in closing order are in reverse topological order
// (component 0 is a sink).
#include <algorithm>
#include <vector>

#include "matchflow/preprocess.hpp"
#include "preprocess_cpu.hpp"

namespace matchflow {
namespace detail {
namespace {

struct frame {
  vertex_t v;
  bool root;     // no arc found yet into an earlier open vertex
  offset_t arc;  // next arc of v to look at
};

}  // namespace

vertex_t tarjan_scc(const adjacency_view& g, vertex_t* component) {
  const vertex_t n = g.n;
  vertex_t* rindex = component;
  std::fill(rindex, rindex + n, vertex_t(0));
  std::vector<frame> search;   // the depth-first search path
  std::vector<vertex_t> open;  // finished vertices whose component is open
  vertex_t index = 1, next_id = n - 1;

  for (vertex_t start = 0; start < n; ++start) {
    if (rindex[start] != 0) continue;
    rindex[start] = index++;
    search.push_back({start, true, g.ptr[start]});
    while (!search.empty()) {
      frame& f = search.back();
      const vertex_t v = f.v;
      const offset_t end = g.ptr[v + 1];
      bool descended = false;
      for (; f.arc < end; ++f.arc) {
        const vertex_t w = g.adj[f.arc];
        if (rindex[w] == 0) {  // tree arc: visit w; this arc is looked at again after
          rindex[w] = index++;
          search.push_back({w, true, g.ptr[w]});  // invalidates f
          descended = true;
          break;
        }
        if (rindex[w] < rindex[v]) {
          rindex[v] = rindex[w];
          f.root = false;
        }
      }
      if (descended) continue;
      const bool root = f.root;
      search.pop_back();
      if (!root) {
        open.push_back(v);
        continue;
      }
      // v is the root of a component: close it (v and the open vertices
      // above it, all with rindex >= rindex[v]).
      --index;
      while (!open.empty() && rindex[v] <= rindex[open.back()]) {
        rindex[open.back()] = next_id;
        open.pop_back();
        --index;
      }
      rindex[v] = next_id--;
    }
  }
  // Closed ids run n - 1, n - 2, ... in closing order; count from 0 instead.
  for (vertex_t v = 0; v < n; ++v) component[v] = n - 1 - rindex[v];
  return n - 1 - next_id;
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

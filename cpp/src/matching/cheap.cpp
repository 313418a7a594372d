// Initial matchings.
//
// cheap:        the greedy "cheap matching" every paper here initialises with
//               (paper 000, section IV; paper 004, section 4): each row, in
//               order, takes its first unmatched column.  Rows drive it (the
//               papers let columns drive; the rule is symmetric) because the
//               row -> column pattern is the one the caller hands over: when
//               this matching is already perfect, no transpose is ever built.
// karp_sipser:  Karp-Sipser's rule restricted to columns: a column left with
//               exactly one unmatched neighbour row is matched to it first
//               (that choice is always part of some maximum matching); when
//               none is left, fall back to the greedy choice.
//
// Measured (16-core device, benchmarks/results/cpu_matching_h100host_run2):
// Karp-Sipser is correct (tested against SciPy by cardinality after every
// method) and on R-MAT scale 22 alone reaches the maximum, but it is
// sequential and random-access bound: 1.1-2.0 s on 4M-vertex graphs vs
// 0.12 s for the sequential greedy pass and 0.02 s for the parallel one.
// It pays for PR and P-DBFS, not for MS-BFS-Graft; the Python layer picks
// the default per method (_default_init in python/matchflow/_matching.py).
#include <atomic>
#include <vector>

#include "matching_cpu.hpp"
#include "openmp.hpp"


namespace matchflow::detail {
namespace {

vertex_t greedy(const bipartite_view& g, vertex_t* col4row, vertex_t* row4col) {
  vertex_t size = 0;
  for (vertex_t r = 0; r < g.n_rows(); ++r) {
    for (offset_t e = g.rows.ptr[r]; e < g.rows.ptr[r + 1]; ++e) {
      const vertex_t c = g.rows.adj[e];
      if (row4col[c] == -1) {
        row4col[c] = r;
        col4row[r] = c;
        ++size;
        break;
      }
    }
  }
  return size;
}

/// The greedy rule with all rows at once: a row takes its first column
/// that no other row has taken (CAS on row4col).  Which row wins a
/// contested column depends on timing; the result is a valid matching all the
/// same.  Used in front of the parallel methods, where the sequential pass
/// was a large share of the run on 16 cores.
vertex_t parallel_greedy(const bipartite_view& g, int threads, vertex_t* col4row,
                         vertex_t* row4col) {
  vertex_t size = 0;
  const int team = team_size(threads);
#pragma omp parallel for num_threads(team) schedule(dynamic, 4096) reduction(+ : size)
  for (vertex_t r = 0; r < g.n_rows(); ++r) {
    for (offset_t e = g.rows.ptr[r]; e < g.rows.ptr[r + 1]; ++e) {
      vertex_t* slot = &row4col[g.rows.adj[e]];
      vertex_t none = -1;
      if (__atomic_load_n(slot, __ATOMIC_RELAXED) == -1 &&
          __atomic_compare_exchange_n(slot, &none, r, false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        col4row[r] = g.rows.adj[e];
        ++size;
        break;
      }
    }
  }
  return size;
}

/// First unmatched row of column c, or -1.
vertex_t free_neighbour(const bipartite_view& g, const vertex_t* col4row, vertex_t c) {
  for (offset_t e = g.cols.ptr[c]; e < g.cols.ptr[c + 1]; ++e) {
    if (col4row[g.cols.adj[e]] == -1) return g.cols.adj[e];
  }
  return -1;
}

vertex_t karp_sipser(const bipartite_view& g, vertex_t* col4row, vertex_t* row4col) {
  // degree[c] = number of edges from c to rows still unmatched (duplicates
  // counted, which only delays a column's entry into the degree-one queue).
  std::vector<offset_t> degree(g.n_cols());
  std::vector<vertex_t> ones;
  for (vertex_t c = 0; c < g.n_cols(); ++c) {
    degree[c] = g.cols.ptr[c + 1] - g.cols.ptr[c];
    if (degree[c] == 1) ones.push_back(c);
  }
  vertex_t size = 0;
  auto match = [&](vertex_t r, vertex_t c) {
    col4row[r] = c;
    row4col[c] = r;
    ++size;
    for (offset_t e = g.rows.ptr[r]; e < g.rows.ptr[r + 1]; ++e) {
      const vertex_t d = g.rows.adj[e];
      if (row4col[d] == -1 && --degree[d] == 1) ones.push_back(d);
    }
  };
  vertex_t next = 0;  // scan position for the greedy fallback
  while (true) {
    while (!ones.empty()) {
      const vertex_t c = ones.back();
      ones.pop_back();
      if (row4col[c] != -1) continue;
      const vertex_t r = free_neighbour(g, col4row, c);
      if (r != -1) match(r, c);
    }
    while (next < g.n_cols() && row4col[next] != -1) ++next;
    if (next == g.n_cols()) break;
    const vertex_t r = free_neighbour(g, col4row, next);
    if (r != -1) match(r, next);
    ++next;
  }
  return size;
}

}  // namespace

vertex_t initial_matching(const bipartite_view& g, matching_init init, vertex_t* col4row,
                          vertex_t* row4col, int threads) {
  switch (init) {
    case matching_init::none:
      return 0;
    case matching_init::cheap:
      return threads == 1 ? greedy(g, col4row, row4col)
                          : parallel_greedy(g, threads, col4row, row4col);
    case matching_init::karp_sipser:
      return karp_sipser(g, col4row, row4col);
  }
  return 0;
}

}  // namespace matchflow::detail

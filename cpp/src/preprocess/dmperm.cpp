// Dulmage-Mendelsohn decomposition with CSparse cs_dmperm's conventions
// (Davis, Direct Methods for Sparse Linear Systems, 2006, section 7.4,
// pp. 122-127), computed from a maximum matching given by the caller.
//
// Coarse decomposition.  With a maximum matching, every vertex reachable by
// an alternating path from an unmatched column is matched (else the path
// would augment), and likewise from an unmatched row; the two reachable sets
// are disjoint for the same reason.  So
//   C0 = unmatched columns, R1/C1 = rows/columns reached from C0,
//   R0 = unmatched rows,    R3/C3 = columns/rows reached from R0,
//   R2/C2 = the rest (perfectly matched to each other),
// and A(p, q) with rows [R1 R2 R3 R0] and columns [C0 C1 C2 C3] is block
// upper triangular: a row outside R1 with an entry in C0 or C1 would have
// been reached from C0, a column outside C3 with an entry in R3 or R0 from R0.
//
// Fine decomposition.  The square part A(R2, C2), with each row placed on
// the diagonal beside its matched column, splits into irreducible diagonal
// blocks: the strongly connected components of its graph (row i -> row
// matched to j, for each entry (i, j), j in C2), in topological order
// (section 7.3; Pothen & Fan 1990).  Tarjan emits them in reverse
// topological order, so block b takes component n_components - 1 - b.  On a
// large square part with a device given, the component of one pivot vertex
// is found on the GPU first and contracted (pivot_scc.cpp): Tarjan then
// walks the rest only.
//
// Fine blocks, as cs_dmperm numbers them: one leading block A(R1, [C0 C1])
// when C0 or C1 is non-empty, the components of the square part, one
// trailing block A([R3 R0], C3) when R3 or R0 is non-empty.
#include <chrono>
#include <cstdint>
#include <vector>

#include "../openmp.hpp"
#include "../transpose.hpp"
#include "matchflow/detail/assert.hpp"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/preprocess.hpp"
#include "matchflow/timing.hpp"
#include "preprocess_cpu.hpp"

namespace matchflow {
namespace {

using detail::clock_type;
using detail::seconds_since;

// Coarse set of each vertex.  Rows: R0 R1 R2 R3; columns: C0 C1 C2 C3.
enum coarse : std::uint8_t { unmatched = 0, reached_from_c0 = 1, square = 2, reached_from_r0 = 3 };

// Frontiers smaller than this are expanded by one thread, and square parts
// with fewer pairs than parallel_min_pairs are built by one: a parallel
// region costs microseconds on an idle machine, but milliseconds when the
// cores are shared.
constexpr std::size_t parallel_min_frontier = std::size_t(1) << 14;
constexpr vertex_t parallel_min_pairs = vertex_t(1) << 16;
// How far ahead in the frontier the search prefetches a vertex's offsets.
constexpr std::int64_t prefetch_distance = 16;

// Takes vertex w of the other side for the search: true for exactly one
// caller per w.  With Concurrent, the set bytes are raced by the threads of
// one level and a compare-and-swap decides.
template <bool Concurrent>
inline bool claim(std::uint8_t* set, vertex_t w, std::uint8_t mark) {
  if constexpr (Concurrent) {
    std::uint8_t expected = square;
    if (__atomic_load_n(&set[w], __ATOMIC_RELAXED) != square) return false;
    return __atomic_compare_exchange_n(&set[w], &expected, mark, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
  } else {
    if (set[w] != square) return false;
    set[w] = mark;
    return true;
  }
}

// One step of the alternating search from v: each entry leads to a vertex w
// of the other side, its matching edge back to mate[w] on the "from" side;
// both get `mark`, and mate[w] joins the next frontier.  Only vertices w
// still in `square` are taken, so a non-maximum matching gives a wrong
// answer but never a wrong access.
template <bool Concurrent, class Push>
void expand(const adjacency_view& adj, const vertex_t* mate, std::uint8_t* from_set,
            std::uint8_t* other_set, std::uint8_t mark, vertex_t v, Push&& push) {
  for (offset_t e = adj.ptr[v]; e < adj.ptr[v + 1]; ++e) {
    const vertex_t w = adj.adj[e];
    if (!claim<Concurrent>(other_set, w, mark)) continue;
    // mate[w] is reached only through its matching edge, so once, as w was
    // claimed once: no test (one random read less per entry).  Mates that are
    // not one-to-one make a vertex expand twice, nothing worse.
    const vertex_t v2 = mate[w];
    from_set[v2] = mark;
    push(v2);
  }
}

// Alternating breadth-first search from every unmatched vertex of one side
// ("from") over `adj` (from -> other side), level by level; a level with a
// large frontier is expanded by the whole team, each thread collecting its
// part of the next frontier.  The reached sets do not depend on the order.
void alternating_bfs(const adjacency_view& adj, const vertex_t* mate, std::uint8_t* from_set,
                     std::uint8_t* other_set, std::uint8_t mark, int team) {
  std::vector<vertex_t> frontier, next;
  for (vertex_t v = 0; v < adj.n; ++v) {
    if (from_set[v] == unmatched) frontier.push_back(v);
  }
  while (!frontier.empty()) {
    next.clear();
    const std::int64_t size = static_cast<std::int64_t>(frontier.size());
    if (team == 1 || frontier.size() < parallel_min_frontier) {
      for (std::int64_t f = 0; f < size; ++f) {
        // The frontier is in random order: fetch a later vertex's offsets
        // now, so that several misses are in flight at once.
        if (f + prefetch_distance < size) {
          __builtin_prefetch(&adj.ptr[frontier[f + prefetch_distance]]);
        }
        expand<false>(adj, mate, from_set, other_set, mark, frontier[f],
                      [&](vertex_t u) { next.push_back(u); });
      }
    } else {
#pragma omp parallel num_threads(team)
      {
        std::vector<vertex_t> mine;
#pragma omp for schedule(dynamic, 1024) nowait
        for (std::int64_t f = 0; f < size; ++f) {
          if (f + prefetch_distance < size) {
            __builtin_prefetch(&adj.ptr[frontier[f + prefetch_distance]]);
          }
          expand<true>(adj, mate, from_set, other_set, mark, frontier[f],
                       [&](vertex_t u) { mine.push_back(u); });
        }
#pragma omp critical(dmperm_frontier)
        next.insert(next.end(), mine.begin(), mine.end());
      }
    }
    frontier.swap(next);
  }
}

// Sets rr, cc and the coarse p, q: matched pairs in the order of their
// rows, unmatched rows and columns in increasing order.  False (nothing
// written) when the sets do not pair up, which only a matching that is not
// maximum can cause.
bool coarse_permutation(vertex_t m, vertex_t n, const vertex_t* col4row,
                        const std::uint8_t* row_set, const std::uint8_t* col_set, dm_result* out) {
  vertex_t col_count[4] = {0, 0, 0, 0}, row_count[4] = {0, 0, 0, 0};
  for (vertex_t j = 0; j < n; ++j) ++col_count[col_set[j]];
  for (vertex_t i = 0; i < m; ++i) ++row_count[row_set[i]];
  for (int k = 1; k < 4; ++k) {
    if (row_count[k] != col_count[k]) return false;
  }
  for (int k = 0; k < 4; ++k) out->cc[k + 1] = out->cc[k] + col_count[k];
  // Rows R1, R2, R3 pair with C1, C2, C3; R0 comes last.
  for (int k = 1; k < 4; ++k) out->rr[k] = out->rr[k - 1] + row_count[k];
  out->rr[4] = out->rr[3] + row_count[unmatched];
  vertex_t next_col[4] = {out->cc[0], out->cc[1], out->cc[2], out->cc[3]};
  vertex_t next_row[4] = {out->rr[3], out->rr[0], out->rr[1], out->rr[2]};
  for (vertex_t i = 0; i < m; ++i) {
    const int set = row_set[i];
    out->p[next_row[set]++] = i;
    if (set != unmatched) out->q[next_col[set]++] = col4row[i];
  }
  for (vertex_t j = 0; j < n; ++j) {
    if (col_set[j] == unmatched) out->q[next_col[unmatched]++] = j;
  }
  return true;
}

// The square part's graph on its ns pairs: pair k (row p[r0 + k], column
// q[c0 + k]) -> pair l for each entry (p[r0 + k], q[c0 + l]), l != k.  The
// pairs are in row order, so the rows are read in increasing order; each
// entry costs one random read, of `pair_of_col` (the pair of a C2 column,
// -1 for the other columns).
detail::adjacency_storage square_graph(const adjacency_view& rows, const vertex_t* p_square,
                                       const vertex_t* q_square, vertex_t ns, vertex_t n_cols,
                                       int team) {
  std::vector<vertex_t> pair_of_col(static_cast<std::size_t>(n_cols), -1);
  const bool parallel = team > 1 && ns >= parallel_min_pairs;
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (vertex_t k = 0; k < ns; ++k) pair_of_col[q_square[k]] = k;
  detail::adjacency_storage graph;
  graph.ptr.assign(static_cast<std::size_t>(ns) + 1, 0);
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (vertex_t k = 0; k < ns; ++k) {
    const vertex_t i = p_square[k];
    offset_t count = 0;
    for (offset_t e = rows.ptr[i]; e < rows.ptr[i + 1]; ++e) {
      const vertex_t l = pair_of_col[rows.adj[e]];
      count += l >= 0 && l != k;
    }
    graph.ptr[k + 1] = count;
  }
  for (vertex_t k = 0; k < ns; ++k) graph.ptr[k + 1] += graph.ptr[k];
  graph.adj.resize(static_cast<std::size_t>(graph.ptr[ns]));
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (vertex_t k = 0; k < ns; ++k) {
    const vertex_t i = p_square[k];
    offset_t at = graph.ptr[k];
    for (offset_t e = rows.ptr[i]; e < rows.ptr[i + 1]; ++e) {
      const vertex_t l = pair_of_col[rows.adj[e]];
      if (l >= 0 && l != k) graph.adj[at++] = l;
    }
  }
  return graph;
}

// Reorders the square part's pairs by block (a stable counting sort) and
// returns the block starts (n_blocks + 1 of them, relative to the part).
std::vector<vertex_t> order_by_block(vertex_t* p_square, vertex_t* q_square, vertex_t ns,
                                     const vertex_t* component, vertex_t n_components) {
  std::vector<vertex_t> start(static_cast<std::size_t>(n_components) + 1, 0);
  for (vertex_t k = 0; k < ns; ++k) ++start[n_components - component[k]];
  for (vertex_t b = 0; b < n_components; ++b) start[b + 1] += start[b];
  std::vector<vertex_t> next(start.begin(), start.end() - 1);
  std::vector<vertex_t> p_old(p_square, p_square + ns), q_old(q_square, q_square + ns);
  for (vertex_t k = 0; k < ns; ++k) {
    const vertex_t at = next[n_components - 1 - component[k]]++;
    p_square[at] = p_old[k];
    q_square[at] = q_old[k];
  }
  return start;
}

// Fine block boundaries r, s (cs_dmperm's numbering: see the file header).
void fine_blocks(vertex_t m, vertex_t n, const std::vector<vertex_t>& square_start,
                 dm_result* out) {
  vertex_t nb = 0;
  out->r[0] = out->s[0] = 0;
  if (out->cc[2] > 0) ++nb;  // leading block A(R1, [C0 C1]); it ends where the next starts
  for (std::size_t b = 0; b + 1 < square_start.size(); ++b, ++nb) {
    out->r[nb] = out->rr[1] + square_start[b];
    out->s[nb] = out->cc[2] + square_start[b];
  }
  if (out->rr[2] < m) {  // trailing block A([R3 R0], C3)
    out->r[nb] = out->rr[2];
    out->s[nb] = out->cc[3];
    ++nb;
  }
  out->r[nb] = m;
  out->s[nb] = n;
  out->n_blocks = nb;
}

// Coarse set of every row and column: unmatched, then the two alternating
// searches (the one from C0 needs the column orientation, built if absent).
void mark_coarse_sets(const bipartite_view& g, const vertex_t* col4row, const vertex_t* row4col,
                      int threads, std::uint8_t* row_set, std::uint8_t* col_set) {
  const vertex_t m = g.n_rows(), n = g.n_cols();
  const int team = detail::team_size(threads);
  bool any_unmatched_col = false, any_unmatched_row = false;
  for (vertex_t i = 0; i < m; ++i) {
    row_set[i] = col4row[i] < 0 ? unmatched : square;
    any_unmatched_row |= col4row[i] < 0;
  }
  for (vertex_t j = 0; j < n; ++j) {
    col_set[j] = row4col[j] < 0 ? unmatched : square;
    any_unmatched_col |= row4col[j] < 0;
  }
  if (any_unmatched_col) {
    detail::adjacency_storage built;
    adjacency_view cols = g.cols;
    if (!g.has_cols()) {
      built = detail::transpose(g.rows, n, threads);
      cols = built.view();
    }
    alternating_bfs(cols, col4row, col_set, row_set, reached_from_c0, team);
  }
  if (any_unmatched_row) {
    alternating_bfs(g.rows, row4col, row_set, col_set, reached_from_r0, team);
  }
}

/// The square part's strongly connected components (ids as tarjan_scc
/// gives them); with a device, the component of its pivot vertex first on
/// the GPU (cuda::gpu_pivot_scc), contracted before Tarjan runs.
status square_components(const adjacency_view& graph, int threads, int device, vertex_t* component,
                         vertex_t* n_components, dm_stats* stats) {
  if (device < 0) {
    *n_components = detail::tarjan_scc(graph, component);
    return status::ok;
  }
  std::vector<std::uint8_t> member(static_cast<std::size_t>(graph.n));
  pivot_scc_result found;
  const status st = cuda::gpu_pivot_scc(graph, device, member.data(), &found);
  if (st != status::ok) return st;
  if (stats) {
    stats->scc_pivot_size = found.size;
    stats->scc_pivot_levels = found.levels;
  }
  *n_components = found.size > 1 ? detail::contracted_scc(graph, member.data(), threads, component)
                                 : detail::tarjan_scc(graph, component);
  return status::ok;
}

status decompose(const bipartite_view& g, const vertex_t* col4row, const vertex_t* row4col,
                 int threads, int scc_device, std::int64_t scc_device_min, dm_result* out,
                 dm_stats* stats) {
  const vertex_t m = g.n_rows(), n = g.n_cols();
  auto start = clock_type::now();
  std::vector<std::uint8_t> row_set(static_cast<std::size_t>(m));
  std::vector<std::uint8_t> col_set(static_cast<std::size_t>(n));
  mark_coarse_sets(g, col4row, row4col, threads, row_set.data(), col_set.data());
  if (!coarse_permutation(m, n, col4row, row_set.data(), col_set.data(), out)) {
    return fail(status::invalid_input, "dulmage_mendelsohn: the matching given is not maximum");
  }
  if (stats) stats->seconds_coarse = seconds_since(start);

  start = clock_type::now();
  const vertex_t ns = out->rr[2] - out->rr[1];
  vertex_t* p_square = out->p + out->rr[1];
  vertex_t* q_square = out->q + out->cc[2];
  std::vector<vertex_t> component(static_cast<std::size_t>(ns));
  vertex_t n_components = 0;
  {
    const detail::adjacency_storage graph =
        square_graph(g.rows, p_square, q_square, ns, n, detail::team_size(threads));
    if (stats) stats->seconds_graph = seconds_since(start);
    start = clock_type::now();
    const status st =
        square_components(graph.view(), threads, ns >= scc_device_min ? scc_device : -1,
                          component.data(), &n_components, stats);
    if (st != status::ok) return st;
    if (stats) stats->seconds_scc = seconds_since(start);
  }
  start = clock_type::now();
  const std::vector<vertex_t> square_start =
      order_by_block(p_square, q_square, ns, component.data(), n_components);
  fine_blocks(m, n, square_start, out);
  if (stats) stats->seconds_fine = seconds_since(start);
  return status::ok;
}

}  // namespace

status dulmage_mendelsohn(const bipartite_view& g, const vertex_t* col4row, const vertex_t* row4col,
                          int threads, int scc_device, std::int64_t scc_device_min, dm_result* out,
                          dm_stats* stats) noexcept {
  // A maximum matching of g, both ways (the Python layer computed it).
  MATCHFLOW_ASSERT(g.rows.ptr != nullptr && out != nullptr && threads >= 0);
  MATCHFLOW_ASSERT((g.rows.n == 0 || col4row != nullptr) && (g.cols.n == 0 || row4col != nullptr));
  return guarded([&] {
    return decompose(g, col4row, row4col, threads, scc_device, scc_device_min, out, stats);
  });
}

}  // namespace matchflow

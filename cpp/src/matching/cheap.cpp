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
//               none is left, fall back to the greedy choice.  Sequential
//               over both orientations when the column one is there; else
//               over the rows alone, in parallel (row_karp_sipser, for
//               P-DBFS, which needs no transpose).
//
// Karp-Sipser on R-MAT alone reaches the maximum, but it is sequential and
// random-access bound, about ten times the greedy pass (NOTES.md, "CPU
// constants"): it pays for PR and P-DBFS, not for MS-BFS-Graft; the Python
// layer picks the default per method (_default_init in _matching.py).
#include <atomic>
#include <cstdint>
#include <memory>
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
          __atomic_compare_exchange_n(slot, &none, r, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
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

/// Karp-Sipser over the row orientation alone, in parallel (no transpose).
///
/// The column-restricted rule needs, for each unmatched column, how many
/// unmatched rows it still has and, when that drops to one, which row that
/// is.  Both fit in one 64-bit word per column, kept from the row side: the
/// low half counts the column's edges to unmatched rows, the high half is
/// the sum of those rows' ids modulo 2^32.  An edge from row r adds
/// (r << 32) + 1 and matching r subtracts it again for each edge of r (one
/// atomic add each: the count never carries or borrows into the sum, whose
/// own overflow leaves the word); a column whose count reaches 1 has its
/// last row in the high half.  Duplicate edges count (and add r) twice, so
/// the invariant holds for them too.  (Assumes < 2^32 edges per column.)
///
/// Parallel scheme (after the parallel Karp-Sipser of Azad, Halappanavar et
/// al., IPDPS 2012): first every degree-one column, then every unmatched row
/// takes the free column of least remaining degree (the greedy fallback);
/// each match follows the degree-one columns it creates at once, on the
/// same thread (a local stack).  A pair is taken by a CAS on the row, then
/// on the column (the row is given back if the column was lost); count and
/// sum change together, by one atomic add.
/// Threads can make a degree-one column lose its row to another column
/// first; that only costs size (P-DBFS completes the matching).
class row_karp_sipser {
 public:
  row_karp_sipser(const bipartite_view& g, vertex_t* col4row, vertex_t* row4col)
      : g_(g),
        col4row_(col4row),
        row4col_(row4col),
        word_(std::make_unique<std::atomic<std::uint64_t>[]>(std::size_t(g.n_cols()))) {}

  vertex_t run(int threads) {
    const vertex_t m = g_.n_rows(), n = g_.n_cols();
    const int team = team_size(threads);
    vertex_t size = 0;
#pragma omp parallel num_threads(team) reduction(+ : size)
    {
#pragma omp for schedule(static)
      for (vertex_t c = 0; c < n; ++c) word_[c].store(0, std::memory_order_relaxed);
#pragma omp for schedule(dynamic, 4096)
      for (vertex_t r = 0; r < m; ++r) {
        for (offset_t e = g_.rows.ptr[r]; e < g_.rows.ptr[r + 1]; ++e) {
          word_[g_.rows.adj[e]].fetch_add(edge(r), std::memory_order_relaxed);
        }
      }
      std::vector<vertex_t> stack;
#pragma omp for schedule(dynamic, 4096)
      for (vertex_t c = 0; c < n; ++c) {
        if (degree(word_[c].load(std::memory_order_relaxed)) == 1) {
          stack.push_back(c);
          size += follow(stack);
        }
      }
#pragma omp for schedule(dynamic, 1024)
      for (vertex_t r = 0; r < m; ++r) size += fallback(r, stack);
    }
    return size;
  }

 private:
  static std::uint64_t edge(vertex_t r) { return (std::uint64_t(r) << 32) + 1; }
  static std::uint64_t degree(std::uint64_t w) { return w & 0xffffffffu; }
  static vertex_t last_row(std::uint64_t w) { return vertex_t(w >> 32); }

  vertex_t mate_of_col(vertex_t c) const { return __atomic_load_n(&row4col_[c], __ATOMIC_RELAXED); }
  bool cas(vertex_t* slot, vertex_t to) {
    vertex_t none = -1;
    return __atomic_load_n(slot, __ATOMIC_RELAXED) == -1 &&
           __atomic_compare_exchange_n(slot, &none, to, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }

  /// Takes the pair (r, c) if both are free; then removes r from its columns.
  bool take(vertex_t r, vertex_t c, std::vector<vertex_t>& stack) {
    if (!cas(&col4row_[r], c)) return false;
    if (!cas(&row4col_[c], r)) {
      __atomic_store_n(&col4row_[r], vertex_t{-1}, __ATOMIC_RELAXED);
      return false;
    }
    for (offset_t e = g_.rows.ptr[r]; e < g_.rows.ptr[r + 1]; ++e) {
      const vertex_t d = g_.rows.adj[e];
      if (mate_of_col(d) != -1) continue;  // matched columns are out of the rule
      const std::uint64_t seen = word_[d].fetch_sub(edge(r), std::memory_order_relaxed);
      if (degree(seen) == 2) stack.push_back(d);  // now degree one
    }
    return true;
  }

  /// Matches the degree-one columns on the stack and those they create.
  vertex_t follow(std::vector<vertex_t>& stack) {
    vertex_t size = 0;
    while (!stack.empty()) {
      const vertex_t c = stack.back();
      stack.pop_back();
      if (mate_of_col(c) != -1) continue;
      const std::uint64_t w = word_[c].load(std::memory_order_relaxed);
      if (degree(w) == 1 && take(last_row(w), c, stack)) ++size;
    }
    return size;
  }

  /// Greedy step for row r: its free column of least remaining degree.
  vertex_t fallback(vertex_t r, std::vector<vertex_t>& stack) {
    while (__atomic_load_n(&col4row_[r], __ATOMIC_RELAXED) == -1) {
      vertex_t best = -1;
      std::uint64_t best_degree = ~std::uint64_t{0};
      for (offset_t e = g_.rows.ptr[r]; e < g_.rows.ptr[r + 1]; ++e) {
        const vertex_t c = g_.rows.adj[e];
        if (mate_of_col(c) != -1) continue;
        const std::uint64_t d = degree(word_[c].load(std::memory_order_relaxed));
        if (d < best_degree) {
          best = c;
          best_degree = d;
          if (d <= 1) break;
        }
      }
      if (best == -1) return 0;
      if (take(r, best, stack)) return 1 + follow(stack);
    }
    return 0;
  }

  const bipartite_view& g_;
  vertex_t* col4row_;
  vertex_t* row4col_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> word_;  // sync: atomic add (sum << 32 | count)
};

}  // namespace

vertex_t initial_matching(const bipartite_view& g, matching_init init, vertex_t* col4row,
                          vertex_t* row4col, int threads) {
  switch (init) {
    case matching_init::none: return 0;
    case matching_init::cheap:
      return threads == 1 ? greedy(g, col4row, row4col)
                          : parallel_greedy(g, threads, col4row, row4col);
    case matching_init::karp_sipser:
      if (!g.has_cols()) return row_karp_sipser(g, col4row, row4col).run(threads);
      return karp_sipser(g, col4row, row4col);
  }
  return 0;
}

}  // namespace matchflow::detail

// "sparse-sap": the sparse linear assignment problem by shortest augmenting
// paths, a Dijkstra search with an indexed heap over the stored entries.
//
// Problem.  Given the CSR pattern and weights of an n_rows x n_cols matrix
// with n_rows <= n_cols (stored entries are the allowed pairs, every other
// pair is forbidden), find an injective map col4row of least total weight
// sum_i c(i, col4row[i]), with duals that certify it: u_i + v_j <= c_ij on
// every stored entry, equality on assigned pairs, v_j <= 0 everywhere and
// v_j = 0 on unassigned columns (so sum u + sum v equals the cost).
//
// Algorithm.  R. Jonker and A. Volgenant, "A shortest augmenting path
// algorithm for dense and sparse linear assignment problems", Computing 38
// (1987) 325-340: the shortest augmenting path phase of section 3 (LAPJV's
// "augmentation"), run on the sparse rows as in their LAPJVsp, with the
// dual update of D. F. Crouse, IEEE TAES 52(4), 2016, pages 1685-1686.
//   (1) Initial assignment: for square matrices, column duals from the
//       auction algorithm with epsilon-scaling (sparse_auction.cpp, on
//       OpenMP threads, the same duals for any number; or the caller's
//       `auction`, the GPU's in gpu-sparse-sap: cuda/src/lsap/sparse_auction.cu), each
//       row taking its least reduced weight; where the auction gives up, JV's
//       column reduction with reduction transfer (section 4).  For
//       rectangular ones a row reduction with greedy assignment.  Then
//       augmenting row reduction, a bounded number of steps.  On random
//       square matrices with 10 entries per row the auction start leaves
//       ~1 row in 10^4 free (JV's ~1 in 10^3), and their searches stay short
//       (benchmarks/NOTES.md, "CPU constants").
//   (2) Square problems: Hungarian phases (see phase()): one Dijkstra search
//       from all unassigned rows at once augments one shortest path per
//       search tree that reached an unassigned column.  Rectangular ones:
//   (2') for each unassigned row r, a Dijkstra search over the alternating
//       graph, in reduced costs c_ij - u_i - v_j >= 0: a column is finalised
//       when it leaves the heap; an assigned one continues through its row,
//       the first unassigned one (the sink, at distance delta) ends the
//       search.  No path: no full matching exists (Berge: no augmenting
//       path from r, so some maximum matching leaves r unmatched).
//   (3) Dual update: each finalised column j (distance D_j <= delta) gets
//       v_j += D_j - delta and its row u_i += delta - D_j; the root gets
//       u_r += delta.  Every edge of the search tree becomes tight, every
//       reduced cost stays >= 0, and v only decreases, so unassigned columns
//       (never finalised but as the sink, where D = delta) keep v_j = 0.
//   (4) The path from the sink back to r is flipped.
// O(nnz log n_cols) per search or phase; at most one per row left free by (1).
//
// Deviations from the papers, and why.
//   - The heap replaces JV's scan of a dense "todo" list of columns at the
//     least distance, and the search state (distance, finalised flag) is
//     reset only on the columns it touched: SciPy's LAPJVsp resets all
//     n_cols distances per row, O(n_rows * n_cols) in all, which is what
//     makes it slow on many rows with few entries each.
//   - A search ends as soon as an unassigned column is reached at the
//     distance of the column being expanded (the least any unfinalised
//     column can have), without waiting for it to leave the heap.
//   - Augmenting row reduction runs LAPJVsp's two passes but within a
//     budget of steps (see arr_steps_per_row), and rows with a single entry never
//     lower a column dual (there is no second least to lower it to: LAPJVsp
//     would set it to -infinity).
//   - Square problems augment by Hungarian phases (several paths per
//     multi-source search) instead of JV's one search per free row: the
//     last free rows each searched a quarter of the graph (see phase()).
//   - Rectangular problems skip the column reduction (a column reduced
//     there could end unassigned with v_j != 0): u_i = min_j c_ij, v = 0,
//     and each row takes the first free column at zero reduced weight.
//
// Integer weights are solved exactly in int64.  Every dual is tied, by
// feasibility and by the tight edges of the assignment and the search trees,
// to a signed sum of weights along an alternating path of at most 2 n edges
// plus a bounded number of such sums, and so are the distances; the bound
// max(n_rows, n_cols, 8) * max|c| <= 2^58 leaves a factor 32 of headroom
// below int64 overflow (checked first; status::overflow otherwise, and the
// Python layer then solves in float64, as SciPy solves every input).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "column_heap.hpp"
#include "lsap_cpu.hpp"
#include "matchflow/timing.hpp"

namespace matchflow::detail {
namespace {

template <class T>
constexpr T infinity() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

/// The exactness bound of integer weights (see the header comment).
bool int_weights_fit(const std::int64_t* w, std::int64_t nnz, std::int64_t n_rows,
                     std::int64_t n_cols) {
  std::uint64_t max_abs = 0;
  for (std::int64_t k = 0; k < nnz; ++k) max_abs = std::max(max_abs, magnitude(w[k]));
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>({n_rows, n_cols, 8}));
  return max_abs <= (std::uint64_t{1} << 58) / n;
}

/// Augmenting row reduction steps allowed per row before the searches take
/// over (LAPJVsp bounds the passes, 2, not the steps; within a pass a
/// displaced row is reprocessed at once, and on random sparse matrices that
/// price war ran for minutes; NOTES.md, "CPU constants").  Past the budget,
/// the rows left free are searched.
constexpr std::int64_t arr_steps_per_row = 100;

/// A phase goes on past its first sink until it has scanned this many times
/// the columns it took to find it (NOTES.md, "CPU constants").
constexpr std::int64_t phase_growth = 2;

/// The solver's arrays: the problem, the assignment, the duals, and the
/// search state (by column: tentative distance, predecessor row, finalised).
template <class T>
struct sparse_sap {
  const std::int64_t* ptr;
  const std::int32_t* idx;
  const T* w;
  std::int64_t n_rows, n_cols;
  int threads;                      // the auction's
  const auction_start_fn& auction;  // the caller's, or empty: sparse_auction
  std::int64_t* col4row;            // the caller's
  T *u, *v;                         // the caller's
  std::vector<std::int64_t> row4col;
  std::vector<std::int32_t> pred;                 // by column: the row it was reached from
  std::vector<std::int32_t> tree;                 // by column: the root of its search tree
  std::vector<unsigned char> has_path;            // by row: a phase found its root a sink
  std::vector<std::int64_t> sinks;                // a phase's sinks, one per tree
  std::vector<std::int32_t> touched;              // columns the search put in the heap
  std::vector<std::pair<T, std::int64_t>> final;  // finalised (D, column) in order
  column_heap<T> heap;
  sparse_lsap_stats* stats;

  /// Step (1): row reduction and greedy assignment; the unassigned rows
  /// are listed in `free_rows`.
  void initial_assignment(std::vector<std::int64_t>& free_rows) {
    row4col.assign(n_cols, -1);
    std::fill(v, v + n_cols, T{0});
    for (std::int64_t i = 0; i < n_rows; ++i) {
      T least = infinity<T>();
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) least = std::min(least, w[k]);
      col4row[i] = -1;
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        if (w[k] == least && row4col[idx[k]] < 0) {
          col4row[i] = idx[k];
          row4col[idx[k]] = i;
          break;
        }
      }
      if (col4row[i] < 0) free_rows.push_back(i);
    }
  }

  /// Step (1), square problems: the auction's column duals (see
  /// sparse_auction.cpp), each row taking its least c_ij - v_j when that
  /// column is free.  Afterwards every assigned row's column attains
  /// min_j (c_ij - v_j), the invariant of step (1b).  False (nothing done)
  /// when the auction gave up or, for integer weights, its rounded duals
  /// could break the exactness bound (see the header comment); the column
  /// reduction then starts instead.
  bool auction_start(std::vector<std::int64_t>& free_rows) {
    std::vector<double> dv(n_cols);
    const bool ok = auction ? auction(dv.data())
                            : sparse_auction(ptr, idx, w, n_rows, threads, dv.data(), stats);
    if (!ok) return false;
    if constexpr (std::is_integral_v<T>) {
      std::uint64_t max_abs = 0;
      for (std::int64_t k = 0; k < ptr[n_rows]; ++k) max_abs = std::max(max_abs, magnitude(w[k]));
      const double bound = static_cast<double>(max_abs) * static_cast<double>(n_cols);
      for (const double x : dv) {
        if (!(std::fabs(x) <= bound)) return false;
      }
      for (std::int64_t j = 0; j < n_cols; ++j) v[j] = static_cast<T>(std::llround(dv[j]));
    } else {
      std::copy(dv.begin(), dv.end(), v);
    }
    row4col.assign(n_cols, -1);
    for (std::int64_t i = 0; i < n_rows; ++i) {
      T least = infinity<T>();
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) least = std::min(least, w[k] - v[idx[k]]);
      col4row[i] = -1;
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        if (w[k] - v[idx[k]] == least && row4col[idx[k]] < 0) {
          col4row[i] = idx[k];
          row4col[idx[k]] = i;
          break;
        }
      }
      if (col4row[i] < 0) free_rows.push_back(i);
    }
    return true;
  }

  /// Step (1), square problems: JV's column reduction and reduction
  /// transfer (section 4).  v_j = min_i c_ij, taken by its row when that row
  /// is free (columns in decreasing order, as LAPJV); a row that took exactly
  /// one column moves its slack to it: v[x_i] drops by the row's second
  /// least c_ij - v_j (when the row has another entry).  Afterwards every
  /// assigned row's column attains min_j (c_ij - v_j), the invariant of
  /// step (1b).  The duals leave v <= 0 only after the final shift.
  void column_reduction(std::vector<std::int64_t>& free_rows) {
    row4col.assign(n_cols, -1);
    std::vector<T> least(n_cols, infinity<T>());
    std::vector<std::int64_t> argmin(n_cols, -1);
    for (std::int64_t i = 0; i < n_rows; ++i) {
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        if (w[k] < least[idx[k]]) {
          least[idx[k]] = w[k];
          argmin[idx[k]] = i;
        }
      }
    }
    std::vector<unsigned char> many(n_rows, 0);
    std::fill(col4row, col4row + n_rows, -1);
    for (std::int64_t j = n_cols - 1; j >= 0; --j) {
      v[j] = argmin[j] >= 0 ? least[j] : T{0};
      const std::int64_t i = argmin[j];
      if (i < 0) continue;  // an empty column: the search reports it
      if (col4row[i] < 0) {
        col4row[i] = j;
        row4col[j] = i;
      } else {
        many[i] = 1;
      }
    }
    for (std::int64_t i = 0; i < n_rows; ++i) {
      if (col4row[i] < 0) {
        free_rows.push_back(i);
        continue;
      }
      if (many[i]) continue;
      const std::int64_t j1 = col4row[i];
      T second = infinity<T>();
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        if (idx[k] != j1) second = std::min(second, w[k] - v[idx[k]]);
      }
      if (second != infinity<T>()) v[j1] -= second;
    }
  }

  /// Step (1b): augmenting row reduction (JV section 4, LAPJVsp's two
  /// passes).  A free row takes the column j0 of its least reduced weight
  /// c - v, and v[j0] drops by the gap to the second least, so that j0
  /// stays the row's least; the row displaced from j0 (if any) is free
  /// again, at once when v moved, else in the next pass.  Invariant: every
  /// assigned row's column attains min_j (c_ij - v_j).  v only decreases
  /// from 0 and only on columns that stay assigned, so v <= 0 with v = 0 on
  /// unassigned columns, as rectangular problems need.  Rows with one entry
  /// have no second least: they take their column only when it is free.
  void augmenting_row_reduction(std::vector<std::int64_t>& free_rows) {
    std::vector<std::int64_t> next;
    std::int64_t budget = arr_steps_per_row * n_rows;
    for (int pass = 0; pass < 2 && !free_rows.empty(); ++pass) {
      next.clear();
      std::int64_t h = 0;
      // free_rows is a stack in front (h) of the unprocessed rows.
      while (h < static_cast<std::int64_t>(free_rows.size())) {
        const std::int64_t i = free_rows[h++];
        if (--budget < 0) {
          next.push_back(i);
          continue;
        }
        T v0 = infinity<T>(), v1 = infinity<T>();
        std::int64_t j0 = -1, j1 = -1;
        for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
          const std::int64_t j = idx[k];
          const T d = w[k] - v[j];
          if (d < v1 && j != j0) {
            if (d < v0) {
              v1 = v0;
              j1 = j0;
              v0 = d;
              j0 = j;
            } else {
              v1 = d;
              j1 = j;
            }
          }
        }
        if (j0 < 0) {  // an empty row: the search reports it
          next.push_back(i);
          continue;
        }
        std::int64_t displaced = row4col[j0];
        const bool lowered = j1 >= 0 && v0 < v1;
        if (lowered) {
          v[j0] -= v1 - v0;
        } else if (displaced >= 0) {
          if (j1 < 0) {  // one entry, taken: leave it to the search
            next.push_back(i);
            continue;
          }
          j0 = j1;  // a tie: take the second column instead
          displaced = row4col[j0];
        }
        col4row[i] = j0;
        row4col[j0] = i;
        if (displaced >= 0) {
          col4row[displaced] = -1;
          if (lowered) {
            free_rows[--h] = displaced;
          } else {
            next.push_back(displaced);
          }
        }
      }
      free_rows.swap(next);
    }
  }

  /// The row duals that the invariant of step (1b) makes feasible: each
  /// assigned row's reduced weight on its column, each free row's least.
  void row_duals() {
    for (std::int64_t i = 0; i < n_rows; ++i) {
      T least = infinity<T>();
      if (col4row[i] >= 0) {
        for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
          if (idx[k] == col4row[i]) least = std::min(least, w[k] - v[idx[k]]);
        }
      } else {
        for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
          least = std::min(least, w[k] - v[idx[k]]);
        }
      }
      u[i] = least == infinity<T>() ? T{0} : least;
    }
  }

  /// Relaxes every unfinalised column of row i, reached at distance `at`;
  /// returns an unassigned column reached at distance `at` (the least any
  /// unfinalised column can have: the search may end there), else -1.
  std::int64_t scan_row(std::int64_t i, T at, std::int32_t root, bool may_end) {
    const T u_i = u[i];
    std::int32_t* const pos = heap.pos.data();
    for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      const std::int32_t j = idx[k];
      const std::int32_t p = pos[j];
      if (p == column_heap<T>::finalised) continue;
      const T d = at + (w[k] - u_i - v[j]);
      if (p == column_heap<T>::absent) {
        touched.push_back(j);
      } else if (!(d < heap.items[p].key)) {
        continue;
      }
      heap.push_or_decrease(j, d);
      pred[j] = static_cast<std::int32_t>(i);
      tree[j] = root;
      if (may_end && d <= at && row4col[j] < 0) return j;
    }
    stats->edges_relaxed += ptr[i + 1] - ptr[i];
    return -1;
  }

  /// Step (2): the shortest augmenting path from free row r.  The sink
  /// column, with its distance in *delta; -1 when no path exists.
  std::int64_t search(std::int64_t r, T* delta) {
    final.clear();
    const auto root = static_cast<std::int32_t>(r);
    std::int64_t sink = scan_row(r, T{0}, root, true);
    if (sink >= 0) {
      *delta = T{0};
      return sink;
    }
    while (!heap.items.empty()) {
      const auto [d, j] = heap.pop();
      ++stats->columns_scanned;
      if (row4col[j] < 0) {
        *delta = d;
        return j;
      }
      final.emplace_back(d, j);
      sink = scan_row(row4col[j], d, root, true);
      if (sink >= 0) {
        *delta = d;
        return sink;
      }
    }
    return -1;
  }

  /// Steps (3) and (4), then the search state is reset on touched columns.
  void update_and_augment(std::int64_t r, std::int64_t sink, T delta) {
    u[r] += delta;
    for (const auto& [d, j] : final) {
      v[j] += d - delta;
      u[row4col[j]] += delta - d;
    }
    for (std::int64_t j = sink;;) {
      const std::int64_t i = pred[j];
      row4col[j] = i;
      std::swap(col4row[i], j);
      if (i == r) break;
    }
  }

  void reset_search() {
    for (const std::int32_t j : touched) heap.pos[j] = column_heap<T>::absent;
    touched.clear();
    heap.items.clear();
  }

  /// Step (2'), square problems: a Hungarian phase.  One Dijkstra search
  /// from all free rows at once (each the root of its own tree, at distance
  /// 0), popped in distance order; the first unassigned column popped in
  /// each tree is that tree's sink.  The phase stops at a popped column of
  /// distance delta once it has a sink and has scanned phase_growth times
  /// the columns it had scanned when it found the first, and at least
  /// n_cols / 8 (or every tree has a sink, or nothing is left to pop).  The dual update
  /// of step (3) with that delta (finalised unassigned columns included,
  /// every root gaining delta) keeps every reduced cost >= 0 and makes every
  /// tree edge tight, so the paths to the sinks, vertex-disjoint since they
  /// lie in distinct trees, are all shortest: all are flipped.  An
  /// unassigned column may end a phase with v_j < 0, which only square
  /// problems allow (every column ends assigned).  One sweep of the graph
  /// augments many paths where single searches would each cover a good part
  /// of it: on random matrices the last searches scanned a quarter of the
  /// columns each.  Returns the paths augmented (0: no full matching).
  std::int64_t phase(std::vector<std::int64_t>& free_rows) {
    final.clear();
    sinks.clear();
    for (const std::int64_t r : free_rows) {
      has_path[r] = 0;
      scan_row(r, T{0}, static_cast<std::int32_t>(r), false);
    }
    std::int64_t enough = std::max<std::int64_t>(n_cols / 8, 1);
    std::int64_t scanned = 0;
    T delta{0};
    while (!heap.items.empty()) {
      const auto [d, j] = heap.pop();
      ++stats->columns_scanned;
      ++scanned;
      delta = d;
      final.emplace_back(d, j);
      const std::int32_t root = tree[j];
      if (row4col[j] < 0) {
        if (!has_path[root]) {
          has_path[root] = 1;
          sinks.push_back(j);
          if (sinks.size() == 1) enough = std::max(enough, phase_growth * scanned);
        }
      } else {
        scan_row(row4col[j], d, root, false);
      }
      if (!sinks.empty() && (scanned >= enough || sinks.size() == free_rows.size())) {
        break;
      }
    }
    for (const std::int64_t r : free_rows) u[r] += delta;
    for (const auto& [d, j] : final) {
      v[j] += d - delta;
      if (row4col[j] >= 0) u[row4col[j]] += delta - d;
    }
    for (const std::int64_t sink : sinks) {
      const std::int32_t root = tree[sink];
      for (std::int64_t j = sink;;) {
        const std::int64_t i = pred[j];
        row4col[j] = i;
        std::swap(col4row[i], j);
        if (i == root) break;
      }
    }
    reset_search();
    free_rows.erase(std::remove_if(free_rows.begin(), free_rows.end(),
                                   [&](std::int64_t r) { return col4row[r] >= 0; }),
                    free_rows.end());
    stats->augmenting_paths += static_cast<std::int64_t>(sinks.size());
    return static_cast<std::int64_t>(sinks.size());
  }

  status solve() {
    const auto start = clock_type::now();
    std::vector<std::int64_t> free_rows;
    if (n_rows == n_cols) {
      if (!auction_start(free_rows)) {
        free_rows.clear();
        column_reduction(free_rows);
      }
    } else {
      initial_assignment(free_rows);
    }
    augmenting_row_reduction(free_rows);
    row_duals();
    stats->initial_matches = n_rows - static_cast<std::int64_t>(free_rows.size());
    stats->seconds_init = seconds_since(start);
    const auto solve_start = clock_type::now();
    pred.assign(n_cols, -1);
    tree.assign(n_cols, -1);
    if (n_rows == n_cols) {
      has_path.assign(n_rows, 0);
      while (!free_rows.empty()) {
        if (phase(free_rows) == 0) return fail(status::infeasible, "no full matching exists");
      }
    }
    for (const std::int64_t r : free_rows) {
      T delta{};
      const std::int64_t sink = search(r, &delta);
      if (sink < 0) return fail(status::infeasible, "no full matching exists");
      ++stats->augmenting_paths;
      update_and_augment(r, sink, delta);
      reset_search();
    }
    if (n_rows == n_cols && n_cols > 0) {
      // v <= 0 as documented: shift by the largest column dual.
      const T top = *std::max_element(v, v + n_cols);
      for (std::int64_t j = 0; j < n_cols; ++j) v[j] -= top;
      for (std::int64_t i = 0; i < n_rows; ++i) u[i] += top;
    }
    stats->seconds_solve = seconds_since(solve_start);
    return status::ok;
  }
};

}  // namespace

template <class T>
status sparse_shortest_path(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                            const T* weight, std::int64_t n_rows, std::int64_t n_cols, int threads,
                            std::int64_t* col4row, T* u, T* v, sparse_lsap_stats* stats,
                            const auction_start_fn& auction) {
  if constexpr (std::is_integral_v<T>) {
    if (!int_weights_fit(weight, row_ptr[n_rows], n_rows, n_cols)) {
      return fail(status::overflow, sparse_int_overflow_message);
    }
  }
  sparse_sap<T> s{row_ptr, col_idx, weight, n_rows, n_cols, threads,
                  auction, col4row, u,      v,      {},     {},
                  {},      {},      {},     {},     {},     column_heap<T>(n_cols),
                  stats};
  return s.solve();
}

template status sparse_shortest_path<double>(const std::int64_t*, const std::int32_t*,
                                             const double*, std::int64_t, std::int64_t, int,
                                             std::int64_t*, double*, double*, sparse_lsap_stats*,
                                             const auction_start_fn&);
template status sparse_shortest_path<std::int64_t>(const std::int64_t*, const std::int32_t*,
                                                   const std::int64_t*, std::int64_t, std::int64_t,
                                                   int, std::int64_t*, std::int64_t*, std::int64_t*,
                                                   sparse_lsap_stats*, const auction_start_fn&);

}  // namespace matchflow::detail

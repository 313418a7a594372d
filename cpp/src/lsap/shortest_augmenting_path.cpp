// The shortest augmenting path LSAP solver for small matrices: the route of
// `linear_sum_assignment(method="auto")` below the sizes where omp-tree or
// the GPU pay off.
//
// Algorithm.  D. F. Crouse, "On implementing 2D rectangular assignment
// algorithms", IEEE TAES 52(4), 2016, pages 1685-1686 (the Jonker-Volgenant
// shortest augmenting path without its initialisation): rows are added one
// at a time; for each, a Dijkstra search over reduced costs finds the
// shortest path to a free column, the duals of the rows and columns it
// scanned are updated, and the path is flipped.  O(n_rows^2 n_cols).
//
// It is the algorithm of scipy.optimize.linear_sum_assignment, and its
// choices are made so that the answers are the same arrays as SciPy's, ties
// included (issue 3, "identical in everything a caller can observe"):
//   - the search works in float64 on the costs cast to float64, negated
//     under `maximize`, and forms every reduced cost in the same order,
//     (min_val + c_ij) - u_i - v_j;
//   - it scans the unscanned columns from the highest index down and
//     removes a scanned one by moving the last into its place, and among
//     columns tied at the least distance it takes the last free one met.
//     With a constant matrix that gives the identity (scipy gh-11602);
//   - tall matrices are solved transposed.
// What SciPy does with copies (transposing, negating), this does through
// strides and a sign, so no input is copied or cast up front.
//
// Integer costs are exact: the caller's bound max(n, 8) * max|c| <= 2^50
// keeps every distance and dual an integer below 2^53.  Past the bound this
// returns status::overflow and the caller solves in int64 (omp-tree).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "matchflow/lsap.hpp"

namespace matchflow {
namespace {

constexpr int exact_log2 = 50;  // every integer sum the search forms stays below 2^53

/// Entry (i, j) of the caller's matrix, as a float64 to be minimised.
template <class T>
struct cost_view {
  const char* data;
  std::int64_t row_stride, col_stride;  // bytes
  double sign;                          // -1 under maximize

  /// Entry j of the row that starts at `row`.
  double at(const char* row, std::int64_t j) const {
    T x;
    std::memcpy(&x, row + j * col_stride, sizeof(T));
    return sign * static_cast<double>(x);
  }
  double operator()(std::int64_t i, std::int64_t j) const { return at(data + i * row_stride, j); }
};

/// Work arrays of one solve, in the solve's orientation (n_rows <= n_cols),
/// carved from one buffer: small solves are dominated by their call, and
/// nine allocations would cost more than the search.
struct search_state {
  double *u, *v, *dist;
  std::int64_t *col4row, *row4col, *path, *unscanned, *scanned_rows, *scanned_cols;
  std::int64_t n_scanned_rows = 0, n_scanned_cols = 0;

  /// 8-byte slots the arrays need.
  static std::int64_t slots(std::int64_t n_rows, std::int64_t n_cols) {
    return 3 * n_rows + 7 * n_cols;
  }

  search_state(std::int64_t n_rows, std::int64_t n_cols, std::int64_t* buffer) {
    static_assert(sizeof(double) == sizeof(std::int64_t));
    u = reinterpret_cast<double*>(buffer);
    v = u + n_rows;
    dist = v + n_cols;
    col4row = buffer + n_rows + 2 * n_cols;
    row4col = col4row + n_rows;
    path = row4col + n_cols;
    unscanned = path + n_cols;
    scanned_rows = unscanned + n_cols;
    scanned_cols = scanned_rows + n_rows;
    std::fill(u, u + n_rows, 0.0);
    std::fill(v, v + n_cols, 0.0);
    std::fill(col4row, col4row + n_rows, -1);
    std::fill(row4col, row4col + n_cols, -1);
  }
};

/// Relaxes every unscanned column through row i, reached at distance
/// `reached`; returns the position in s.unscanned of the closest one and
/// its distance in *lowest (infinity: no column can be reached).  The
/// search's inner loop: the view (by value) and the arrays are held in
/// locals, since a store to dist or path could otherwise alias them and
/// force reloads (75% slower at n = 100 in the -fPIC build).
template <class T>
std::int64_t scan_row(const cost_view<T> c, std::int64_t i, double reached,
                      std::int64_t n_unscanned, search_state& s, double* lowest) {
  const char* row = c.data + i * c.row_stride;
  const double u_i = s.u[i];
  const double* v = s.v;
  const std::int64_t* unscanned = s.unscanned;
  const std::int64_t* row4col = s.row4col;
  double* dist = s.dist;
  std::int64_t* path = s.path;
  std::int64_t best = -1;
  double least = std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < n_unscanned; ++k) {
    const std::int64_t j = unscanned[k];
    const double r = reached + c.at(row, j) - u_i - v[j];
    // Selects, not branches: both tests go either way at random, and the
    // branchy loop ran 1.75x slower or not with the code's placement.  No
    // NaN reaches here (check_costs), so min() is the comparison itself.
    const double old = dist[j];
    const double d = std::min(r, old);
    path[j] = r < old ? i : path[j];
    dist[j] = d;
    // Among ties prefer a free column: the search ends there.
    const bool take = (d < least) | ((d == least) & (row4col[j] < 0));
    best = take ? k : best;
    least = std::min(least, d);
  }
  *lowest = least;
  return best;
}

/// One Dijkstra search from free row `root`; the free column it reaches
/// (-1: none, every path is forbidden) and, in *min_val, its distance.
template <class T>
std::int64_t shortest_path(const cost_view<T>& c, std::int64_t n_cols, std::int64_t root,
                           search_state& s, double* min_val) {
  std::int64_t n_unscanned = n_cols;
  for (std::int64_t k = 0; k < n_cols; ++k) s.unscanned[k] = n_cols - 1 - k;
  std::fill(s.dist, s.dist + n_cols, std::numeric_limits<double>::infinity());
  s.n_scanned_rows = s.n_scanned_cols = 0;
  double reached = 0;  // distance of the last scanned column
  for (std::int64_t i = root;;) {
    s.scanned_rows[s.n_scanned_rows++] = i;
    const std::int64_t best = scan_row(c, i, reached, n_unscanned, s, &reached);
    if (reached == std::numeric_limits<double>::infinity()) return -1;
    const std::int64_t j = s.unscanned[best];
    s.scanned_cols[s.n_scanned_cols++] = j;
    s.unscanned[best] = s.unscanned[--n_unscanned];
    if (s.row4col[j] < 0) {
      *min_val = reached;
      return j;
    }
    i = s.row4col[j];
  }
}

/// Adds row `root` to the assignment; false when it cannot be (infeasible).
template <class T>
bool augment_row(const cost_view<T>& c, std::int64_t n_cols, std::int64_t root,
                 search_state& s) {
  double min_val = 0;
  const std::int64_t sink = shortest_path(c, n_cols, root, s, &min_val);
  if (sink < 0) return false;
  // Duals of the scanned rows and columns (Crouse's dual update).
  s.u[root] += min_val;
  for (std::int64_t k = 1; k < s.n_scanned_rows; ++k) {
    const std::int64_t i = s.scanned_rows[k];
    s.u[i] += min_val - s.dist[s.col4row[i]];
  }
  for (std::int64_t k = 0; k < s.n_scanned_cols; ++k) {
    const std::int64_t j = s.scanned_cols[k];
    s.v[j] -= min_val - s.dist[j];
  }
  // Flip the path back from the sink to the root.
  for (std::int64_t j = sink;;) {
    const std::int64_t i = s.path[j];
    s.row4col[j] = i;
    std::swap(s.col4row[i], j);
    if (i == root) break;
  }
  return true;
}

/// NaN or the wrong infinity anywhere: status::invalid_input; integers past
/// the exactness bound: status::overflow.  One pass, before any search.
template <class T>
status check_costs(const cost_view<T>& c, std::int64_t n_rows, std::int64_t n_cols) {
  if constexpr (std::is_floating_point_v<T>) {
    for (std::int64_t i = 0; i < n_rows; ++i) {
      for (std::int64_t j = 0; j < n_cols; ++j) {
        const double x = c(i, j);
        if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) {
          return fail(status::invalid_input, "matrix contains invalid numeric entries");
        }
      }
    }
  } else if (sizeof(T) > 4 || std::max(n_rows, n_cols) > (std::int64_t{1} << (exact_log2 - 32))) {
    const double limit = std::ldexp(1.0, exact_log2) /
                         static_cast<double>(std::max<std::int64_t>({n_rows, n_cols, 8}));
    for (std::int64_t i = 0; i < n_rows; ++i) {
      for (std::int64_t j = 0; j < n_cols; ++j) {
        if (std::fabs(c(i, j)) > limit) {
          return fail(status::overflow, "integer costs not exact in float64");
        }
      }
    }
  }
  return status::ok;
}

template <class T>
status solve(const T* cost, std::int64_t n_rows, std::int64_t n_cols, std::int64_t row_stride,
             std::int64_t col_stride, bool maximize, std::int64_t* row_ind,
             std::int64_t* col_ind) {
  cost_view<T> c{reinterpret_cast<const char*>(cost), row_stride, col_stride,
                 maximize ? -1.0 : 1.0};
  if (const status st = check_costs(c, n_rows, n_cols); st != status::ok) return st;
  const bool transposed = n_rows > n_cols;
  if (transposed) {
    std::swap(n_rows, n_cols);
    std::swap(c.row_stride, c.col_stride);
  }
  constexpr std::int64_t stack_slots = 512;  // 4 KiB: square matrices up to 51 x 51
  std::int64_t on_stack[stack_slots];
  std::unique_ptr<std::int64_t[]> on_heap;
  std::int64_t* buffer = on_stack;
  if (const std::int64_t need = search_state::slots(n_rows, n_cols); need > stack_slots) {
    on_heap.reset(new std::int64_t[need]);
    buffer = on_heap.get();
  }
  search_state s(n_rows, n_cols, buffer);
  for (std::int64_t root = 0; root < n_rows; ++root) {
    if (!augment_row(c, n_cols, root, s)) {
      return fail(status::infeasible, "cost matrix is infeasible");
    }
  }
  if (!transposed) {
    for (std::int64_t i = 0; i < n_rows; ++i) {
      row_ind[i] = i;
      col_ind[i] = s.col4row[i];
    }
    return status::ok;
  }
  // The caller's rows are our columns: list them in order.
  std::int64_t k = 0;
  for (std::int64_t j = 0; j < n_cols; ++j) {
    if (s.row4col[j] >= 0) {
      row_ind[k] = j;
      col_ind[k++] = s.row4col[j];
    }
  }
  return status::ok;
}

}  // namespace

template <class T>
status solve_lsap_shortest_path(const T* cost, std::int64_t n_rows, std::int64_t n_cols,
                                std::int64_t row_stride, std::int64_t col_stride,
                                bool maximize, std::int64_t* row_ind,
                                std::int64_t* col_ind) noexcept {
  return guarded([&] {
    return solve(cost, n_rows, n_cols, row_stride, col_stride, maximize, row_ind, col_ind);
  });
}

#define MATCHFLOW_SHORTEST_PATH(T)                                                       \
  template status solve_lsap_shortest_path<T>(const T*, std::int64_t, std::int64_t,      \
                                              std::int64_t, std::int64_t, bool,          \
                                              std::int64_t*, std::int64_t*) noexcept;
MATCHFLOW_SHORTEST_PATH(double)
MATCHFLOW_SHORTEST_PATH(float)
MATCHFLOW_SHORTEST_PATH(std::int64_t)
MATCHFLOW_SHORTEST_PATH(std::uint64_t)
MATCHFLOW_SHORTEST_PATH(std::int32_t)
MATCHFLOW_SHORTEST_PATH(std::uint32_t)
MATCHFLOW_SHORTEST_PATH(std::int16_t)
MATCHFLOW_SHORTEST_PATH(std::uint16_t)
MATCHFLOW_SHORTEST_PATH(std::int8_t)
MATCHFLOW_SHORTEST_PATH(std::uint8_t)
#undef MATCHFLOW_SHORTEST_PATH

}  // namespace matchflow

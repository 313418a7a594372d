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
// included, so that it can stand in for SciPy's call unnoticed:
//   - the search works in float64 on the costs cast to float64, negated
//     under `maximize`, and forms every reduced cost in the same order,
//     (min_val + c_ij) - u_i - v_j;
//   - it scans the unscanned columns from the highest index down and
//     removes a scanned one by moving the last into its place, and among
//     columns tied at the least distance it takes the last free one met.
//     With a constant matrix that gives the identity (scipy gh-11602);
//   - tall matrices are solved transposed.
// Below a thousand entries, what SciPy does with copies (casting,
// transposing, negating) this does through strides and a sign; past that,
// the search runs on one dense float64 copy, or on the caller's matrix when
// it already is one and is minimised.
//
// Integer costs are exact: the bound max(n, 8) * max|c| <= 2^50, checked in
// the first pass, keeps every distance and dual an integer below 2^53.  Past
// it this returns status::overflow and the caller solves in int64 (omp-tree).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "matchflow/lsap.hpp"

namespace matchflow {
namespace {

constexpr int exact_log2 = 50;  // every integer sum the search forms stays below 2^53

/// |x| of an integer cost (exact for the most negative int64).
template <class T>
std::uint64_t magnitude(T x) {
  if constexpr (std::is_signed_v<T>) {
    return detail::magnitude(static_cast<std::int64_t>(x));
  } else {
    return x;
  }
}

/// Entry (i, j) of the caller's matrix, as a float64 to be minimised.
template <class T>
struct cost_view {
  const char* data;
  std::int64_t row_stride, col_stride;  // bytes
  double sign;                          // -1 under maximize

  /// Entry j of the row that starts at `row`, as stored.
  T raw(const char* row, std::int64_t j) const {
    T x;
    std::memcpy(&x, row + j * col_stride, sizeof(T));
    return x;
  }
  /// The same, as a float64 to be minimised.
  double at(const char* row, std::int64_t j) const {
    return sign * static_cast<double>(raw(row, j));
  }
  const char* row(std::int64_t i) const { return data + i * row_stride; }
};

/// A dense row-major float64 matrix to be minimised as it is: the view the
/// search runs on past a thousand entries, without the generic view's
/// stride product and sign in its inner loop.
struct dense_view {
  const double* data;
  std::int64_t n_cols;

  double at(const double* row, std::int64_t j) const { return row[j]; }
  const double* row(std::int64_t i) const { return data + i * n_cols; }
};

/// Work arrays of one solve, in the solve's orientation (n_rows <= n_cols),
/// carved from one buffer: small solves are dominated by their call, and a
/// dozen allocations would cost more than the search.
///
/// A search keeps its unscanned columns by position k (col[k]) with what
/// its inner loop reads beside them (distance, predecessor row, dual,
/// owner), so that the loop runs over contiguous arrays; a scanned column's
/// position is refilled from the last one.  Distances and predecessors move
/// to scanned_dist and path when their column is scanned.
struct search_state {
  double *u, *v;                             // duals, by row and by column
  std::int64_t *col4row, *row4col, *path;    // path[j]: predecessor row of scanned column j
  std::int64_t *col, *pos_path, *pos_owner;  // by position among the unscanned
  double *pos_dist, *pos_v;
  std::int64_t *scanned_rows, *scanned_cols;  // in scanning order
  double* scanned_dist;                       // distance of scanned_cols[k]
  std::int64_t n_scanned = 0;                 // columns scanned; rows scanned = n_scanned + 1

  /// 8-byte slots the arrays need.
  static std::int64_t slots(std::int64_t n_rows, std::int64_t n_cols) {
    return 3 * n_rows + 10 * n_cols;
  }

  /// `storage`: slots() 8-byte slots, 8-byte aligned.
  search_state(std::int64_t n_rows, std::int64_t n_cols, unsigned char* storage) {
    static_assert(sizeof(double) == 8 && sizeof(std::int64_t) == 8);
    auto take_bytes = [&](std::int64_t n) { return std::exchange(storage, storage + 8 * n); };
    auto take = [&](std::int64_t n) { return reinterpret_cast<std::int64_t*>(take_bytes(n)); };
    auto take_real = [&](std::int64_t n) { return reinterpret_cast<double*>(take_bytes(n)); };
    u = take_real(n_rows);
    v = take_real(n_cols);
    col4row = take(n_rows);
    row4col = take(n_cols);
    path = take(n_cols);
    col = take(n_cols);
    pos_path = take(n_cols);
    pos_owner = take(n_cols);
    pos_dist = take_real(n_cols);
    pos_v = take_real(n_cols);
    scanned_rows = take(n_rows);
    scanned_cols = take(n_cols);
    scanned_dist = take_real(n_cols);
    std::fill(u, u + n_rows, 0.0);
    std::fill(v, v + n_cols, 0.0);
    std::fill(col4row, col4row + n_rows, -1);
    std::fill(row4col, row4col + n_cols, -1);
  }

  /// Every column unscanned, at infinite distance, highest index first.
  void start_search(std::int64_t n_cols) {
    for (std::int64_t k = 0; k < n_cols; ++k) {
      const std::int64_t j = n_cols - 1 - k;
      col[k] = j;
      pos_dist[k] = std::numeric_limits<double>::infinity();
      pos_path[k] = -1;
      pos_v[k] = v[j];
      pos_owner[k] = row4col[j];
    }
    n_scanned = 0;
  }

  /// Marks the column at position k scanned; `last` is the last position.
  std::int64_t scan_column(std::int64_t k, std::int64_t last) {
    const std::int64_t j = col[k];
    scanned_cols[n_scanned] = j;
    scanned_dist[n_scanned++] = pos_dist[k];
    path[j] = pos_path[k];
    col[k] = col[last];
    pos_dist[k] = pos_dist[last];
    pos_path[k] = pos_path[last];
    pos_v[k] = pos_v[last];
    pos_owner[k] = pos_owner[last];
    return j;
  }
};

/// Relaxes every unscanned column through row i, reached at distance
/// `reached`, and returns the position of the closest one with its
/// distance in *lowest (infinity: no column can be reached).  The search's
/// inner loop.  The view comes by value and the arrays are held in locals,
/// since a store to pos_dist or pos_path could otherwise alias them and
/// force reloads.
template <class View>
std::int64_t scan_row(const View c, std::int64_t i, double reached, std::int64_t n_unscanned,
                      search_state& s, double* lowest) {
  const auto row = c.row(i);
  const double u_i = s.u[i];
  const std::int64_t* col = s.col;
  const double* v = s.pos_v;
  const std::int64_t* owner = s.pos_owner;
  double* dist = s.pos_dist;
  std::int64_t* path = s.pos_path;
  std::int64_t best = -1;
  double least = std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < n_unscanned; ++k) {
    const double r = reached + c.at(row, col[k]) - u_i - v[k];
    if (r < dist[k]) {
      dist[k] = r;
      path[k] = i;
    }
    // Among ties prefer a free column: the search ends there.
    if (dist[k] < least || (dist[k] == least && owner[k] < 0)) {
      least = dist[k];
      best = k;
    }
  }
  *lowest = least;
  return best;
}

/// One Dijkstra search from free row `root`; the free column it reaches
/// (-1: none, every path is forbidden) and, in *min_val, its distance.
template <class View>
std::int64_t shortest_path(const View& c, std::int64_t n_cols, std::int64_t root, search_state& s,
                           double* min_val) {
  s.start_search(n_cols);
  double reached = 0;  // distance of the last scanned column
  for (std::int64_t i = root, n_unscanned = n_cols;; --n_unscanned) {
    s.scanned_rows[s.n_scanned] = i;
    const std::int64_t best = scan_row(c, i, reached, n_unscanned, s, &reached);
    if (reached == std::numeric_limits<double>::infinity()) return -1;
    const std::int64_t j = s.scan_column(best, n_unscanned - 1);
    if (s.row4col[j] < 0) {
      *min_val = reached;
      return j;
    }
    i = s.row4col[j];
  }
}

/// Adds row `root` to the assignment; false when it cannot be (infeasible).
template <class View>
bool augment_row(const View& c, std::int64_t n_cols, std::int64_t root, search_state& s) {
  double min_val = 0;
  const std::int64_t sink = shortest_path(c, n_cols, root, s, &min_val);
  if (sink < 0) return false;
  // Duals of the scanned rows and columns (Crouse's dual update).  Scanned
  // row k >= 1 was entered through scanned column k - 1.
  s.u[root] += min_val;
  for (std::int64_t k = 0; k < s.n_scanned; ++k) {
    const double step = min_val - s.scanned_dist[k];
    if (k + 1 < s.n_scanned) s.u[s.scanned_rows[k + 1]] += step;
    s.v[s.scanned_cols[k]] -= step;
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

/// Whether bad(x) holds for an entry x (as stored) of the row that starts
/// at `row`.  No exit inside the row, a select rather than an OR of bools,
/// and a plain pointer when the row is contiguous: so the test vectorises.
template <class T, class Test>
bool any_in_row(const cost_view<T>& c, const char* row, std::int64_t n_cols, Test bad) {
  using flag = std::conditional_t<std::is_floating_point_v<T>, T, double>;  // T's width
  flag found = 0;
  if (c.col_stride == sizeof(T)) {
    const T* x = reinterpret_cast<const T*>(row);  // the caller's array is aligned
    for (std::int64_t j = 0; j < n_cols; ++j) found = bad(x[j]) ? flag{1} : found;
  } else {
    for (std::int64_t j = 0; j < n_cols; ++j) found = bad(c.raw(row, j)) ? flag{1} : found;
  }
  return found != 0;
}

/// |x| - 1 <= folded(x) <= |x| for integers, without a compare.
template <class T>
std::uint64_t folded(T x) {
  if constexpr (std::is_signed_v<T>) {
    const auto y = static_cast<std::int64_t>(x);
    return static_cast<std::uint64_t>(y ^ (y >> 63));  // ~y = |y| - 1 for y < 0
  } else {
    return x;
  }
}

/// OR of folded(x) over a row of integers.
template <class T>
std::uint64_t or_of_row(const cost_view<T>& c, const char* row, std::int64_t n_cols) {
  std::uint64_t bits = 0;
  if (c.col_stride == sizeof(T)) {
    const T* x = reinterpret_cast<const T*>(row);  // the caller's array is aligned
    for (std::int64_t j = 0; j < n_cols; ++j) bits |= folded(x[j]);
  } else {
    for (std::int64_t j = 0; j < n_cols; ++j) bits |= folded(c.raw(row, j));
  }
  return bits;
}

/// NaN or the wrong infinity anywhere: status::invalid_input; integers past
/// the exactness bound: status::overflow.  One pass, before any search.
template <class T>
status check_costs(const cost_view<T>& c, std::int64_t n_rows, std::int64_t n_cols) {
  if constexpr (std::is_floating_point_v<T>) {
    // NaN and -inf (after the sign) are exactly the values not above -inf.
    constexpr T minus_infinity = -std::numeric_limits<T>::infinity();
    const T sign = static_cast<T>(c.sign);
    for (std::int64_t i = 0; i < n_rows; ++i) {
      if (any_in_row(c, c.row(i), n_cols, [&](T x) { return !(sign * x > minus_infinity); })) {
        return fail(status::invalid_input, "matrix contains invalid numeric entries");
      }
    }
  } else if (sizeof(T) > 4 || std::max(n_rows, n_cols) > (std::int64_t{1} << (exact_log2 - 32))) {
    // max(n, 8) * max|c| <= 2^b  <=>  max|c| <= floor(2^b / n) for integers.
    const std::uint64_t limit =
        (std::uint64_t{1} << exact_log2) /
        static_cast<std::uint64_t>(std::max<std::int64_t>({n_rows, n_cols, 8}));
    for (std::int64_t i = 0; i < n_rows; ++i) {
      const char* row = c.row(i);
      // A sufficient test first, max|x| <= (OR of folded(x)) + 1, which
      // vectorises (a 64-bit compare does not, in SSE2); the exact one
      // only for rows that come near the limit.
      if (or_of_row(c, row, n_cols) >= limit &&
          any_in_row(c, row, n_cols, [&](T x) { return magnitude(x) > limit; })) {
        return fail(status::overflow, "integer costs not exact in float64");
      }
    }
  }
  return status::ok;
}

/// Runs the searches on c, n_rows <= n_cols, and writes the caller's
/// arrays (`transposed`: c is the caller's matrix transposed).
template <class View>
status assign(const View& c, std::int64_t n_rows, std::int64_t n_cols, bool transposed,
              std::int64_t* row_ind, std::int64_t* col_ind) {
  constexpr std::int64_t stack_slots = 1024;  // 8 KiB: square matrices up to 78 x 78
  alignas(8) unsigned char on_stack[8 * stack_slots];
  std::unique_ptr<unsigned char[]> on_heap;  // operator new[]: aligned for any scalar
  unsigned char* storage = on_stack;
  if (const std::int64_t need = search_state::slots(n_rows, n_cols); need > stack_slots) {
    on_heap.reset(new unsigned char[8 * need]);
    storage = on_heap.get();
  }
  search_state s(n_rows, n_cols, storage);
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

template <class T>
status solve(const T* cost, std::int64_t n_rows, std::int64_t n_cols, std::int64_t row_stride,
             std::int64_t col_stride, bool maximize, std::int64_t* row_ind, std::int64_t* col_ind) {
  cost_view<T> c{reinterpret_cast<const char*>(cost), row_stride, col_stride,
                 maximize ? -1.0 : 1.0};
  if (const status st = check_costs(c, n_rows, n_cols); st != status::ok) return st;
  const bool transposed = n_rows > n_cols;
  if (transposed) {
    std::swap(n_rows, n_cols);
    std::swap(c.row_stride, c.col_stride);
  }
  // Each entry is read about once per row of the search, so past a
  // thousand entries the search runs on a dense float64 matrix: the
  // caller's own when it is one and is minimised, else one copy, as SciPy
  // makes (float32 at 50 x 50 was slower than SciPy without it).
  constexpr std::int64_t dense_min_entries = 1024;
  if (n_rows * n_cols < dense_min_entries) {
    return assign(c, n_rows, n_cols, transposed, row_ind, col_ind);
  }
  if (std::is_same_v<T, double> && c.col_stride == sizeof(double) &&
      c.row_stride == n_cols * std::int64_t{sizeof(double)} && !maximize) {
    return assign(dense_view{reinterpret_cast<const double*>(c.data), n_cols}, n_rows, n_cols,
                  transposed, row_ind, col_ind);
  }
  std::vector<double> dense(static_cast<std::size_t>(n_rows * n_cols));
  for (std::int64_t i = 0; i < n_rows; ++i) {
    const char* row = c.row(i);
    double* out = dense.data() + i * n_cols;
    if (c.col_stride == sizeof(T)) {  // a plain loop: the conversion vectorises
      const T* x = reinterpret_cast<const T*>(row);
      for (std::int64_t j = 0; j < n_cols; ++j) out[j] = c.sign * static_cast<double>(x[j]);
    } else {
      for (std::int64_t j = 0; j < n_cols; ++j) out[j] = c.at(row, j);
    }
  }
  return assign(dense_view{dense.data(), n_cols}, n_rows, n_cols, transposed, row_ind, col_ind);
}

}  // namespace

template <class T>
status solve_lsap_shortest_path(const T* cost, std::int64_t n_rows, std::int64_t n_cols,
                                std::int64_t row_stride, std::int64_t col_stride, bool maximize,
                                std::int64_t* row_ind, std::int64_t* col_ind) noexcept {
  return guarded([&] {
    return solve(cost, n_rows, n_cols, row_stride, col_stride, maximize, row_ind, col_ind);
  });
}

// The element types the solver reads: one list for the explicit
// instantiations and the run-time dispatch (laid out by hand: clang-format 23
// lays it out differently on each pass).
// clang-format off
#define MATCHFLOW_SHORTEST_PATH_TYPES(X)                                             \
  X(double) X(float) X(std::int64_t) X(std::uint64_t) X(std::int32_t)                \
  X(std::uint32_t) X(std::int16_t) X(std::uint16_t) X(std::int8_t) X(std::uint8_t)
// clang-format on

#define MATCHFLOW_INSTANTIATE_SHORTEST_PATH(T)                                                    \
  template status solve_lsap_shortest_path<T>(const T*, std::int64_t, std::int64_t, std::int64_t, \
                                              std::int64_t, bool, std::int64_t*,                  \
                                              std::int64_t*) noexcept;
MATCHFLOW_SHORTEST_PATH_TYPES(MATCHFLOW_INSTANTIATE_SHORTEST_PATH)
#undef MATCHFLOW_INSTANTIATE_SHORTEST_PATH

namespace {
/// NumPy's kind letter of T.
template <class T>
constexpr char numpy_kind() {
  return std::is_floating_point_v<T> ? 'f' : std::is_signed_v<T> ? 'i' : 'u';
}
}  // namespace

status solve_lsap_shortest_path_of(char kind, int itemsize, const void* cost, std::int64_t n_rows,
                                   std::int64_t n_cols, std::int64_t row_stride,
                                   std::int64_t col_stride, bool maximize, std::int64_t* row_ind,
                                   std::int64_t* col_ind) noexcept {
#define MATCHFLOW_SOLVE_IF_OF_TYPE(T)                                                        \
  if (kind == numpy_kind<T>() && itemsize == int(sizeof(T))) {                               \
    return solve_lsap_shortest_path(static_cast<const T*>(cost), n_rows, n_cols, row_stride, \
                                    col_stride, maximize, row_ind, col_ind);                 \
  }
  MATCHFLOW_SHORTEST_PATH_TYPES(MATCHFLOW_SOLVE_IF_OF_TYPE)
#undef MATCHFLOW_SOLVE_IF_OF_TYPE
  return status::invalid_input;
}

#undef MATCHFLOW_SHORTEST_PATH_TYPES

}  // namespace matchflow

// int_costs_within: the exactness bound of integer costs, one pass.
//
// The Python layer asks it before handing small int64/uint64 matrices to
// SciPy's float64 solver (issue 3: NumPy's abs + max reductions cost more
// than SciPy's whole call at n <= 20).  Sequential on purpose: the Python
// layer only asks about a few thousand entries, where an OpenMP region
// would cost more than the pass.
#include <algorithm>

#include "matchflow/lsap.hpp"

namespace matchflow {
namespace {

// Bits of |x|, up to one: |x| <= folded(x) + 1.  No compare, so the
// contiguous loop vectorises with plain SSE2 (64-bit max needs AVX-512).
inline std::uint64_t folded(std::uint64_t x) { return x; }
inline std::uint64_t folded(std::int64_t x) {
  return static_cast<std::uint64_t>(x ^ (x >> 63));  // ~x = |x| - 1 for x < 0
}

inline std::uint64_t magnitude(std::uint64_t x) { return x; }
inline std::uint64_t magnitude(std::int64_t x) { return detail::magnitude(x); }

/// OR of folded(x) over one row: max|x| <= that + 1.  Four accumulators,
/// so that the OR chain does not serialise the loop.
template <class T>
std::uint64_t row_bits(const T* row, std::int64_t n, std::int64_t stride) noexcept {
  std::uint64_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  std::int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    b0 |= folded(row[j * stride]);
    b1 |= folded(row[(j + 1) * stride]);
    b2 |= folded(row[(j + 2) * stride]);
    b3 |= folded(row[(j + 3) * stride]);
  }
  for (; j < n; ++j) b0 |= folded(row[j * stride]);
  return b0 | b1 | b2 | b3;
}

template <class T>
std::uint64_t row_magnitude(const T* row, std::int64_t n, std::int64_t stride) noexcept {
  std::uint64_t m = 0;
  for (std::int64_t j = 0; j < n; ++j) m = std::max(m, magnitude(row[j * stride]));
  return m;
}

template <class T>
bool within(const T* cost, std::int64_t n_rows, std::int64_t n_cols, std::int64_t row_stride,
            std::int64_t col_stride, int log2_bound) noexcept {
  if (n_rows <= 0 || n_cols <= 0) return true;
  if (log2_bound < 0 || log2_bound > 63) return false;  // no such bound: nothing fits
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>({n_rows, n_cols, 8}));
  // max(n, 8) * max|c| <= 2^b  <=>  max|c| <= floor(2^b / n) for integers.
  const std::uint64_t limit = (std::uint64_t{1} << log2_bound) / n;
  if (col_stride == 1 && row_stride == n_cols) {  // C-contiguous: one long row
    n_cols *= n_rows;
    n_rows = 1;
  }
  for (std::int64_t i = 0; i < n_rows; ++i) {
    const T* row = cost + i * row_stride;
    // A cheap sufficient test first (max|x| <= bits + 1); the exact max
    // only for rows whose bits come near the limit.
    const std::uint64_t bits =
        col_stride == 1 ? row_bits(row, n_cols, 1) : row_bits(row, n_cols, col_stride);
    if (bits < limit) continue;
    if (row_magnitude(row, n_cols, col_stride) > limit) return false;
  }
  return true;
}

}  // namespace

bool int_costs_within(const std::int64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                      std::int64_t row_stride, std::int64_t col_stride,
                      int log2_bound) noexcept {
  return within(cost, n_rows, n_cols, row_stride, col_stride, log2_bound);
}

bool int_costs_within(const std::uint64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                      std::int64_t row_stride, std::int64_t col_stride,
                      int log2_bound) noexcept {
  return within(cost, n_rows, n_cols, row_stride, col_stride, log2_bound);
}

}  // namespace matchflow

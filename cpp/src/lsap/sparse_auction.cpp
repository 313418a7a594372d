// The start of "sparse-sap" on square problems: column duals from Bertsekas'
// auction algorithm with epsilon-scaling, over the stored entries.
//
// D. P. Bertsekas, "The auction algorithm: a distributed relaxation method
// for the assignment problem", Annals of Operations Research 14 (1988)
// 105-123 (forward auction, Gauss-Seidel form, section 2), and D. P.
// Bertsekas and D. A. Castanon, "Parallel synchronous and asynchronous
// implementations of the auction algorithm", Parallel Computing 17 (1991)
// 707-732 (epsilon-scaling).  In the minimisation form used here a column's
// "price" is -v_j: a free row i takes the column j1 of least c_ij - v_j (a1;
// the second least is a2) and lowers v_j1 by a2 - a1 + eps, displacing its
// owner.  Every assignment it ends a phase with is eps-complementary-slack:
// each row's column is within eps of the row's least.  Each phase divides eps
// by `eps_ratio` and starts with every row free, keeping the duals.
//
// Only the duals are kept: they are the start of the exact shortest
// augmenting path solver (sparse_shortest_path.cpp), which takes every row's
// least column under them and repairs the rest, so that the result is
// exactly optimal however far the auction got.  Near-optimal duals leave few
// rows to repair, and their searches stay in the near-tight part of the
// graph: the searches after Jonker-Volgenant's own start each scanned ~12%
// of the columns on random matrices (benchmarks/NOTES.md, "Sparse LAP").
//
// Deviations, and why.
//   - A row with a single entry has no second least; it lowers its column by
//     the weight range plus eps (Bertsekas raises the price to infinity:
//     the duals must stay finite here).
//   - Each phase has a budget of bids (bids_per_row * n); past it, or on an
//     empty row, the auction stops and returns what duals it has: a problem
//     without a full matching makes the auction bid forever, and the exact
//     solver, which reports it, needs no particular start.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "lsap_cpu.hpp"

namespace matchflow::detail {
namespace {

/// eps shrinks by this factor per phase (Bertsekas and Castanon use 4-10).
/// 6, 10 and 4 took 2.1, 1.8 and 2.3 s on 3 10^5 random rows with 5 entries
/// (2-core dev host), the same within noise on R-MAT 2^17.
constexpr double eps_ratio = 10.0;

/// The last phase's eps, relative to the weight range over n: the exact
/// stage repairs what is left.
constexpr double final_eps_per_row = 1.0;

/// Bids allowed per row, over all phases, before the auction gives up.
/// Random matrices took 24-27 bids per row, R-MAT ones (2^16 rows, edge
/// factor 16, restricted to a perfect matching) 107; a budget of 64 per
/// phase stopped that R-MAT run in its first phase.
constexpr std::int64_t bids_per_row = 400;

}  // namespace

template <class T>
bool sparse_auction(const std::int64_t* ptr, const std::int32_t* idx, const T* w,
                    std::int64_t n, double* v, sparse_lsap_stats* stats) {
  std::fill(v, v + n, 0.0);
  const std::int64_t nnz = ptr[n];
  if (n == 0 || nnz == 0) return true;
  const auto [lo, hi] = std::minmax_element(w, w + nnz);
  const double range = static_cast<double>(*hi) - static_cast<double>(*lo);
  if (!(range > 0)) return true;
  const double final_eps = range * final_eps_per_row / static_cast<double>(n);
  std::vector<std::int64_t> owner(n), free_rows;
  free_rows.reserve(n);
  std::int64_t budget = bids_per_row * n;
  for (double eps = range / eps_ratio;; eps = std::max(eps / eps_ratio, final_eps)) {
    std::fill(owner.begin(), owner.end(), -1);
    free_rows.clear();
    for (std::int64_t i = n - 1; i >= 0; --i) free_rows.push_back(i);
    while (!free_rows.empty()) {
      if (--budget < 0) return false;
      const std::int64_t i = free_rows.back();
      free_rows.pop_back();
      double a1 = std::numeric_limits<double>::infinity(), a2 = a1;
      std::int64_t j1 = -1;
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        const double a = static_cast<double>(w[k]) - v[idx[k]];
        if (a < a2) {
          if (a < a1) {
            a2 = a1;
            a1 = a;
            j1 = idx[k];
          } else {
            a2 = a;
          }
        }
      }
      if (j1 < 0) return false;  // an empty row
      const double gap = a2 == std::numeric_limits<double>::infinity() ? range : a2 - a1;
      v[j1] -= gap + eps;
      ++stats->auction_bids;
      if (owner[j1] >= 0) free_rows.push_back(owner[j1]);
      owner[j1] = i;
    }
    ++stats->auction_phases;
    if (eps <= final_eps) return true;
  }
}

template bool sparse_auction<double>(const std::int64_t*, const std::int32_t*, const double*,
                                     std::int64_t, double*, sparse_lsap_stats*);
template bool sparse_auction<std::int64_t>(const std::int64_t*, const std::int32_t*,
                                           const std::int64_t*, std::int64_t, double*,
                                           sparse_lsap_stats*);

}  // namespace matchflow::detail

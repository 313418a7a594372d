// The bottleneck transversal (HSL MC64 jobs 2-3): the perfect matching of a
// square matrix maximising its smallest magnitude, by a threshold search
// that carries one matching from threshold to threshold.
//
// I. S. Duff and J. Koster, "On algorithms for permuting large entries to the
// diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001,
// pages 973-996, section 3.  The answer is the largest threshold t whose
// pattern {|a_ij| >= t} has a perfect matching.  As there, one matching M
// lives through the whole search:
//   - t falls (after a failed test): every edge of M is still above t, so M
//     is kept and augmented from;
//   - t rises (after a success at t', whose perfect matching has smallest
//     entry m >= t'): the edges of M below t are dropped, the rest kept and
//     augmented from.  The search also jumps to m: no t in (t', m] needs a
//     test.
// So each test only repairs what the move of t broke, and the total work is
// close to one matching.  Thresholds are medians of the magnitudes still in
// the open interval (selection, not a sort: O(nnz) over the whole search,
// where the sorted distinct magnitudes would cost O(nnz log nnz)).  The first
// test is at the least of the rows' and columns' largest magnitudes, above
// which some row or column is empty; on random matrices it usually succeeds
// and ends the search (Duff and Koster start from the same bound).
//
// Augmenting paths: depth-first search with lookahead (Duff's MC21,
// ACM TOMS 7, 1981), on the entries at or above t only.  A test stops at the
// first row with no augmenting path: such a row stays unmatched under every
// later augmentation (Berge), so no perfect matching exists at t.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "matchflow/preprocess.hpp"

namespace matchflow {
namespace {

/// One matching of the pattern {a >= t}, carried from threshold to threshold.
class threshold_matching {
 public:
  threshold_matching(const std::int64_t* ptr, const std::int32_t* idx, const double* a,
                     std::int64_t n)
      : ptr_(ptr), idx_(idx), a_(a), n_(n), entry4row_(n, -1), row4col_(n, -1),
        look_(n), next_(n), seen_(n, 0) {}

  /// Drops the matched edges below t, then augments on {a >= t}; true when
  /// the matching became perfect (false as soon as one row cannot be matched).
  bool perfect_at(double t) {
    t_ = t;
    for (std::int64_t i = 0; i < n_; ++i) {
      const std::int64_t k = entry4row_[i];
      if (k >= 0 && a_[k] < t) {
        row4col_[idx_[k]] = -1;
        entry4row_[i] = -1;
      }
      look_[i] = ptr_[i];  // dropped edges free columns the lookahead passed
    }
    for (std::int64_t i = 0; i < n_; ++i) {
      if (entry4row_[i] < 0 && !augment_from(i)) return false;
    }
    return true;
  }

  /// Smallest matched magnitude of a perfect matching.
  double smallest() const {
    double m = std::numeric_limits<double>::infinity();
    for (const std::int64_t k : entry4row_) m = std::min(m, a_[k]);
    return m;
  }

  void columns(std::int64_t* col4row) const {
    for (std::int64_t i = 0; i < n_; ++i) col4row[i] = idx_[entry4row_[i]];
  }

 private:
  /// MC21's depth-first search from the free row `root`, iterative: rows on
  /// the path in `path_`, the entry leading out of each in `via_`.
  bool augment_from(std::int64_t root) {
    ++stamp_;
    path_.assign(1, root);
    via_.clear();
    next_[root] = ptr_[root];
    while (!path_.empty()) {
      const std::int64_t i = path_.back();
      // Lookahead: a free column straight from i ends the path.
      for (; look_[i] < ptr_[i + 1]; ++look_[i]) {
        const std::int64_t k = look_[i];
        if (a_[k] >= t_ && row4col_[idx_[k]] < 0) {
          via_.push_back(k);
          flip();
          return true;
        }
      }
      bool deeper = false;
      while (next_[i] < ptr_[i + 1]) {
        const std::int64_t k = next_[i]++;
        const std::int32_t j = idx_[k];
        if (a_[k] < t_ || seen_[j] == stamp_) continue;
        seen_[j] = stamp_;  // matched: the lookahead found no free column
        const std::int64_t r = row4col_[j];
        via_.push_back(k);
        path_.push_back(r);
        next_[r] = ptr_[r];
        deeper = true;
        break;
      }
      if (!deeper) {
        path_.pop_back();
        if (!via_.empty()) via_.pop_back();
      }
    }
    return false;
  }

  /// Matches each row of the path to the column its outgoing entry reaches.
  void flip() {
    for (std::size_t l = 0; l < path_.size(); ++l) {
      const std::int64_t k = via_[l];
      entry4row_[path_[l]] = k;
      row4col_[idx_[k]] = path_[l];
    }
  }

  const std::int64_t* ptr_;
  const std::int32_t* idx_;
  const double* a_;
  std::int64_t n_;
  double t_ = 0;
  std::vector<std::int64_t> entry4row_;  // the matched entry of each row, -1 if free
  std::vector<std::int64_t> row4col_;
  std::vector<std::int64_t> look_, next_;  // lookahead and depth-first positions per row
  std::vector<std::uint64_t> seen_;        // columns visited by the current search
  std::uint64_t stamp_ = 0;
  std::vector<std::int64_t> path_, via_;
};

/// The least of the rows' and columns' largest magnitudes (0 when a row or
/// column is empty): no threshold above it has a perfect matching.
double first_threshold(const std::int64_t* ptr, const std::int32_t* idx, const double* a,
                       std::int64_t n) {
  std::vector<double> col_max(n, 0.0);
  double bound = std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < n; ++i) {
    double row_max = 0.0;
    for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      row_max = std::max(row_max, a[k]);
      col_max[idx[k]] = std::max(col_max[idx[k]], a[k]);
    }
    bound = std::min(bound, row_max);
  }
  for (const double c : col_max) bound = std::min(bound, c);
  return bound;
}

}  // namespace

status bottleneck_transversal(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                              const double* magnitude, std::int64_t n,
                              std::int64_t* col4row) noexcept {
  return guarded([&] {
    if (n == 0) return status::ok;
    const double bound = first_threshold(row_ptr, col_idx, magnitude, n);
    if (!(bound > 0)) return status::infeasible;
    threshold_matching matching(row_ptr, col_idx, magnitude, n);
    if (matching.perfect_at(bound)) {  // nothing above bound can work
      matching.columns(col4row);
      return status::ok;
    }
    // Open interval (found, failed): magnitudes not yet decided.
    std::vector<double> open;
    for (std::int64_t k = 0; k < row_ptr[n]; ++k) {
      if (magnitude[k] < bound) open.push_back(magnitude[k]);
    }
    bool found = false;
    while (!open.empty()) {
      const auto mid = open.begin() + static_cast<std::ptrdiff_t>(open.size() / 2);
      std::nth_element(open.begin(), mid, open.end());
      const double t = *mid;
      if (matching.perfect_at(t)) {
        found = true;
        matching.columns(col4row);  // the matching may break in a later failed test
        const double m = matching.smallest();
        open.erase(std::remove_if(open.begin(), open.end(), [m](double x) { return x <= m; }),
                   open.end());
      } else {
        open.erase(std::remove_if(open.begin(), open.end(), [t](double x) { return x >= t; }),
                   open.end());
      }
    }
    return found ? status::ok : status::infeasible;
  });
}

}  // namespace matchflow

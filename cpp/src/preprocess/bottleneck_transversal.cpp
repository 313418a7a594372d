// The bottleneck transversal (HSL MC64 jobs 2-3): the perfect matching of a
// square matrix maximising its smallest magnitude, by a threshold search
// that carries one matching from threshold to threshold.
//
// I. S. Duff and J. Koster, "On algorithms for permuting large entries to the
// diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001,
// pages 973-996, section 3.  The answer is the largest threshold t whose
// pattern {|a_ij| >= t} has a perfect matching.  As there, one matching M
// lives through the whole search:
//   - the first test is at the least of the rows' and columns' largest
//     magnitudes, above which some row or column is empty (Duff and Koster
//     start from the same bound); on random and on most real matrices it
//     succeeds and ends the search.  It runs a greedy pass, then, unless
//     that is perfect, push-relabel from scratch (what maximum_transversal
//     runs);
//   - t falls (after a failure): every edge of M is still above t, so M is
//     kept and augmented from;
//   - t rises (after a success, whose matching has smallest entry m): the
//     edges of M below t are dropped, the rest kept and augmented from, and
//     the search continues above m, not above the tested t.
// So each test only repairs what the move of t broke, and the total work is
// close to one matching.  Thresholds are medians of the magnitudes still
// undecided (selection, not a sort: O(nnz) over the whole search).
//
// Repairs: a few free rows are matched one by one by depth-first search
// with lookahead (Duff's MC21, ACM TOMS 7, 1981) on the entries >= t, and
// the test stops at the first row without an augmenting path (it stays
// unmatched under every later augmentation, Berge: no perfect matching at
// t).  More free rows go to push-relabel from M on a copy of {a >= t}: the
// depth-first searches take long paths on random patterns (from scratch
// they took 2.2 s where push-relabel took 40 ms, 10^5 x 5 random).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "../matching/matching_cpu.hpp"
#include "../transpose.hpp"
#include "matchflow/matching.hpp"
#include "matchflow/preprocess.hpp"

namespace matchflow {
namespace {

/// Free rows up to which a repair searches depth-first (each search may
/// cost a pass over the entries, push-relabel a few passes in all).
constexpr std::int64_t depth_first_max_free = 16;

/// One matching of the pattern {a >= t}, carried from threshold to threshold.
class threshold_matching {
 public:
  threshold_matching(const std::int64_t* ptr, const std::int32_t* idx, const double* a,
                     std::int64_t n)
      : ptr_(ptr),
        idx_(idx),
        a_(a),
        n_(n),
        entry4row_(n, -1),
        row4col_(n, -1),
        look_(n),
        next_(n),
        seen_(n, 0) {}

  /// The first test, at t, from no matching: the greedy matching of
  /// {a >= t} on the caller's arrays (perfect at once on many naturally
  /// ordered matrices), else push-relabel from scratch; true when perfect.
  bool start_at(double t) {
    t_ = t;
    bool perfect = true;
    for (std::int64_t i = 0; i < n_ && perfect; ++i) {
      for (std::int64_t k = ptr_[i]; k < ptr_[i + 1] && entry4row_[i] < 0; ++k) {
        if (a_[k] >= t && row4col_[idx_[k]] < 0) {
          entry4row_[i] = k;
          row4col_[idx_[k]] = i;
        }
      }
      perfect = entry4row_[i] >= 0;
    }
    if (perfect) return true;
    std::fill(entry4row_.begin(), entry4row_.end(), -1);
    std::fill(row4col_.begin(), row4col_.end(), -1);
    return push_relabel_at(t);
  }

  /// Drops the matched edges below t, then augments on {a >= t}; true when
  /// the matching became perfect.
  bool perfect_at(double t) {
    t_ = t;
    std::int64_t free = 0;
    for (std::int64_t i = 0; i < n_; ++i) {
      const std::int64_t k = entry4row_[i];
      if (k >= 0 && a_[k] < t) {
        row4col_[idx_[k]] = -1;
        entry4row_[i] = -1;
      }
      free += entry4row_[i] < 0;
      look_[i] = ptr_[i];  // dropped edges free columns the lookahead passed
    }
    if (free > depth_first_max_free) return push_relabel_at(t);
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
  /// Push-relabel from the current matching on a copy of {a >= t} (paper
  /// 000's PR, as maximum_transversal runs it); leaves a maximum matching.
  bool push_relabel_at(double t) {
    detail::adjacency_storage rows;
    rows.ptr.assign(n_ + 1, 0);
    rows.adj.reserve(static_cast<std::size_t>(ptr_[n_]));
    for (std::int64_t i = 0; i < n_; ++i) {
      for (std::int64_t k = ptr_[i]; k < ptr_[i + 1]; ++k) {
        if (a_[k] >= t) rows.adj.push_back(idx_[k]);
      }
      rows.ptr[i + 1] = static_cast<offset_t>(rows.adj.size());
    }
    const auto nv = static_cast<vertex_t>(n_);
    std::vector<vertex_t> c4r(n_, -1), r4c(n_, -1);
    matching_stats stats;
    if (std::all_of(entry4row_.begin(), entry4row_.end(), [](std::int64_t k) { return k < 0; })) {
      // from scratch: solve_matching's Karp-Sipser start, as maximum_transversal
      matching_options options;
      options.threads = 1;
      options.init = matching_init::karp_sipser;
      const bipartite_view g{rows.view(), adjacency_view{nv, nullptr, nullptr}};
      if (solve_matching(g, matching_method::pr, options, c4r.data(), r4c.data(), &stats) !=
          status::ok) {
        throw std::bad_alloc();  // the only failure valid input allows
      }
      return adopt(c4r, t);
    }
    const detail::adjacency_storage cols = detail::transpose(rows.view(), nv, 1);
    for (std::int64_t i = 0; i < n_; ++i) {
      if (entry4row_[i] >= 0) {
        c4r[i] = idx_[entry4row_[i]];
        r4c[c4r[i]] = static_cast<vertex_t>(i);
      }
    }
    detail::push_relabel(bipartite_view{rows.view(), cols.view()}, -1.0, c4r.data(), r4c.data(),
                         &stats);
    return adopt(c4r, t);
  }

  /// Takes the matching col4row of {a >= t} as M (its entries found by a
  /// pass over the rows); true when perfect.
  bool adopt(const std::vector<vertex_t>& col4row, double t) {
    bool perfect = true;
    std::fill(row4col_.begin(), row4col_.end(), -1);
    for (std::int64_t i = 0; i < n_; ++i) {
      entry4row_[i] = -1;
      for (std::int64_t k = ptr_[i]; col4row[i] >= 0 && k < ptr_[i + 1]; ++k) {
        if (idx_[k] == col4row[i] && a_[k] >= t) {  // no duplicates: the entry
          entry4row_[i] = k;
          row4col_[idx_[k]] = i;
          break;
        }
      }
      perfect = perfect && entry4row_[i] >= 0;
    }
    return perfect;
  }

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

/// The least of the rows' and columns' largest magnitudes: no threshold
/// above it has a perfect matching.
double upper_bound(const std::int64_t* ptr, const std::int32_t* idx, const double* a,
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
    const double bound = upper_bound(row_ptr, col_idx, magnitude, n);
    if (!(bound > 0)) return status::infeasible;  // an empty row or column
    threshold_matching matching(row_ptr, col_idx, magnitude, n);
    if (matching.start_at(bound)) {  // nothing above bound can work
      matching.columns(col4row);
      return status::ok;
    }
    // The magnitudes in (found, failed): not yet decided.
    std::vector<double> open;
    for (std::int64_t k = 0; k < row_ptr[n]; ++k) {
      if (magnitude[k] < bound) open.push_back(magnitude[k]);
    }
    bool any = false;
    while (!open.empty()) {
      const auto mid = open.begin() + static_cast<std::ptrdiff_t>(open.size() / 2);
      std::nth_element(open.begin(), mid, open.end());
      const double t = *mid;
      if (matching.perfect_at(t)) {
        matching.columns(col4row);  // the matching may break in a later failed test
        any = true;
        const double found = matching.smallest();
        open.erase(
            std::remove_if(open.begin(), open.end(), [found](double x) { return x <= found; }),
            open.end());
      } else {
        open.erase(std::remove_if(open.begin(), open.end(), [t](double x) { return x >= t; }),
                   open.end());
      }
    }
    return any ? status::ok : status::infeasible;
  });
}

}  // namespace matchflow

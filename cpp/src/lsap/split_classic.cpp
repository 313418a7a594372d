// The multi-GPU CU-CLASS's row split (cuda/src/lsap/multi_classic_kernels.cuh)
// on the CPU, its parts run one after the other in one thread: each part
// holds a block of rows with all columns and builds the zero-slack lists of
// its own rows (the compression step, local); each BFS level every part
// expands its own frontier rows, the parts exchange the columns they
// covered, and a column covered by several parts in one level goes to the
// least part, the same on every part.  The split's reference where no GPU
// is, as split_tree.cpp is the column split's.  Not a fast solver.
#include "lsap/split_classic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace matchflow {
namespace {

constexpr std::int64_t none = -1;

/// Column `col` covered from `parent` in one level; `row` its assigned row
/// (none: a path ends there).
struct covered {
  std::int64_t row, col, parent;
};

template <class T, class In>
class classic_split_solver {
 public:
  classic_split_solver(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts)
      : c_(cost),
        nr_(n_rows),
        nc_(n_cols),
        parts_(parts),
        u_(n_rows),
        v_(n_cols, T(0)),
        ar_(n_rows, none),
        ac_(n_cols, none),
        pr_(n_rows, none),
        parent_(n_rows, none),
        root_(n_rows),
        vr_(n_rows, 0),
        vc_(parts, std::vector<int>(n_cols, 0)),
        ptr_(parts),
        z_(parts),
        out_(parts) {
    for (int p = 0; p <= parts; ++p) bound_.push_back(n_rows * p / parts);
  }

  /// False: no finite dual step (infeasible).
  bool run(lsap_stats& st) {
    reduce();
    compress();
    std::vector<std::int64_t> roots;
    for (std::int64_t i = 0; i < nr_; ++i) roots.push_back(i), root_[i] = i;
    for (int it = 1; !roots.empty(); ++it) {
      ++st.iterations;
      claim_.assign(nr_, {none, none});
      std::vector<std::int64_t> frontier = roots;
      for (std::int64_t r : roots) vr_[r] = it, pr_[r] = none;
      std::int64_t paths_found = 0;
      while (true) {
        for (int p = 0; p < parts_; ++p) expand(p, frontier, it);
        std::vector<covered> level = gather();
        ++st.search_steps;
        frontier = join(level, it, paths_found);
        if (!level.empty()) continue;
        if (paths_found > 0) break;
        const double theta = least_slack(it);  // Algorithm 7, every part's own rows
        ++st.search_steps;
        if (!(theta < std::numeric_limits<double>::infinity())) return false;
        ++st.dual_updates;
        dual(static_cast<T>(theta), it);  // Algorithm 8
        compress();
        for (std::int64_t i = 0; i < nr_; ++i)
          if (vr_[i] == it) frontier.push_back(i);
      }
      roots = augment(roots, st);
    }
    return true;
  }

  void answer(std::int64_t* col4row, T* u, T* v) const { write_answer(ar_, u_, v_, col4row, u, v); }

 private:
  static T inf() { return split_inf<T>(); }
  T cost(std::int64_t i, std::int64_t j) const { return static_cast<T>(c_[i * nc_ + j]); }
  T reduced(std::int64_t i, std::int64_t j) const { return cost(i, j) - u_[i] - v_[j]; }
  int owner(std::int64_t i) const {
    return static_cast<int>(std::upper_bound(bound_.begin(), bound_.end(), i) - bound_.begin()) - 1;
  }

  /// Algorithm 1: row minima (each part its rows); a square problem's v =
  /// the least reduced cost of each column over every part's rows.
  void reduce() {
    double max_abs = 0;
    for (std::int64_t i = 0; i < nr_; ++i) {
      u_[i] = inf();
      for (std::int64_t j = 0; j < nc_; ++j) {
        const T c = cost(i, j);
        u_[i] = std::min(u_[i], c);
        if (c != inf()) max_abs = std::max(max_abs, std::abs(static_cast<double>(c)));
      }
    }
    if (std::is_floating_point_v<T>)
      tol_ = static_cast<T>(16 * std::numeric_limits<T>::epsilon() * max_abs);
    if (nr_ != nc_) return;
    for (std::int64_t j = 0; j < nc_; ++j) {
      T least = inf();
      for (std::int64_t i = 0; i < nr_; ++i) least = std::min(least, reduced(i, j));
      v_[j] = least;
    }
  }

  /// Section 3.3's compression, part by part: each own row's tight columns.
  void compress() {
    for (int p = 0; p < parts_; ++p) {
      ptr_[p].assign(1, 0);
      z_[p].clear();
      for (std::int64_t i = bound_[p]; i < bound_[p + 1]; ++i) {
        for (std::int64_t j = 0; j < nc_; ++j)
          if (reduced(i, j) <= tol_) z_[p].push_back(j);
        ptr_[p].push_back(static_cast<std::int64_t>(z_[p].size()));
      }
    }
  }

  /// Algorithm 3 on part p's rows of the frontier: the columns they cover.
  void expand(int p, const std::vector<std::int64_t>& frontier, int it) {
    for (std::int64_t i : frontier) {
      if (owner(i) != p) continue;
      const std::int64_t k = i - bound_[p];
      for (std::int64_t e = ptr_[p][k]; e < ptr_[p][k + 1]; ++e) {
        const std::int64_t j = z_[p][e];
        if (vc_[p][j] == it) continue;
        vc_[p][j] = it;
        out_[p].push_back({ac_[j], j, i});
      }
    }
  }

  /// The exchange: every part's covered columns, in part order.
  std::vector<covered> gather() {
    std::vector<covered> level;
    for (auto& part : out_) {
      level.insert(level.end(), part.begin(), part.end());
      part.clear();
    }
    return level;
  }

  /// Every part applies the level alike: a column's first entry (least
  /// part) wins; its row joins the tree, or its path is claimed by the
  /// tree (least (column, parent)).  Returns the next frontier.
  std::vector<std::int64_t> join(const std::vector<covered>& level, int it,
                                 std::int64_t& paths_found) {
    std::vector<std::int64_t> next;
    std::vector<char> taken(nc_, 0);
    for (const covered& e : level) {
      if (taken[e.col]) continue;
      taken[e.col] = 1;
      for (auto& vc : vc_) vc[e.col] = it;
      if (e.row == none) {
        auto& c = claim_[root_[e.parent]];
        if (c.first == none || std::make_pair(e.col, e.parent) < c) c = {e.col, e.parent};
        ++paths_found;
        continue;
      }
      vr_[e.row] = it;
      pr_[e.row] = e.col;
      parent_[e.row] = e.parent;
      root_[e.row] = root_[e.parent];
      next.push_back(e.row);
    }
    return next;
  }

  double least_slack(int it) const {
    double theta = std::numeric_limits<double>::infinity();
    for (int p = 0; p < parts_; ++p)
      for (std::int64_t i = bound_[p]; i < bound_[p + 1]; ++i) {
        if (vr_[i] != it) continue;
        for (std::int64_t j = 0; j < nc_; ++j)
          if (vc_[p][j] != it) theta = std::min(theta, static_cast<double>(reduced(i, j)));
      }
    return theta;
  }

  void dual(T theta, int it) {
    for (std::int64_t i = 0; i < nr_; ++i)
      if (vr_[i] == it) u_[i] += theta;
    for (std::int64_t j = 0; j < nc_; ++j)
      if (vc_[0][j] == it) v_[j] -= theta;
  }

  std::vector<std::int64_t> augment(const std::vector<std::int64_t>& roots, lsap_stats& st) {
    return augment_claimed(roots, claim_, pr_, parent_, ar_, ac_, st);
  }

  const In* c_;
  std::int64_t nr_, nc_;
  int parts_;
  std::vector<std::int64_t> bound_;
  std::vector<T> u_, v_;
  std::vector<std::int64_t> ar_, ac_, pr_, parent_, root_;
  std::vector<int> vr_;
  std::vector<std::vector<int>> vc_;  // each part's copy of the column covers
  std::vector<std::vector<std::int64_t>> ptr_, z_;
  std::vector<std::vector<covered>> out_;
  std::vector<std::pair<std::int64_t, std::int64_t>> claim_;
  T tol_ = 0;
};

}  // namespace

template <class T, class In>
bool solve_split_classic(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                         std::int64_t* col4row, T* u, T* v, lsap_stats& st) {
  classic_split_solver<T, In> solver(cost, n_rows, n_cols, parts);
  if (!solver.run(st)) return false;
  solver.answer(col4row, u, v);
  return true;
}

template bool solve_split_classic(const double*, std::int64_t, std::int64_t, int, std::int64_t*,
                                  double*, double*, lsap_stats&);
template bool solve_split_classic(const float*, std::int64_t, std::int64_t, int, std::int64_t*,
                                  float*, float*, lsap_stats&);
template bool solve_split_classic(const std::int64_t*, std::int64_t, std::int64_t, int,
                                  std::int64_t*, std::int64_t*, std::int64_t*, lsap_stats&);
template bool solve_split_classic(const std::int32_t*, std::int64_t, std::int64_t, int,
                                  std::int64_t*, std::int64_t*, std::int64_t*, lsap_stats&);

}  // namespace matchflow

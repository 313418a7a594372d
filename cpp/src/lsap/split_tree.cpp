// The multi-GPU CU-TREE's split (cuda/src/lsap/multi_gpu_kernels.cuh) on
// the CPU, its parts run one after the other in one thread: the same column
// blocks, the same per-step exchange (the parts' tree entries concatenated
// in part order, the least slack, the reverse columns so far), the same
// least-(column, parent) claim per tree and the same replicated path walks.
// It is the split's reference where no GPU is: CI checks its answers and
// certificates on every kind of input, and a GPU run can be compared with
// it.  Not a fast solver: omp-tree is the CPU's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "lsap/split_classic.hpp"
#include "matchflow/multi_gpu_lsap.hpp"

namespace matchflow {
namespace {

constexpr std::int64_t none = -1;

struct tree_entry {
  std::int64_t row, col, parent;
};
struct reverse_entry {
  std::int64_t col, parent;
};

/// What an exchange gives every part: the next frontier (entries of every
/// part, in part order), the least slack, the reverse columns of the
/// iteration so far.
struct exchange {
  std::vector<tree_entry> frontier;
  double theta = std::numeric_limits<double>::infinity();
  std::int64_t revs = 0;
};

template <class T, class In>
class split_solver {
 public:
  split_solver(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts)
      : c_(cost),
        nr_(n_rows),
        nc_(n_cols),
        parts_(parts),
        u_(n_rows),
        v_(n_cols, T(0)),
        slack_(n_cols),
        ar_(n_rows, none),
        ac_(n_cols, none),
        pr_(n_rows, none),
        pc_(n_cols, none),
        parent_(n_rows, none),
        root_(n_rows),
        vr_(n_rows, 0),
        vc_(n_cols, 0),
        entries_(parts),
        revs_(parts) {
    for (int p = 0; p <= parts; ++p) bound_.push_back(n_cols * p / parts);
  }

  /// False: no finite dual step (infeasible).
  bool run(lsap_stats& st) {
    reduce();
    std::vector<std::int64_t> roots;
    for (std::int64_t i = 0; i < nr_; ++i) roots.push_back(i), root_[i] = i;
    for (int it = 1; !roots.empty(); ++it) {
      ++st.iterations;
      for (auto& r : revs_) r.clear();
      std::fill(slack_.begin(), slack_.end(), inf());
      std::vector<tree_entry> frontier;
      for (std::int64_t r : roots) frontier.push_back({r, none, none});
      exchange x{};
      while (true) {
        stamp(frontier, it);
        for (int p = 0; p < parts_; ++p) expand(p, frontier, it);
        x = gather();
        ++st.search_steps;
        while (x.frontier.empty() && x.revs == 0) {  // dual updates (Algorithm 9)
          if (!(x.theta < std::numeric_limits<double>::infinity())) return false;
          ++st.dual_updates;
          ++st.search_steps;
          dual(static_cast<T>(x.theta), it);
          x = gather();
        }
        if (x.frontier.empty()) break;  // a reverse column ends the search
        frontier = std::move(x.frontier);
      }
      roots = augment(roots, st);
    }
    return true;
  }

  void answer(std::int64_t* col4row, T* u, T* v) const { write_answer(ar_, u_, v_, col4row, u, v); }

 private:
  static T inf() { return split_inf<T>(); }
  T cost(std::int64_t i, std::int64_t j) const { return static_cast<T>(c_[i * nc_ + j]); }

  /// Algorithm 1 part by part: u = the least of the parts' row minima; a
  /// square problem's v = its columns' least reduced cost; the tolerance
  /// from the largest finite |c| (the kernel's).
  void reduce() {
    std::fill(u_.begin(), u_.end(), inf());
    double max_abs = 0;
    for (int p = 0; p < parts_; ++p)
      for (std::int64_t i = 0; i < nr_; ++i)
        for (std::int64_t j = bound_[p]; j < bound_[p + 1]; ++j) {
          const T c = cost(i, j);
          u_[i] = std::min(u_[i], c);
          if (c != inf()) max_abs = std::max(max_abs, std::abs(static_cast<double>(c)));
        }
    if (std::is_floating_point_v<T>)
      tol_ = static_cast<T>(16 * std::numeric_limits<T>::epsilon() * max_abs);
    if (nr_ != nc_) return;
    for (std::int64_t j = 0; j < nc_; ++j) {
      T least = inf();
      for (std::int64_t i = 0; i < nr_; ++i) least = std::min(least, cost(i, j) - u_[i]);
      v_[j] = least;
    }
  }

  /// The frontier rows join the tree, with their links.
  void stamp(const std::vector<tree_entry>& frontier, int it) {
    for (const tree_entry& e : frontier) {
      vr_[e.row] = it;
      if (e.col == none) continue;  // a root
      pr_[e.row] = e.col;
      parent_[e.row] = e.parent;
      root_[e.row] = root_[e.parent];
    }
  }

  /// Part p's column j became tight: its entry for every part.
  void join(int p, std::int64_t j, int it) {
    vc_[j] = it;
    if (ac_[j] == none)
      revs_[p].push_back({j, pc_[j]});
    else
      entries_[p].push_back({ac_[j], j, pc_[j]});
  }

  /// Algorithm 4 on part p's columns.
  void expand(int p, const std::vector<tree_entry>& frontier, int it) {
    for (std::int64_t j = bound_[p]; j < bound_[p + 1]; ++j) {
      if (vc_[j] == it) continue;
      for (const tree_entry& e : frontier) {
        const T rc = cost(e.row, j) - u_[e.row] - v_[j];
        if (rc < slack_[j]) slack_[j] = rc, pc_[j] = e.row;
      }
      if (slack_[j] <= tol_)
        join(p, j, it);
      else
        theta_[p] = std::min(theta_[p], static_cast<double>(slack_[j]));
    }
  }

  /// Algorithm 9: rows replicated, columns part by part.
  void dual(T theta, int it) {
    for (std::int64_t i = 0; i < nr_; ++i)
      if (vr_[i] == it) u_[i] += theta;
    for (int p = 0; p < parts_; ++p)
      for (std::int64_t j = bound_[p]; j < bound_[p + 1]; ++j) {
        if (vc_[j] == it) {
          v_[j] -= theta;
          continue;
        }
        if (slack_[j] != inf()) slack_[j] -= theta;
        if (slack_[j] <= tol_)
          join(p, j, it);
        else
          theta_[p] = std::min(theta_[p], static_cast<double>(slack_[j]));
      }
  }

  /// The exchange: every part's entries of the step (then cleared), least
  /// slack (then reset) and reverse columns so far.
  exchange gather() {
    exchange x{};
    for (int p = 0; p < parts_; ++p) {
      x.frontier.insert(x.frontier.end(), entries_[p].begin(), entries_[p].end());
      entries_[p].clear();
      x.theta = std::min(x.theta, theta_[p]);
      theta_[p] = std::numeric_limits<double>::infinity();
      x.revs += static_cast<std::int64_t>(revs_[p].size());
    }
    return x;
  }

  /// Claims (least (column, parent) per tree), then Algorithm 6 on every
  /// claimed root; returns the roots left.
  std::vector<std::int64_t> augment(const std::vector<std::int64_t>& roots, lsap_stats& st) {
    std::vector<std::pair<std::int64_t, std::int64_t>> claim(nr_, {none, none});
    for (const auto& part : revs_)
      for (const reverse_entry& e : part) {
        auto& c = claim[root_[e.parent]];
        if (c.first == none || std::make_pair(e.col, e.parent) < c) c = {e.col, e.parent};
      }
    std::vector<std::int64_t> left = augment_claimed(roots, claim, pr_, parent_, ar_, ac_, st);
    for (std::int64_t r : left) pr_[r] = none;
    return left;
  }

  const In* c_;
  std::int64_t nr_, nc_;
  int parts_;
  std::vector<std::int64_t> bound_;
  std::vector<T> u_, v_, slack_;
  std::vector<std::int64_t> ar_, ac_, pr_, pc_, parent_, root_;
  std::vector<int> vr_, vc_;
  std::vector<std::vector<tree_entry>> entries_;
  std::vector<std::vector<reverse_entry>> revs_;
  std::vector<double> theta_ =
      std::vector<double>(lsap_max_parts, std::numeric_limits<double>::infinity());
  T tol_ = 0;
};

template <class T, class In>
status solve_split(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts, bool rows,
                   std::int64_t* col4row, T* u, T* v, lsap_stats* stats) {
  return guarded([&] {
    const auto t0 = std::chrono::steady_clock::now();
    lsap_stats st{};
    st.paths_per_iteration = stats ? stats->paths_per_iteration : nullptr;
    if (rows) {
      if (!solve_split_classic(cost, n_rows, n_cols, parts, col4row, u, v, st))
        return fail(status::infeasible, "cost matrix is infeasible");
    } else {
      split_solver<T, In> solver(cost, n_rows, n_cols, parts);
      if (!solver.run(st)) return fail(status::infeasible, "cost matrix is infeasible");
      solver.answer(col4row, u, v);
    }
    st.seconds_solve = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (stats) *stats = st;
    return status::ok;
  });
}

}  // namespace

status solve_lsap_split(const double* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                        bool rows, std::int64_t* col4row, double* u, double* v,
                        lsap_stats* stats) noexcept {
  return solve_split(cost, n_rows, n_cols, parts, rows, col4row, u, v, stats);
}
status solve_lsap_split(const float* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                        bool rows, std::int64_t* col4row, float* u, float* v,
                        lsap_stats* stats) noexcept {
  return solve_split(cost, n_rows, n_cols, parts, rows, col4row, u, v, stats);
}
status solve_lsap_split(const std::int64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        int parts, bool rows, std::int64_t* col4row, std::int64_t* u,
                        std::int64_t* v, lsap_stats* stats) noexcept {
  return solve_split(cost, n_rows, n_cols, parts, rows, col4row, u, v, stats);
}
status solve_lsap_split(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        int parts, bool rows, std::int64_t* col4row, std::int64_t* u,
                        std::int64_t* v, lsap_stats* stats) noexcept {
  return solve_split(cost, n_rows, n_cols, parts, rows, col4row, u, v, stats);
}

}  // namespace matchflow

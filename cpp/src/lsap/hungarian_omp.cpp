// "omp-tree": the alternating-tree Hungarian algorithm of Date & Nagi, with
// OpenMP (paper 001: section 2.3 for the sequential variant, section 4 and
// Algorithms 1, 2, 4, 5, 6, 9 for the parallel one; the paper's CPU baseline
// is this algorithm with "#pragma omp parallel for" kernel analogues).
//
// Problem.  Given a dense row-major n_rows x n_cols cost matrix C with
// n_rows <= n_cols, find an injective map col4row minimising
// sum_i C[i][col4row[i]], together with duals u (rows) and v (columns) that
// certify it: u_i + v_j <= C_ij everywhere, with equality on assigned
// pairs, v_j <= 0 everywhere and v_j = 0 on unassigned columns.  +inf
// entries (floating types) are forbidden edges; the caller has proved that
// an assignment avoiding them exists (an infinite dual step is still
// reported as status::infeasible, never looped on).
//
// Terms.  slack(i, j) = C_ij - u_i - v_j (the reduced cost, >= 0).  A tree
// row is one in an alternating tree (the paper's "uncovered" row, V_r = 0);
// a covered column (V_c = 1) is one reached at zero slack whose assigned row
// joined the tree.  Theta is the sum of the phase's dual steps so far, and
// key[j] = Theta + (least slack from any tree row to the uncovered column
// j), so the paper's slack[j] is key[j] - Theta; pc[j] (P_c) is the row
// that attains it; pr[i] (P_r) is the column through which an assigned row
// i entered its tree.  A reverse column is an unassigned column reached at
// zero slack (key[j] <= Theta): an augmenting path ends there.
//
// Algorithm.  (1) Initial reduction (Algorithm 1): u_i = min_j C_ij, then
// for square matrices v_j = min_i (C_ij - u_i); for rectangular ones v = 0,
// so that every unassigned column keeps v_j = 0 (see "Rectangular" below).
// (2) Initial assignment: each row, in order, takes the first unassigned
// column with zero slack.  (3) Each phase ("iteration" of section 4) builds
// alternating trees rooted at the unassigned rows at once:
//   - forward pass (Algorithm 4): a breadth-first search whose frontier
//     starts as the roots.  Every thread owns a contiguous block of columns
//     (the paper's "thread per column", blocked for caches) and, for each
//     frontier row, lowers key[j] / sets pc[j] on its uncovered columns.  A
//     column at zero slack is covered and its assigned row joins the next
//     frontier (pr[row] = j), or, when it is unassigned, becomes a reverse
//     column;
//   - dual update (Algorithm 9), only when the frontier is empty and no
//     reverse column exists: theta = least slack of an uncovered column;
//     tree rows gain theta, covered columns lose theta, uncovered columns'
//     slack loses theta, and the columns that reach zero feed the search
//     again as in the forward pass;
//   - reverse pass (Algorithm 5) and augmentation pass (Algorithm 6) once
//     the frontier is exhausted with at least one reverse column: one
//     augmenting path per tree (the trees are vertex disjoint, Proposition
//     1), so many paths are augmented per phase when costs have ties.
// The phase loop ends when every row is assigned (the optimality check,
// Algorithm 2).  O(n_rows * n_rows * n_cols) worst case, like the sequential
// alternating-tree variant; each forward-pass step costs O(n_cols / threads)
// per thread per frontier row, plus one barrier.
//
// Deviations from the paper, and why.
//   - Duals change by theta, not theta/2 on both sides (Algorithm 9): the
//     same reduced costs, and integer costs stay integers (exact int64).
//   - Dual updates are applied lazily, as in shortest-augmenting-path codes
//     (Jonker & Volgenant): a tree row records Theta when it joined and at
//     the end of the phase gains Theta_end - Theta_joined (covered columns
//     likewise lose it); uncovered columns keep key = Theta + slack, so
//     Algorithm 9's "slack[j] -= theta" is implicit.  A dual update is then
//     O(1) plus a reduction, instead of an O(n) sweep.
//   - The reduction for theta is fused into the scan of the step's last
//     frontier row (each thread reports its least key and column).  The
//     dual update covers that one column and the next step scans its row;
//     columns tied with it are caught by that scan's "key <= Theta" test
//     (Algorithm 9's "if slack[j] = 0"), or by one sweep when the column is
//     unassigned and the phase is about to augment.  One pass over the
//     columns per step, like a sequential shortest-path search, instead of
//     a separate update kernel and rescan of P_c[j].
//   - Roots: the paper roots trees at every unassigned row.  With real
//     costs (few ties) a phase mostly augments one path, and the other
//     roots are scanned again in every phase, so the roots are the first
//     `batch` unassigned rows, with the batch following the yield (see
//     solve()).  With one root a phase is the shortest augmenting path of
//     Jonker & Volgenant, the search that SciPy runs for every row.
//   - The reverse and augmentation passes run sequentially: a tree's root is
//     recorded for every tree row when it joins (root[i]), so the reverse
//     pass picks the reverse column of least index in each tree in O(1)
//     per column and then walks only the winning paths.  This replaces the
//     paper's "race decides which path survives" with a deterministic
//     choice; the work is O(n) per phase against O(n^2) for the search.
//   - The whole search of a phase runs inside one OpenMP parallel region
//     with one barrier per step; the per-thread lists of newly reached rows
//     are read by every thread directly (no compaction kernel).  Newly
//     reached columns are processed in column order, so the result does not
//     depend on the number of threads.
//   - For square matrices v is shifted at the end (v -= max v, u += max v)
//     so that v <= 0 holds as the API promises; complementary slackness is
//     unchanged because every column is assigned.
//
// Synchronisation.  Between two barriers each thread writes only its own
// columns (key, pc, theta_col), the rows assigned to them (pr, root,
// theta_row of rows that join through its columns), its own lists and its
// own report slot (double-buffered by step parity); every thread reads the
// reports after the barrier and takes the same decision.  The one row that
// joins in a step without a barrier before its scan (a dual update's) has
// its root passed to every thread explicitly (joined_row).
//
// Rectangular (n_rows < n_cols).  v starts at 0 and only covered columns
// ever lose value, and a covered column is an assigned one that stays
// assigned; hence v_j <= 0, and v_j = 0 on columns left unassigned: the
// certificate of optimality of the rectangular LP with columns <= 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "lsap_cpu.hpp"
#include "matchflow/timing.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace matchflow::detail {
namespace {

using index_t = std::int64_t;

/// Fewer columns than this per thread cost more in barriers than they save.
constexpr index_t min_cols_per_thread = 256;

int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

template <class T>
constexpr T infinity() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::max();
}

/// key[j] of a column that left the uncovered set (covered or reverse).
template <class T>
constexpr T off_key() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}

/// What one thread publishes at the end of a search step (padded: written
/// by its owner, read by all after the barrier).
template <class T>
struct alignas(64) step_report {
  index_t tree_rows = 0;  ///< rows this thread has brought into the trees so far
  index_t reverse = 0;    ///< reverse columns found so far in its block
  T min_key{};            ///< least key of its uncovered, non-zero columns
  index_t min_col = -1;   ///< the (first) column with that key
};

/// One thread's block of columns and its append-only lists for a phase.
struct thread_block {
  index_t lo = 0, hi = 0;        ///< owned columns [lo, hi)
  index_t* tree_rows = nullptr;  ///< rows it brought into the trees (capacity n_rows)
  index_t* tree_cols = nullptr;  ///< columns it covered (capacity hi - lo)
  index_t* reverse = nullptr;    ///< reverse columns (capacity hi - lo)
  index_t* zero = nullptr;       ///< columns that reached zero this step (capacity hi - lo)
  index_t n_tree_rows = 0, n_tree_cols = 0, n_reverse = 0, n_zero = 0;
};

template <class T>
class tree_hungarian {
 public:
  tree_hungarian(const T* cost, index_t n_rows, index_t n_cols, int threads, T* u, T* v)
      : c_(cost),
        nr_(n_rows),
        nc_(n_cols),
        u_(u),
        v_(v),
        threads_(pick_threads(threads, n_cols)),
        col4row_(n_rows, -1),
        row4col_(n_cols, -1),
        pr_(n_rows, -1),
        root_(n_rows, -1),
        claimed_(n_rows, 0),
        theta_row_(n_rows),
        pc_(n_cols, -1),
        key_(n_cols),
        least_(threads_),
        theta_col_(n_cols),
        blocks_(threads_),
        reports_(2 * threads_),
        cursors_(2 * static_cast<std::size_t>(threads_) * threads_),
        storage_(static_cast<std::size_t>(threads_) * n_rows + 3 * n_cols) {
    index_t* p = storage_.data();
    for (int t = 0; t < threads_; ++t) {
      thread_block& b = blocks_[t];
      b.lo = n_cols * t / threads_;
      b.hi = n_cols * (t + 1) / threads_;
      b.tree_rows = p;
      p += n_rows;
      b.tree_cols = p;
      p += b.hi - b.lo;
      b.reverse = p;
      p += b.hi - b.lo;
      b.zero = p;
      p += b.hi - b.lo;
    }
  }

  /// Algorithm 1 and the initial assignment; false (nothing else done) when
  /// integer costs break the exact-int64 bound (detail::int_costs_fit).
  bool initialize() {
    if (!detail::int_costs_fit(reduce_rows(), nr_, nc_)) return false;
    if (nr_ == nc_) {
      reduce_columns();
    } else {
      std::fill(v_, v_ + nc_, T(0));
    }
    assign_greedily();
    return true;
  }

  /// Phases until every row is assigned; false if a dual step was infinite.
  bool solve(lsap_stats* stats) {
    std::vector<index_t> free_rows;
    free_rows.reserve(nr_);
    for (index_t i = 0; i < nr_; ++i) {
      if (col4row_[i] < 0) free_rows.push_back(i);
    }
    // Roots of the next phase: the first `batch` free rows.  The paper roots
    // trees at every free row.  With real costs (few ties) a phase often
    // augments one path; the other roots were scanned for nothing, and are
    // scanned again next phase.  So a phase that needed dual updates to
    // augment a single path is followed by a one-root phase (Jonker &
    // Volgenant's shortest augmenting path); when roots that did not augment
    // were more than half of the rows the phase scanned, the batch drops to
    // twice the number of paths; it doubles again while a quarter of the
    // roots augment.
    index_t batch = static_cast<index_t>(free_rows.size());
    while (!free_rows.empty()) {  // optimality check (Algorithm 2)
      const index_t roots = std::min<index_t>(batch, free_rows.size());
      index_t dual_updates = 0;
      if (!forward_pass(free_rows.data(), roots, &dual_updates)) return false;
      const index_t paths = reverse_and_augment();  // >= 1: a reverse column was found
      if (stats->paths_per_iteration && stats->iterations < nr_) {
        stats->paths_per_iteration[stats->iterations] = paths;
      }
      stats->dual_updates += dual_updates;
      stats->iterations += 1;
      stats->augmenting_paths += paths;
      free_rows.erase(std::remove_if(free_rows.begin(), free_rows.end(),
                                     [&](index_t i) { return col4row_[i] >= 0; }),
                      free_rows.end());
      index_t scanned = roots;
      for (const thread_block& b : blocks_) scanned += b.n_tree_rows;
      if (paths == 1 && dual_updates > 0) {
        batch = 1;  // a shortest-path phase: one root searches least
      } else if (2 * (roots - paths) > scanned) {
        batch = std::max<index_t>(1, 2 * paths);
      } else if (4 * paths >= roots) {
        batch = 2 * roots;
      }
    }
    return true;
  }

  /// Writes the assignment and makes v <= 0 for square problems.
  void finish(std::int64_t* col4row) {
    std::copy(col4row_.begin(), col4row_.end(), col4row);
    if (nr_ == nc_ && nc_ > 0) {
      const T shift = *std::max_element(v_, v_ + nc_);
      for (index_t j = 0; j < nc_; ++j) v_[j] -= shift;
      for (index_t i = 0; i < nr_; ++i) u_[i] += shift;
    }
  }

 private:
  static int pick_threads(int requested, index_t n_cols) {
    const index_t wanted = requested > 0 ? requested : max_threads();
    const index_t useful = std::max<index_t>(1, n_cols / min_cols_per_thread);
    return static_cast<int>(std::max<index_t>(1, std::min(wanted, useful)));
  }

  const T* row_ptr(index_t i) const { return c_ + i * nc_; }

  // ---- initial reduction (Algorithm 1) and assignment --------------------

  /// u_i = min_j C_ij; returns max |C_ij| for integer costs (0 for floating
  /// ones), found in the same pass, for the overflow check.
  std::uint64_t reduce_rows() {
    std::uint64_t bound = 0;
#pragma omp parallel for num_threads(threads_) schedule(static) reduction(max : bound)
    for (index_t i = 0; i < nr_; ++i) {
      const T* row = row_ptr(i);
      T m = row[0];
      if constexpr (std::is_same_v<T, std::int64_t>) {
        T hi = row[0];
        for (index_t j = 1; j < nc_; ++j) {
          m = std::min(m, row[j]);
          hi = std::max(hi, row[j]);
        }
        bound = std::max({bound, magnitude(m), magnitude(hi)});
      } else {
        for (index_t j = 1; j < nc_; ++j) m = std::min(m, row[j]);
      }
      u_[i] = m;
    }
    return bound;
  }

  /// v_j = min_i (C_ij - u_i); each thread sweeps the rows over its block.
  void reduce_columns() {
#pragma omp parallel num_threads(threads_)
    {
      const thread_block& b = blocks_[thread_id()];
      for (index_t j = b.lo; j < b.hi; ++j) v_[j] = infinity<T>();
      for (index_t i = 0; i < nr_; ++i) {
        const T* row = row_ptr(i);
        const T ui = u_[i];
        for (index_t j = b.lo; j < b.hi; ++j) v_[j] = std::min(v_[j], row[j] - ui);
      }
    }
  }

  void assign_greedily() {
    for (index_t i = 0; i < nr_; ++i) {
      const T* row = row_ptr(i);
      const T ui = u_[i];
      for (index_t j = 0; j < nc_; ++j) {
        if (row4col_[j] < 0 && row[j] - ui - v_[j] <= T(0)) {
          col4row_[i] = j;
          row4col_[j] = i;
          break;
        }
      }
    }
  }

  // ---- forward pass (Algorithm 4) and dual updates (Algorithm 9) ---------

  /// Per-thread least key of an uncovered, not yet zero column.
  struct alignas(64) least_key {
    T key = infinity<T>();
    index_t col = -1;
  };

  /// Algorithm 4's inner loop for row i on block b: lowers key/pc of the
  /// uncovered columns; every column whose key is <= theta (zero slack) goes
  /// to b.zero.  With `last`, also finds the block's least remaining key.
  void scan_row(index_t i, T theta, bool last, thread_block& b, least_key& least) {
    const T* row = row_ptr(i);
    const T ui = u_[i];
    const T* v = v_;
    T* key = key_.data();
    index_t* pc = pc_.data();
    index_t* zero = b.zero;
    index_t n_zero = b.n_zero;
    T least_key_value = least.key;  // locals: no stores to shared lines in the loop
    index_t least_col = least.col;
    for (index_t j = b.lo; j < b.hi; ++j) {
      T k = key[j];
      if (k == off_key<T>()) continue;
      const T candidate = row[j] - ui - v[j] + theta;
      if (candidate < k) {
        k = candidate;
        key[j] = k;
        pc[j] = i;
      }
      if (k <= theta) {
        key[j] = off_key<T>();
        zero[n_zero++] = j;
      } else if (last && k < least_key_value) {
        least_key_value = k;
        least_col = j;
      }
    }
    b.n_zero = n_zero;
    least.key = least_key_value;
    least.col = least_col;
  }

  /// The zero-slack columns of block b after a dual update (Algorithm 9's
  /// "if slack[j] = 0"), and the least remaining key.
  void collect_zeros(T theta, thread_block& b, least_key& least) {
    for (index_t j = b.lo; j < b.hi; ++j) {
      const T k = key_[j];
      if (k == off_key<T>()) continue;
      if (k <= theta) {
        key_[j] = off_key<T>();
        b.zero[b.n_zero++] = j;
      } else if (k < least.key) {
        least.key = k;
        least.col = j;
      }
    }
  }

  /// The row a dual update brought into the trees during the current step,
  /// with its root: root_[row] is written by one thread in that same step,
  /// so the others take the root from here instead (no barrier between).
  struct joined_row {
    index_t row = -1;
    index_t root = -1;
  };

  /// Column j (zero slack, assigned to r) is covered; r joins j's tree.
  void cover(index_t j, index_t r, T theta, const joined_row& joined, thread_block& b) {
    theta_col_[j] = theta;
    b.tree_cols[b.n_tree_cols++] = j;
    pr_[r] = j;
    root_[r] = pc_[j] == joined.row ? joined.root : root_[pc_[j]];
    theta_row_[r] = theta;
    b.tree_rows[b.n_tree_rows++] = r;
  }

  /// Columns that reached zero slack: cover them and bring their rows into
  /// the trees, or record them as reverse columns.
  void expand_zeros(thread_block& b, T theta, const joined_row& joined) {
    // Column order, so that the frontier's order (and hence which row wins
    // a tie for pc[j]) does not depend on the number of threads.
    std::sort(b.zero, b.zero + b.n_zero);
    for (index_t k = 0; k < b.n_zero; ++k) {
      const index_t j = b.zero[k];
      const index_t r = row4col_[j];
      if (r < 0) {
        b.reverse[b.n_reverse++] = j;
      } else {
        cover(j, r, theta, joined, b);
      }
    }
    b.n_zero = 0;
  }

  int owner_of(index_t j) const {
    // blocks are [n t / T, n (t + 1) / T): start from the estimate, adjust
    int t = static_cast<int>(j * threads_ / nc_);
    while (j < blocks_[t].lo) --t;
    while (j >= blocks_[t].hi) ++t;
    return t;
  }

  /// One phase's search from roots[0, n_roots): forward-pass steps and dual
  /// updates until the frontier is empty with a reverse column found.
  /// Returns false on an infinite theta (no assignment exists).  Lazy duals
  /// are applied at the end (see the file comment).
  bool forward_pass(const index_t* roots, index_t n_roots, index_t* dual_updates) {
    bool feasible = true;
#pragma omp parallel num_threads(threads_)
    {
      const int t = thread_id();
      thread_block& b = blocks_[t];
      start_search(roots, n_roots, b);
      const T theta = search(t, roots, n_roots, b, dual_updates, &feasible);
      apply_lazy_duals(theta, roots, n_roots, b);
    }
    return feasible;
  }

  /// What every thread reads off the step's reports (step_report).
  struct step_totals {
    index_t new_rows = 0, reverse = 0;
    least_key least;
  };

  /// The trees emptied, the keys of thread block `b` reset, the roots set
  /// (the team's barrier ends it: roots are set before any scan).
  void start_search(const index_t* roots, index_t n_roots, thread_block& b) {
    b.n_tree_rows = b.n_tree_cols = b.n_reverse = b.n_zero = 0;
    std::fill(key_.begin() + b.lo, key_.begin() + b.hi, infinity<T>());
#pragma omp for schedule(static)
    for (index_t k = 0; k < n_roots; ++k) {
      root_[roots[k]] = roots[k];
      theta_row_[roots[k]] = T(0);
    }
  }

  /// Thread t's part of the search; returns Theta, every dual update of the
  /// phase.  Every thread takes the same decisions from the same reports.
  T search(int t, const index_t* roots, index_t n_roots, thread_block& b, index_t* dual_updates,
           bool* feasible) {
    // The next step's frontier: rows [seen[s], upto[s]) of every block s,
    // or the single row of the column a dual update brought to zero.
    index_t* seen = cursors_.data() + 2 * t * threads_;
    index_t* upto = seen + threads_;
    std::fill(seen, seen + 2 * threads_, index_t{0});
    T theta = T(0);
    joined_row joined;
    int parity = 0;
    for (index_t k = 0; k < n_roots; ++k) {
      scan_row(roots[k], theta, k + 1 == n_roots, b, least_[t]);
    }
    while (true) {
      expand_zeros(b, theta, joined);
      joined = joined_row{};
      report(t, parity, b);
#pragma omp barrier
      const step_totals step = merge_reports(parity, seen, upto);
      parity ^= 1;
      least_[t] = least_key{};
      if (step.new_rows == 0 && step.reverse > 0) return theta;
      if (step.new_rows == 0) {
        // Dual update (Algorithm 9): theta grows to the least key, whose
        // column now has zero slack (ties are caught by the next scan).
        if (step.least.key == infinity<T>()) {
          if (t == 0) *feasible = false;
          return theta;
        }
        theta = step.least.key;
        if (t == 0) ++*dual_updates;
        joined = join_zero_column(t, step.least.col, theta, upto, b);
        continue;
      }
      // Forward-pass step: expand the rows that joined the trees.
      index_t remaining = step.new_rows;
      for (int s = 0; s < threads_; ++s) {
        const index_t* rows = blocks_[s].tree_rows;
        for (index_t k = seen[s]; k < upto[s]; ++k) {
          scan_row(rows[k], theta, --remaining == 0, b, least_[t]);
        }
      }
    }
  }

  /// Thread t's step report, in the `parity` half (the other half is read
  /// by threads still merging the last step).
  void report(int t, int parity, const thread_block& b) {
    step_report<T>& mine = reports_[parity * threads_ + t];
    mine.tree_rows = b.n_tree_rows;
    mine.reverse = b.n_reverse;
    mine.min_key = least_[t].key;
    mine.min_col = least_[t].col;
  }

  /// Every thread's report of this step: the rows that joined each block
  /// (the next frontier, into seen / upto), the reverse columns, the least key.
  step_totals merge_reports(int parity, index_t* seen, index_t* upto) const {
    step_totals step;
    for (int s = 0; s < threads_; ++s) {
      const step_report<T>& r = reports_[parity * threads_ + s];
      seen[s] = upto[s];
      upto[s] = r.tree_rows;
      step.new_rows += upto[s] - seen[s];
      step.reverse += r.reverse;
      if (r.min_key < step.least.key) {  // blocks in column order: ties keep the least column
        step.least.key = r.min_key;
        step.least.col = r.min_col;
      }
    }
    return step;
  }

  /// After a dual update: column `new_col` has zero slack.  Unassigned, the
  /// phase will augment, and columns tied with it (other trees' paths) join
  /// the search first; else its row joins the trees (returned, for
  /// expand_zeros).
  joined_row join_zero_column(int t, index_t new_col, T theta, index_t* upto, thread_block& b) {
    const index_t new_row = row4col_[new_col];
    if (new_row < 0) {
      collect_zeros(theta, b, least_[t]);
      return joined_row{};
    }
    const int owner = owner_of(new_col);
    joined_row joined;
    joined.row = new_row;
    joined.root = root_[pc_[new_col]];  // pc_[new_col] joined in an earlier step
    if (t == owner) {
      key_[new_col] = off_key<T>();
      cover(new_col, new_row, theta, joined_row{}, b);
    }
    ++upto[owner];  // new_row is this step's frontier, not the next one's
    scan_row(new_row, theta, true, b, least_[t]);
    return joined;
  }

  /// Lazy dual update: rows gained, covered columns lost, every theta since
  /// they joined.
  void apply_lazy_duals(T theta, const index_t* roots, index_t n_roots, const thread_block& b) {
    for (index_t k = 0; k < b.n_tree_rows; ++k) {
      const index_t i = b.tree_rows[k];
      u_[i] += theta - theta_row_[i];
    }
    for (index_t k = 0; k < b.n_tree_cols; ++k) {
      const index_t j = b.tree_cols[k];
      v_[j] -= theta - theta_col_[j];
    }
#pragma omp for schedule(static)
    for (index_t k = 0; k < n_roots; ++k) u_[roots[k]] += theta;
  }

  // ---- reverse pass (Algorithm 5) and augmentation (Algorithm 6) ---------

  /// One augmenting path per tree, from the reverse column of least index
  /// in each tree; returns the number of paths.
  index_t reverse_and_augment() {
    std::vector<index_t> reverse;
    for (const thread_block& b : blocks_) {
      reverse.insert(reverse.end(), b.reverse, b.reverse + b.n_reverse);
    }
    std::sort(reverse.begin(), reverse.end());
    index_t paths = 0;
    std::vector<index_t> used_roots;
    for (const index_t j : reverse) {
      const index_t r0 = root_[pc_[j]];
      if (claimed_[r0]) continue;
      claimed_[r0] = 1;
      used_roots.push_back(r0);
      augment(j);
      ++paths;
    }
    for (const index_t r0 : used_roots) claimed_[r0] = 0;
    return paths;
  }

  /// Flips the alternating path that ends at unassigned column j.
  void augment(index_t j) {
    while (true) {
      const index_t i = pc_[j];
      const index_t previous = col4row_[i];  // == pr_[i], or -1 at the root
      col4row_[i] = j;
      row4col_[j] = i;
      if (previous < 0) return;
      j = previous;
    }
  }

  const T* c_;
  index_t nr_, nc_;
  T* u_;
  T* v_;
  int threads_;
  std::vector<index_t> col4row_, row4col_;  // A_r, A_c
  std::vector<index_t> pr_, root_;          // P_r, tree root of each tree row
  std::vector<unsigned char> claimed_;      // roots already augmented this phase
  std::vector<T> theta_row_;                // Theta when a row joined its tree
  std::vector<index_t> pc_;                 // P_c
  std::vector<T> key_;                      // Theta + slack, or off_key when covered/reverse
  std::vector<least_key> least_;            // per thread, during a step
  std::vector<T> theta_col_;                // Theta when a column was covered
  std::vector<thread_block> blocks_;
  std::vector<step_report<T>> reports_;  // [parity][thread]
  std::vector<index_t> cursors_;         // per thread: seen[threads], upto[threads]
  std::vector<index_t> storage_;         // backing store of the blocks' lists
};

}  // namespace

template <class T>
status hungarian_omp(const T* cost, std::int64_t n_rows, std::int64_t n_cols, int threads,
                     std::int64_t* col4row, T* u, T* v, lsap_stats* stats) {
  if (n_rows == 0) {
    std::fill(v, v + n_cols, T(0));
    return status::ok;
  }
  auto start = clock_type::now();
  tree_hungarian<T> solver(cost, n_rows, n_cols, threads, u, v);
  if (!solver.initialize()) return fail(status::overflow, detail::int_overflow_message);
  stats->seconds_init = seconds_since(start);
  start = clock_type::now();
  const bool feasible = solver.solve(stats);
  if (!feasible) return fail(status::infeasible, "cost matrix is infeasible");
  solver.finish(col4row);
  stats->seconds_solve = seconds_since(start);
  return status::ok;
}

template status hungarian_omp<double>(const double*, std::int64_t, std::int64_t, int, std::int64_t*,
                                      double*, double*, lsap_stats*);
template status hungarian_omp<float>(const float*, std::int64_t, std::int64_t, int, std::int64_t*,
                                     float*, float*, lsap_stats*);
template status hungarian_omp<std::int64_t>(const std::int64_t*, std::int64_t, std::int64_t, int,
                                            std::int64_t*, std::int64_t*, std::int64_t*,
                                            lsap_stats*);

}  // namespace matchflow::detail

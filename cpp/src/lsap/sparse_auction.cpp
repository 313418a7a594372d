// The start of "sparse-sap" on square problems: column duals from Bertsekas'
// auction algorithm with epsilon-scaling, over the stored entries, in
// parallel (OpenMP).
//
// D. P. Bertsekas, "The auction algorithm: a distributed relaxation method
// for the assignment problem", Annals of Operations Research 14 (1988)
// 105-123 (forward auction, section 2), and D. P. Bertsekas and D. A.
// Castanon, "Parallel synchronous and asynchronous implementations of the
// auction algorithm", Parallel Computing 17 (1991) 707-732 (epsilon-scaling;
// the synchronous Jacobi form, section 3).  In the minimisation form used
// here a column's "price" is -v_j: a free row i takes the column j1 of least
// c_ij - v_j (a1; the second least is a2) and bids v_j1 down to
// c_ij1 - a2 - eps, displacing its owner.  Every assignment a phase ends with
// is eps-complementary-slack: each row's column is within eps of the row's
// least.  Each phase divides eps by `eps_ratio`.
//
// Jacobi rounds.  While many rows are free, every free row computes its bid
// from the same duals, in parallel; each column goes to its lowest bid (ties:
// the lowest row), by a compare-and-swap on the column's best bidder; the
// losers and the displaced owners are the next round's free rows, listed in
// the order a sequential pass would list them.  Below `jacobi_min_free` free
// rows a round would not feed the threads: the phase ends with the
// Gauss-Seidel form (one bid at a time, each seeing the last).  Nothing
// depends on the number of threads: the duals, and so the whole solve, are
// the same for every team size.  Jacobi rounds take more bids than
// Gauss-Seidel (27.4 against 24.7 per row on 3 10^5 random rows with 10
// entries, 47 against 38 on RGG 2^18) and the Gauss-Seidel tails are
// sequential, a third to a half of the bids: a bound on the speedup.
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
//   - The auction has a budget of bids (bids_per_row * n); past it, or on an
//     empty row, it stops and returns what duals it has: a problem without a
//     full matching makes the auction bid forever, and the exact solver,
//     which reports it, needs no particular start.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../openmp.hpp"
#include "lsap_cpu.hpp"

namespace matchflow::detail {
namespace {

/// eps shrinks by this factor per phase (Bertsekas and Castanon use 4-10;
/// NOTES.md, "CPU constants").
constexpr double eps_ratio = 10.0;

/// The last phase's eps, relative to the weight range over n: the exact
/// stage repairs what is left.
constexpr double final_eps_per_row = 1.0;

/// Bids allowed per row, over all phases, before the auction gives up.
/// Random matrices took 24-27 bids per row, R-MAT ones (2^16 rows, edge
/// factor 16, restricted to a perfect matching) 107; a budget of 64 per
/// phase stopped that R-MAT run in its first phase.
constexpr std::int64_t bids_per_row = 400;

/// A phase runs Jacobi rounds while at least this many rows are free, then
/// finishes Gauss-Seidel.  The last few hundred free rows of a phase fight
/// long price wars (3 10^5 random rows with 10 entries: ~10 of 28 bids per
/// row came after fewer than 256 rows were free; RGG 2^18: ~24 of 47), where
/// a round would bid a handful of rows between two barriers.
constexpr std::int64_t jacobi_min_free = 256;

/// Rounds with fewer free rows than this run on one thread: each bid reads
/// ~10 entries, and a smaller round costs less than the team's barriers, which
/// wait for any thread the kernel has descheduled (NOTES.md, "CPU constants").
constexpr std::int64_t parallel_min_free = 8192;

/// Rows per dynamic chunk of a round's bids.
constexpr int bid_chunk = 256;

inline constexpr double infinity = std::numeric_limits<double>::infinity();

template <class T>
struct auction {
  const std::int64_t* ptr;
  const std::int32_t* idx;
  const T* w;
  std::int64_t n;
  double* v;
  int team;
  sparse_lsap_stats* stats;
  double range = 0;
  std::int64_t budget = 0;
  std::vector<std::int64_t> owner;   // by column: its row, or -1
  std::vector<std::int64_t> col_of;  // by row: its column, or -1
  std::vector<std::int64_t> best;    // by column: the round's best bidder, or -1
  std::vector<double> offer;         // by row: the v its bid sets
  std::vector<std::int32_t> target;  // by row: the column it bids for, -1: an empty row
  std::vector<std::int64_t> free_rows;
  std::vector<std::vector<std::int64_t>> out;  // by thread: rows it frees

  /// Row i's least reduced weight a1 = c_ij1 - v_j1, its column j1 (-1: an
  /// empty row) and the second least a2 (infinity: a single entry).
  void least_two(std::int64_t i, std::int32_t* j1, double* a1, double* a2) const {
    double b1 = infinity, b2 = infinity;
    std::int32_t c1 = -1;
    for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      const double a = static_cast<double>(w[k]) - v[idx[k]];
      if (a < b2) {
        if (a < b1) {
          b2 = b1;
          b1 = a;
          c1 = idx[k];
        } else {
          b2 = a;
        }
      }
    }
    *j1 = c1;
    *a1 = b1;
    *a2 = b2;
  }

  /// Row i's bid: its column in target[i], the new v in offer[i].
  void bid(std::int64_t i, double eps) {
    std::int32_t j1;
    double a1, a2;
    least_two(i, &j1, &a1, &a2);
    target[i] = j1;
    if (j1 < 0) return;
    const double gap = a2 == infinity ? range : a2 - a1;
    offer[i] = v[j1] - gap - eps;
  }

  /// Whether row i's bid beats row r's for the same column.
  bool beats(std::int64_t i, std::int64_t r) const {
    return offer[i] < offer[r] || (offer[i] == offer[r] && i < r);
  }

  /// Makes row i column j's best bidder of the round if it beats the one
  /// there.  offer[] is written before the release and read after the
  /// acquire of the slot that names its row.
  void propose(std::int32_t j, std::int64_t i) {
    std::int64_t* slot = &best[j];
    std::int64_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    while (cur < 0 || beats(i, cur)) {
      if (__atomic_compare_exchange_n(slot, &cur, i, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return;
      }
    }
  }

  /// Replaces free_rows by the per-thread lists in `out`, in thread order
  /// (with schedule(static), the order of a sequential pass).
  void gather() {
    std::size_t total = 0;
    for (const auto& o : out) total += o.size();
    free_rows.resize(total);
    std::size_t at = 0;
    for (auto& o : out) {
      std::copy(o.begin(), o.end(), free_rows.begin() + static_cast<std::ptrdiff_t>(at));
      at += o.size();
      o.clear();
    }
  }

  /// One Jacobi round over free_rows; false on an empty row.
  bool jacobi_round(double eps) {
    const auto m = static_cast<std::int64_t>(free_rows.size());
    bool empty_row = false;
#pragma omp parallel num_threads(team) if (m >= parallel_min_free)
    {
#pragma omp for schedule(dynamic, bid_chunk) reduction(|| : empty_row)
      for (std::int64_t t = 0; t < m; ++t) {
        const std::int64_t i = free_rows[t];
        bid(i, eps);
        if (target[i] < 0) {
          empty_row = true;
        } else {
          propose(target[i], i);
        }
      }
#ifdef _OPENMP
      auto& mine = out[static_cast<std::size_t>(omp_get_thread_num())];
#else
      auto& mine = out[0];
#endif
      // The winner of column j is the only row that writes owner[j], v[j],
      // best[j] and col_of of j's old owner.
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < m; ++t) {
        const std::int64_t i = free_rows[t];
        const std::int32_t j = target[i];
        if (j < 0) continue;
        if (__atomic_load_n(&best[j], __ATOMIC_RELAXED) != i) {
          mine.push_back(i);
          continue;
        }
        __atomic_store_n(&best[j], std::int64_t{-1}, __ATOMIC_RELAXED);
        const std::int64_t old = owner[j];
        owner[j] = i;
        col_of[i] = j;
        v[j] = offer[i];
        if (old >= 0) {
          col_of[old] = -1;
          mine.push_back(old);
        }
      }
    }
    stats->auction_bids += m;
    budget -= m;
    gather();
    return !empty_row;
  }

  /// The rest of a phase one bid at a time (the Gauss-Seidel form); false
  /// on an empty row or past the budget.
  bool gauss_seidel(double eps) {
    std::reverse(free_rows.begin(), free_rows.end());  // a stack, first row on top
    while (!free_rows.empty()) {
      if (--budget < 0) return false;
      const std::int64_t i = free_rows.back();
      free_rows.pop_back();
      bid(i, eps);
      const std::int32_t j = target[i];
      if (j < 0) return false;
      ++stats->auction_bids;
      v[j] = offer[i];
      const std::int64_t old = owner[j];
      owner[j] = i;
      col_of[i] = j;
      if (old >= 0) {
        col_of[old] = -1;
        free_rows.push_back(old);
      }
    }
    return true;
  }

  /// Frees every row: Bertsekas and Castanon start each phase from no
  /// assignment, with the last phase's duals.  (Keeping the rows still
  /// eps-CS for the new eps took more bids: 28.6 against 27.4 per row on
  /// 3 10^5 random rows with 10 entries.)
  void start_phase() {
    std::fill(owner.begin(), owner.end(), -1);
    std::fill(col_of.begin(), col_of.end(), -1);
    free_rows.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) free_rows[static_cast<std::size_t>(i)] = i;
  }

  /// One phase at eps; false when the auction must stop (an empty row, the
  /// budget).
  bool phase(double eps) {
    start_phase();
    while (static_cast<std::int64_t>(free_rows.size()) >= jacobi_min_free) {
      if (budget < 0 || !jacobi_round(eps)) return false;
    }
    return gauss_seidel(eps);
  }

  bool run() {
    std::fill(v, v + n, 0.0);
    const std::int64_t nnz = ptr[n];
    if (n == 0 || nnz == 0) return true;
    const auto [lo, hi] = std::minmax_element(w, w + nnz);
    range = static_cast<double>(*hi) - static_cast<double>(*lo);
    if (!(range > 0)) return true;
    const double final_eps = range * final_eps_per_row / static_cast<double>(n);
    owner.assign(n, -1);
    col_of.assign(n, -1);
    best.assign(n, -1);
    offer.assign(n, 0.0);
    target.assign(n, -1);
    out.assign(static_cast<std::size_t>(team), {});
    budget = bids_per_row * n;
    for (double eps = range / eps_ratio;; eps = std::max(eps / eps_ratio, final_eps)) {
      if (!phase(eps)) return false;
      ++stats->auction_phases;
      if (eps <= final_eps) return true;
    }
  }
};

}  // namespace

template <class T>
bool sparse_auction(const std::int64_t* ptr, const std::int32_t* idx, const T* w, std::int64_t n,
                    int threads, double* v, sparse_lsap_stats* stats) {
  auction<T> a{ptr, idx, w, n, v, team_size(threads), stats};
  return a.run();
}

template bool sparse_auction<double>(const std::int64_t*, const std::int32_t*, const double*,
                                     std::int64_t, int, double*, sparse_lsap_stats*);
template bool sparse_auction<std::int64_t>(const std::int64_t*, const std::int32_t*,
                                           const std::int64_t*, std::int64_t, int, double*,
                                           sparse_lsap_stats*);

}  // namespace matchflow::detail

// Weighted transversals with scaling, as HSL MC64 computes them before a
// sparse factorisation: the assignment objectives "product" and "sum"
// ("bottleneck" is a threshold search: bottleneck_transversal.cpp).
//
// I. S. Duff and J. Koster, "On algorithms for permuting large entries to the
// diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001,
// pages 973-996.
//   - "product" (MC64 job 5, their section 4): maximise prod_i |a_{i,q_i}|.
//     With a_j = max_i |a_ij| the largest magnitude in column j, the weights
//     c_ij = log a_j - log |a_ij| >= 0 turn it into a minimum weight full
//     matching (a_j only shifts column j's weights, so the optimal q is
//     unchanged).  The duals of that assignment, u_i + v_j <= c_ij with
//     equality on the matched pairs, give the scalings r_i = exp(u_i),
//     s_j = exp(v_j) / a_j: then |r_i a_ij s_j| = exp(u_i + v_j - c_ij) <= 1,
//     with equality where matched (section 4, the scaling of Olschowka and
//     Neumaier).
//   - "sum" (MC64 job 4): maximise sum_i |a_{i,q_i}|: weights c_ij = -|a_ij|.
// The assignment is "sparse-sap" (lsap/sparse_shortest_path.cpp).
//
// Tightest duals.  Any optimal (u, v) scales A, but the solver's duals can
// leave u_i and -v_j past exp's range (709) even where u_i + v_j - c_ij is
// small: a row left free by the start gains every search phase's step.
// With u_i = c_{i,q_i} - v_{q_i}, dual feasibility is the system of
// difference constraints v_j <= v_{q_i} + (c_ij - c_{i,q_i}) over the
// entries; its greatest solution with v <= 0 is the shortest path distance
// from a source joined to every column at length 0, which exists since the
// assignment is optimal (no negative cycle).  One Dijkstra computes it, with
// the solver's duals as potentials (Johnson): the arc q_i -> j of entry
// (i, j) has the reduced length c_ij - u_i - v_j >= 0, the source's arc to j
// max(v) - v_j.  Then (u - t, v + t) is as optimal for any t: the logs of
// both scalings are centred on 0, so that spreads up to twice exp's range
// still fit (the greatest v reached -773 on an R-MAT matrix of 90,000 rows
// with random magnitudes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../lsap/column_heap.hpp"
#include "../lsap/lsap_cpu.hpp"
#include "../openmp.hpp"
#include "matchflow/preprocess.hpp"

namespace matchflow {
namespace {

/// log a_j of each column's largest magnitude (0 for an empty column: the
/// assignment then reports the singularity).
std::vector<double> log_column_max(const std::int64_t* ptr, const std::int32_t* idx,
                                   const double* a, std::int64_t n) {
  std::vector<double> top(n, 0.0);
  for (std::int64_t k = 0; k < ptr[n]; ++k) top[idx[k]] = std::max(top[idx[k]], a[k]);
  for (double& x : top) x = x > 0 ? std::log(x) : 0.0;
  return top;
}

/// Entries below which the weights are computed on one thread (waking a
/// team costs more than a few thousand logarithms).
constexpr std::int64_t parallel_min_entries = 1 << 16;

/// The weights c_ij the objective minimises.
std::vector<double> weights(const std::int64_t* ptr, const std::int32_t* idx, const double* a,
                            std::int64_t n, transversal_objective objective,
                            const std::vector<double>& log_max, int threads) {
  const std::int64_t nnz = ptr[n];
  std::vector<double> c(nnz);
  if (objective == transversal_objective::sum) {
#pragma omp parallel for num_threads(detail::team_size(threads)) \
    schedule(static) if (nnz >= parallel_min_entries)
    for (std::int64_t k = 0; k < nnz; ++k) c[k] = -a[k];
  } else {
#pragma omp parallel for num_threads(detail::team_size(threads)) \
    schedule(static) if (nnz >= parallel_min_entries)
    for (std::int64_t k = 0; k < nnz; ++k) c[k] = log_max[idx[k]] - std::log(a[k]);
  }
  return c;
}

/// The greatest optimal column duals v <= 0 for the optimal assignment
/// col4row (see the header comment), from the solver's duals v; u follows
/// as u_i = c_{i,q_i} - v_{q_i}.
void tightest_duals(const std::int64_t* ptr, const std::int32_t* idx, const double* c,
                    std::int64_t n, const std::int64_t* col4row, double* u, double* v) {
  std::vector<double> matched(n, 0.0);  // c_{i,q_i}
  std::vector<std::int64_t> row4col(n, -1);
  for (std::int64_t i = 0; i < n; ++i) {
    row4col[col4row[i]] = i;
    for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      if (idx[k] == col4row[i]) matched[i] = c[k];
    }
    u[i] = matched[i] - v[col4row[i]];
  }
  const double top = n ? *std::max_element(v, v + n) : 0.0;
  detail::column_heap<double> heap(n);
  std::vector<double> dist(n);
  for (std::int64_t j = 0; j < n; ++j) {
    dist[j] = top - v[j];
    heap.push_or_decrease(static_cast<std::int32_t>(j), dist[j]);
  }
  while (!heap.items.empty()) {
    const auto [d, j] = heap.pop();
    const std::int64_t i = row4col[j];
    for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      const std::int32_t to = idx[k];
      if (heap.pos[to] == detail::column_heap<double>::finalised) continue;
      const double length = std::max(c[k] - u[i] - v[to], 0.0);  // >= 0 up to rounding
      if (d + length < dist[to]) {
        dist[to] = d + length;
        heap.push_or_decrease(to, dist[to]);
      }
    }
  }
  for (std::int64_t j = 0; j < n; ++j) v[j] = std::min(dist[j] - top + v[j], 0.0);
  for (std::int64_t i = 0; i < n; ++i) u[i] = matched[i] - v[col4row[i]];
}

/// r = exp(u - t), s = exp(v - log a + t), t centring both logs on 0.
void scalings(const std::vector<double>& u, const std::vector<double>& v,
              const std::vector<double>& log_max, std::int64_t n, double* row_scale,
              double* col_scale) {
  if (n == 0) return;
  double row_lo = std::numeric_limits<double>::infinity(), row_hi = -row_lo;
  double col_lo = row_lo, col_hi = -row_lo;
  for (std::int64_t i = 0; i < n; ++i) {
    row_lo = std::min(row_lo, u[i]);
    row_hi = std::max(row_hi, u[i]);
    const double log_col = v[i] - log_max[i];
    col_lo = std::min(col_lo, log_col);
    col_hi = std::max(col_hi, log_col);
  }
  const double t = (std::max(row_hi, -col_lo) + std::min(row_lo, -col_hi)) / 2;
  for (std::int64_t i = 0; i < n; ++i) {
    row_scale[i] = std::exp(u[i] - t);
    col_scale[i] = std::exp(v[i] - log_max[i] + t);
  }
}

}  // namespace

status weighted_transversal(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                            const double* magnitude, std::int64_t n,
                            transversal_objective objective, bool scale, int threads,
                            std::int64_t* col4row, double* row_scale, double* col_scale,
                            sparse_lsap_stats* stats) noexcept {
  *stats = sparse_lsap_stats{};
  if (objective == transversal_objective::bottleneck) {
    return bottleneck_transversal(row_ptr, col_idx, magnitude, n, col4row);
  }
  return guarded([&] {
    const auto log_max = objective == transversal_objective::product
                             ? log_column_max(row_ptr, col_idx, magnitude, n)
                             : std::vector<double>(n, 0.0);
    const auto c = weights(row_ptr, col_idx, magnitude, n, objective, log_max, threads);
    std::vector<double> u(n), v(n);
    const status st = detail::sparse_shortest_path(row_ptr, col_idx, c.data(), n, n, threads,
                                                   col4row, u.data(), v.data(), stats);
    if (st != status::ok || objective != transversal_objective::product || !scale) return st;
    tightest_duals(row_ptr, col_idx, c.data(), n, col4row, u.data(), v.data());
    scalings(u, v, log_max, n, row_scale, col_scale);
    return status::ok;
  });
}

}  // namespace matchflow

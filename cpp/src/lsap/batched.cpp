// solve_batched_lsap: many dense problems of one shape in one call.
//
// "omp-sap" runs the problems in parallel, one per OpenMP thread at a time,
// each by the sequential shortest augmenting path solver
// (shortest_augmenting_path.cpp: SciPy's algorithm, so each problem gets
// SciPy's arrays, ties included).  "gpu-sap" is in cuda/src/lsap/.  Both
// report the lowest failing problem, so that the error names the same
// index whatever the thread count or device.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "matchflow/batched_lsap.hpp"
#include "matchflow/detail/assert.hpp"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/timing.hpp"
#include "openmp.hpp"

namespace matchflow {
namespace {

/// Lowers `target` to `value` if that is smaller (an atomic minimum).
void lower_to(std::atomic<std::int64_t>& target, std::int64_t value) {
  std::int64_t seen = target.load(std::memory_order_relaxed);
  while (value < seen && !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

/// Problems [0, batch) on `threads` threads (dynamic: their solve times
/// differ).  Returns the lowest failing problem's index, its status in
/// *failure; -1 when every problem was solved.
template <class T>
std::int64_t omp_sap(const T* cost, std::int64_t batch, std::int64_t n_rows, std::int64_t n_cols,
                     bool maximize, int threads, std::int64_t* row_ind, std::int64_t* col_ind,
                     status* failure) {
  const std::int64_t entries = n_rows * n_cols, k = std::min(n_rows, n_cols);
  const auto row_stride = static_cast<std::int64_t>(n_cols * sizeof(T));
  constexpr std::int64_t none = INT64_MAX;
  std::atomic<std::int64_t> first_failure{none};
  std::vector<status> statuses(static_cast<std::size_t>(batch), status::ok);
#pragma omp parallel for num_threads(detail::team_size(threads)) schedule(dynamic, 1)
  for (std::int64_t p = 0; p < batch; ++p) {
    if (p > first_failure.load(std::memory_order_relaxed)) continue;  // cannot be the lowest
    // Its message goes to this thread's last_error(), unread: the caller
    // writes one naming the problem.
    statuses[p] = solve_lsap_shortest_path(cost + p * entries, n_rows, n_cols, row_stride,
                                           static_cast<std::int64_t>(sizeof(T)), maximize,
                                           row_ind + p * k, col_ind + p * k);
    if (statuses[p] != status::ok) lower_to(first_failure, p);
  }
  const std::int64_t failed = first_failure.load();
  if (failed == none) return -1;
  *failure = statuses[failed];
  return failed;
}

std::string failure_message(status st, std::int64_t problem) {
  const char* what = "solve failed";
  switch (st) {
    case status::infeasible: what = "cost matrix is infeasible"; break;  // SciPy's words
    case status::invalid_input: what = "matrix contains invalid numeric entries"; break;
    case status::overflow: what = "integer costs not exact in float64"; break;
    default: break;
  }
  return std::string(what) + " (batch index " + std::to_string(problem) + ")";
}

template <class T>
status solve(const T* cost, std::int64_t batch, std::int64_t n_rows, std::int64_t n_cols,
             bool maximize, batched_lsap_method method, const batched_lsap_options& options,
             std::int64_t* row_ind, std::int64_t* col_ind, batched_lsap_stats* stats) {
  *stats = batched_lsap_stats{};
  if (batch <= 0 || n_rows <= 0 || n_cols <= 0) return status::ok;  // nothing to assign
  status st = status::ok;
  switch (method) {
    case batched_lsap_method::omp_sap: {
      if (options.on_device) {
        return fail(status::invalid_input, "omp-sap cannot read costs in GPU memory");
      }
      const auto start = detail::clock_type::now();
      stats->failed_problem =
          omp_sap(cost, batch, n_rows, n_cols, maximize, options.threads, row_ind, col_ind, &st);
      stats->seconds_solve = detail::seconds_since(start);
      break;
    }
    case batched_lsap_method::gpu_sap:
      st = cuda::gpu_batched_sap(cost, batch, n_rows, n_cols, maximize, options, row_ind, col_ind,
                                 stats);
      break;
    default: return fail(status::invalid_input, "unknown batched LSAP method");
  }
  if (st != status::ok && stats->failed_problem >= 0) {
    return fail(st, failure_message(st, stats->failed_problem));
  }
  return st;  // ok, or a device failure with its message already recorded
}

}  // namespace

template <class T>
status solve_batched_lsap(const T* cost, std::int64_t batch, std::int64_t n_rows,
                          std::int64_t n_cols, bool maximize, batched_lsap_method method,
                          const batched_lsap_options& options, std::int64_t* row_ind,
                          std::int64_t* col_ind, batched_lsap_stats* stats) noexcept {
  MATCHFLOW_ASSERT(batch >= 0 && n_rows >= 0 && n_cols >= 0 && options.threads >= 0);
  return guarded([&] {
    return solve(cost, batch, n_rows, n_cols, maximize, method, options, row_ind, col_ind, stats);
  });
}

#define MATCHFLOW_BATCHED_LSAP(T)                                                    \
  template status solve_batched_lsap<T>(                                             \
      const T*, std::int64_t, std::int64_t, std::int64_t, bool, batched_lsap_method, \
      const batched_lsap_options&, std::int64_t*, std::int64_t*, batched_lsap_stats*) noexcept;
MATCHFLOW_BATCHED_LSAP(double)
MATCHFLOW_BATCHED_LSAP(float)
MATCHFLOW_BATCHED_LSAP(std::int64_t)
MATCHFLOW_BATCHED_LSAP(std::int32_t)
MATCHFLOW_BATCHED_LSAP(std::uint8_t)
#undef MATCHFLOW_BATCHED_LSAP

}  // namespace matchflow

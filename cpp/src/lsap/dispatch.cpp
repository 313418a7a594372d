// solve_lsap_dense: routes a method to the CPU (omp-tree) or the GPU
// (CU-TREE / CU-CLASS, gpu-auction); solve_lsap_sparse: the sparse shortest augmenting
// path solver.  The only LSAP code that calls into cuda/.
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "lsap_cpu.hpp"
#include "matchflow/detail/assert.hpp"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/lsap.hpp"

namespace matchflow {
namespace {

using clock_type = std::chrono::steady_clock;

/// The method's own status; T: the caller's cost type, U: the duals' type.
template <class T, class U>
status run_method(const T* cost, std::int64_t n_rows, std::int64_t n_cols, lsap_method method,
                  const lsap_options& options, std::int64_t* col4row, U* u, U* v,
                  lsap_stats* stats) {
  if (options.cost_on_device && method == lsap_method::omp_tree)
    return fail(status::invalid_input, "omp-tree cannot read costs in GPU memory");
  if constexpr (std::is_same_v<T, std::int32_t>) {
    switch (method) {
      case lsap_method::omp_tree: {
        // The CPU solver reads int64: widen here (the GPU methods need no copy).
        const std::vector<std::int64_t> wide(cost, cost + n_rows * n_cols);
        return detail::hungarian_omp(wide.data(), n_rows, n_cols, options.threads, col4row, u, v,
                                     stats);
      }
      case lsap_method::gpu_tree:
      case lsap_method::gpu_classic:
        return cuda::gpu_hungarian_int32(cost, n_rows, n_cols, method == lsap_method::gpu_tree,
                                         options, col4row, u, v, stats);
      case lsap_method::gpu_auction:
        return cuda::gpu_auction(cost, n_rows, n_cols, options, col4row, u, v, stats);
      default: return fail(status::invalid_input, "unknown LSAP method");
    }
  } else {
    switch (method) {
      case lsap_method::omp_tree:
        return detail::hungarian_omp(cost, n_rows, n_cols, options.threads, col4row, u, v, stats);
      case lsap_method::gpu_tree:
      case lsap_method::gpu_classic:
        return cuda::gpu_hungarian(cost, n_rows, n_cols, method == lsap_method::gpu_tree, options,
                                   col4row, u, v, stats);
      case lsap_method::gpu_auction:
        return cuda::gpu_auction(cost, n_rows, n_cols, options, col4row, u, v, stats);
      default: return fail(status::invalid_input, "unknown LSAP method");
    }
  }
}

template <class T, class U>
status solve(const T* cost, std::int64_t n_rows, std::int64_t n_cols, lsap_method method,
             const lsap_options& options, std::int64_t* col4row, U* u, U* v,
             lsap_stats* stats) noexcept {
  // The Python layer transposes tall matrices and passes empty ones by.
  MATCHFLOW_ASSERT(0 < n_rows && n_rows <= n_cols && cost != nullptr && col4row != nullptr);
  MATCHFLOW_ASSERT(options.threads >= 0);
  return guarded([&] {
    std::int64_t* const record = stats->paths_per_iteration;  // the caller's buffer survives
    *stats = lsap_stats{};
    stats->paths_per_iteration = record;
    const auto start = clock_type::now();
    const status st = run_method(cost, n_rows, n_cols, method, options, col4row, u, v, stats);
    if (st == status::ok && stats->seconds_solve == 0) {
      // A backend that did not time its phases: everything counts as solve.
      stats->seconds_solve = std::chrono::duration<double>(clock_type::now() - start).count() -
                             stats->seconds_init - stats->seconds_transfer;
    }
    return st;
  });
}

template <class T>
status solve_sparse(const std::int64_t* row_ptr, const std::int32_t* col_idx, const T* weight,
                    std::int64_t n_rows, std::int64_t n_cols, const lsap_options& options,
                    std::int64_t* col4row, T* u, T* v, sparse_lsap_stats* stats) noexcept {
  MATCHFLOW_ASSERT(0 <= n_rows && n_rows <= n_cols && row_ptr != nullptr);
  return guarded([&] {
    *stats = sparse_lsap_stats{};
    if (!options.sparse_auction_on_gpu) {
      return detail::sparse_shortest_path(row_ptr, col_idx, weight, n_rows, n_cols, options.threads,
                                          col4row, u, v, stats);
    }
    // The GPU's auction start (timed within seconds_init); its error (no
    // device, no memory; last_error() holds the message) ends the call.
    struct gpu_failed {
      status code;
    };
    const detail::auction_start_fn on_gpu = [&](double* dv) {
      bool usable = false;
      const status st = cuda::gpu_sparse_auction(row_ptr, col_idx, weight, n_rows, options.device,
                                                 dv, &usable, stats);
      if (st != status::ok) throw gpu_failed{st};
      return usable;
    };
    try {
      return detail::sparse_shortest_path(row_ptr, col_idx, weight, n_rows, n_cols, options.threads,
                                          col4row, u, v, stats, on_gpu);
    } catch (const gpu_failed& e) {
      return e.code;
    }
  });
}

}  // namespace

status solve_lsap_dense(const double* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        double* u, double* v, lsap_stats* stats) noexcept {
  return solve(cost, n_rows, n_cols, method, options, col4row, u, v, stats);
}

status solve_lsap_dense(const float* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        float* u, float* v, lsap_stats* stats) noexcept {
  return solve(cost, n_rows, n_cols, method, options, col4row, u, v, stats);
}

status solve_lsap_dense(const std::int64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept {
  return solve(cost, n_rows, n_cols, method, options, col4row, u, v, stats);
}

status solve_lsap_dense(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept {
  return solve(cost, n_rows, n_cols, method, options, col4row, u, v, stats);
}

// The sparse solver's auction start runs on options.threads, or on GPU
// options.device with options.sparse_auction_on_gpu.
status solve_lsap_sparse(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                         const double* weight, std::int64_t n_rows, std::int64_t n_cols,
                         const lsap_options& options, std::int64_t* col4row, double* u, double* v,
                         sparse_lsap_stats* stats) noexcept {
  return solve_sparse(row_ptr, col_idx, weight, n_rows, n_cols, options, col4row, u, v, stats);
}

status solve_lsap_sparse(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                         const std::int64_t* weight, std::int64_t n_rows, std::int64_t n_cols,
                         const lsap_options& options, std::int64_t* col4row, std::int64_t* u,
                         std::int64_t* v, sparse_lsap_stats* stats) noexcept {
  return solve_sparse(row_ptr, col_idx, weight, n_rows, n_cols, options, col4row, u, v, stats);
}

}  // namespace matchflow

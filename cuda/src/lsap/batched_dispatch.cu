// Host side of gpu-sap (device code and the algorithm: batched_kernels.cuh).
//
// One stream (the caller's, for a stack in its GPU memory: nothing is then
// copied through the host, the kernel reads the caller's stack and writes
// the caller's result arrays): upload the stack (common/staged_upload.cuh), transpose it
// when the problems are tall and their costs stay in global memory, one
// launch of sap_kernel (a block per problem, a grid-stride loop past the
// grid's size), copy back the assignments and one status per problem.
// Every call and launch is checked; buffers are RAII; the memory need is
// computed and checked before any allocation.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/staged_upload.cuh"
#include "lsap/batched_kernels.cuh"
#include "matchflow/cuda/entry.hpp"

namespace matchflow::cuda {
namespace {

using namespace batched;
using wall_clock = std::chrono::steady_clock;

double seconds_since(wall_clock::time_point t0) {
  return std::chrono::duration<double>(wall_clock::now() - t0).count();
}

/// Threads per block: about two columns per thread, from one warp to
/// sixteen.  A search step costs one block-wide arg-min whatever the width,
/// so narrow problems take few warps (cheap barriers) and wide ones enough
/// to keep each thread's share of a row short.  Not tuned yet.
int pick_block_threads(int n_cols) {
  const int warps = std::clamp((n_cols + 63) / 64, 1, max_warps);
  return 32 * warps;
}

/// Grid of the tall-problem transpose (in: n_rows x n_cols per problem).
dim3 transpose_grid(std::int64_t batch, int n_rows, int n_cols) {
  return dim3(static_cast<unsigned>((n_cols + 31) / 32), static_cast<unsigned>((n_rows + 31) / 32),
              static_cast<unsigned>(std::min<std::int64_t>(batch, 65535)));
}

template <class T>
status solve(const T* cost, std::int64_t batch, std::int64_t n_rows_in, std::int64_t n_cols_in,
             bool maximize, const batched_lsap_options& options, std::int64_t* row_ind,
             std::int64_t* col_ind, batched_lsap_stats* stats) {
  const bool transposed = n_rows_in > n_cols_in;
  const int n_rows = static_cast<int>(std::min(n_rows_in, n_cols_in));
  const int n_cols = static_cast<int>(std::max(n_rows_in, n_cols_in));
  const std::int64_t entries = static_cast<std::int64_t>(n_rows) * n_cols;

  MATCHFLOW_CUDA_TRY(cudaSetDevice(options.device));
  int max_smem = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            options.device));
  const smem_layout state_only(n_rows, n_cols, sizeof(T), false);
  if (state_only.total_bytes > static_cast<std::size_t>(max_smem)) {
    return fail(status::invalid_input,
                "gpu-sap: problems of " + std::to_string(n_cols) + " columns need " +
                    std::to_string(state_only.total_bytes) + " bytes of shared memory per block; "
                    "the device has " + std::to_string(max_smem) + " (use omp-sap)");
  }
  const smem_layout with_costs(n_rows, n_cols, sizeof(T), true);
  const bool costs_shared = with_costs.total_bytes <= static_cast<std::size_t>(max_smem);
  const std::size_t smem = costs_shared ? with_costs.total_bytes : state_only.total_bytes;
  const bool scratch = transposed && !costs_shared;
  const int block = options.block_threads > 0 ? options.block_threads : pick_block_threads(n_cols);
  stats->shared_costs = costs_shared;
  stats->block_threads = block;

  const auto n_entries = static_cast<std::size_t>(batch * entries);
  const auto n_pairs = static_cast<std::size_t>(batch * n_rows);
  const bool dev = options.on_device;
  const std::size_t own_costs = (dev ? 0 : n_entries) + (scratch ? n_entries : 0);
  use_device_with_memory(options.device, own_costs * sizeof(T) +
                                             (dev ? 0 : 2 * n_pairs * sizeof(std::int64_t)) +
                                             static_cast<std::size_t>(batch) * sizeof(int));
  stream s(reinterpret_cast<cudaStream_t>(options.stream), dev);
  device_buffer<T> d_cost(dev ? 0 : n_entries), d_oriented(scratch ? n_entries : 0);
  device_buffer<std::int64_t> d_rows(dev ? 0 : n_pairs), d_cols(dev ? 0 : n_pairs);
  device_buffer<int> d_status(static_cast<std::size_t>(batch));
  const T* const d_stack = dev ? cost : d_cost.data();
  std::int64_t* const d_row_ind = dev ? row_ind : d_rows.data();
  std::int64_t* const d_col_ind = dev ? col_ind : d_cols.data();

  auto t0 = wall_clock::now();
  if (!dev) upload_costs(d_cost.data(), cost, n_entries, s);  // returns once the copy is done
  stats->seconds_transfer = seconds_since(t0);

  t0 = wall_clock::now();
  if (scratch) {
    transpose_kernel<T><<<transpose_grid(batch, n_cols, n_rows), dim3(32, 8), 0, s>>>(
        d_stack, d_oriented.data(), batch, n_cols, n_rows);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    ++stats->kernel_launches;
  }
  sap_params<T> prm{};
  prm.cost = scratch ? d_oriented.data() : d_stack;
  prm.batch = batch;
  prm.n_rows = n_rows;
  prm.n_cols = n_cols;
  prm.load_transposed = transposed && costs_shared;
  prm.transposed = transposed;
  prm.costs_shared = costs_shared;
  prm.sign = maximize ? -1.0 : 1.0;
  prm.row_ind = d_row_ind;
  prm.col_ind = d_col_ind;
  prm.status = d_status.data();
  MATCHFLOW_CUDA_TRY(cudaFuncSetAttribute(sap_kernel<T>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(batch, 1 << 30));
  sap_kernel<T><<<grid, block, smem, s>>>(prm);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats->kernel_launches;
  s.synchronize();
  stats->seconds_solve = seconds_since(t0);

  t0 = wall_clock::now();
  std::vector<int> outcome(static_cast<std::size_t>(batch));
  if (!dev) {
    d_rows.copy_to_host(row_ind, n_pairs, s);
    d_cols.copy_to_host(col_ind, n_pairs, s);
  }
  d_status.copy_to_host(outcome.data(), outcome.size(), s);
  s.synchronize();
  stats->seconds_transfer += seconds_since(t0);

  const auto failed = std::find_if(outcome.begin(), outcome.end(), [](int o) { return o != solved; });
  if (failed == outcome.end()) return status::ok;
  stats->failed_problem = failed - outcome.begin();
  return *failed == infeasible ? status::infeasible : status::invalid_input;
}

}  // namespace

template <class T>
status gpu_batched_sap(const T* cost, std::int64_t batch, std::int64_t n_rows,
                       std::int64_t n_cols, bool maximize, const batched_lsap_options& options,
                       std::int64_t* row_ind, std::int64_t* col_ind,
                       batched_lsap_stats* stats) noexcept {
  return cuda_guarded([&] {
    return solve(cost, batch, n_rows, n_cols, maximize, options, row_ind, col_ind, stats);
  });
}

#define MATCHFLOW_GPU_BATCHED_SAP(T)                                                     \
  template status gpu_batched_sap<T>(const T*, std::int64_t, std::int64_t, std::int64_t, \
                                     bool, const batched_lsap_options&, std::int64_t*,   \
                                     std::int64_t*, batched_lsap_stats*) noexcept;
MATCHFLOW_GPU_BATCHED_SAP(double)
MATCHFLOW_GPU_BATCHED_SAP(float)
MATCHFLOW_GPU_BATCHED_SAP(std::int64_t)
MATCHFLOW_GPU_BATCHED_SAP(std::int32_t)
MATCHFLOW_GPU_BATCHED_SAP(std::uint8_t)
#undef MATCHFLOW_GPU_BATCHED_SAP

}  // namespace matchflow::cuda

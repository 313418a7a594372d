// gpu-sap on device memory: the plan of one problem shape and the launch
// over a stack already on the device (batched_dispatch.cu defines both).
// The host entry (gpu_batched_sap) only uploads and calls these; an entry
// for device-array input calls them on its own pointers and stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "lsap/batched_kernels.cuh"
#include "matchflow/batched_lsap.hpp"
#include "matchflow/status.hpp"

namespace matchflow::cuda::batched {

/// How gpu-sap runs problems of one shape on one device.
struct sap_plan {
  int n_rows = 0, n_cols = 0;  ///< the oriented problem: n_rows <= n_cols
  bool transposed = false;     ///< the caller's problems are tall (n_rows > n_cols)
  bool costs_shared = false;   ///< costs copied to shared memory
  bool scratch = false;        ///< tall and not shared: transposed into a scratch stack first
  bool maximize = false;
  std::size_t cost_size = 0;   ///< sizeof(T)
  std::size_t smem = 0;        ///< dynamic shared memory per block
  int block = 0;               ///< threads per block
  int columns_per_thread = 0;  ///< K: 1-6, 8, 10, 12 or 16
  /// Global costs only (environment, read by plan_sap; for A/B runs):
  /// MATCHFLOW_GPU_SAP_CARVEOUT = l1 (default) | driver: the smallest
  /// shared-memory carveout that holds the grid's blocks (the rest of the
  /// SM's 256 KB is L1 for the cost rows), or the driver's choice.
  bool l1_carveout = true;
  /// Blocks that run at once over all launches of the call (chunks run
  /// concurrently on their streams): what the L1 carveout must hold; 0:
  /// one launch's grid.
  std::int64_t concurrent_blocks = 0;
};

/// The plan for problems of the caller's n_rows x n_cols of `cost_size`
/// bytes per entry on options.device (options.block_threads: 0 = by size;
/// raised when too few threads for the columns).  invalid_input, with a
/// message, when the problems are too wide for the kernel.
status plan_sap(std::int64_t n_rows, std::int64_t n_cols, std::size_t cost_size, bool maximize,
                const batched_lsap_options& options, sap_plan* plan);

/// Queues gpu-sap on `s` for `batch` problems at d_cost (the caller's
/// layout, back to back), problems first_problem ... of the caller's stack;
/// d_scratch: batch problems' room when plan.scratch, else unused.  Writes
/// d_rows, d_cols (batch x min(n_rows, n_cols)) and atomicMin's each failed
/// problem into *d_failure (problem_status; the caller sets no_failure
/// first); returns the kernel launches queued.  Throws cuda_failure.
template <class T>
int launch_sap(const sap_plan& plan, const T* d_cost, T* d_scratch, std::int64_t batch,
               std::int64_t first_problem, std::int64_t* d_rows, std::int64_t* d_cols,
               unsigned long long* d_failure, cudaStream_t s);

}  // namespace matchflow::cuda::batched

// Host side of gpu-sap (device code and the algorithm: batched_kernels.cuh).
//
// plan_sap and launch_sap work on device memory and a stream
// (batched_launch.cuh): transpose the stack when the problems are tall and
// their costs stay in global memory, then one launch of sap_kernel (a block
// per problem, a grid-stride loop past the grid's size).
//
// gpu_batched_sap with a stack in the caller's GPU memory (options.on_device):
// one launch_sap on the caller's stream, reading its stack and writing its
// result arrays; nothing goes through the host but the lowest failed
// problem, eight bytes into kept pinned memory (problem_status).
// From host memory: small stacks are copied in one piece,
// then solved.  Larger ones go in up to about eight chunks of whole
// problems through pinned staging (common/host_copy.cuh, host threads
// filling one chunk while the previous one is on the bus), each chunk's
// solve queued as soon as its copy is (on a stream of its own, so that a
// chunk's kernel never waits for another's): the call then costs about the
// upload plus one problem's solve, not the two in sequence.  The pinned
// staging is kept between calls (pinned allocation costs milliseconds).
// Every call and launch is checked; buffers are RAII, from the
// stream-ordered pool (no device-wide synchronisation per free); the memory
// need is computed and checked before any allocation.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/pinned.cuh"
#include "lsap/batched_kernels.cuh"
#include "lsap/batched_launch.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/detail/environment.hpp"
#include "matchflow/timing.hpp"

namespace matchflow::cuda {
namespace batched {
namespace {

/// Threads per block: about 2.5 columns per thread, from one warp to
/// sixteen.  A search step costs one block-wide arg-min whatever the width,
/// so narrow problems take few warps (cheap barriers, none for one warp)
/// and wide ones enough to keep each thread's share of a row short
/// (benchmarks/NOTES.md, Batched).
int pick_block_threads(int n_cols) {
  const int warps = std::clamp((n_cols + 79) / 80, 1, max_warps);
  return 32 * warps;
}

/// K, the columns each of `block` threads owns: the least of the
/// instantiated 1-6, 8, 10, 12, 16 that covers n_cols.  A thread's step
/// work grows with K, absent columns included, so K stays close to
/// n_cols / block (with powers of two only, 300 columns on one warp would
/// carry 212 absent ones).
int columns_per_thread(int n_cols, int block) {
  const int needed = (n_cols + block - 1) / block;
  for (int k : {1, 2, 3, 4, 5, 6, 8, 10, 12}) {
    if (k >= needed) return k;
  }
  return max_columns_per_thread;
}

/// Grid of the tall-problem transpose (in: n_rows x n_cols per problem).
dim3 transpose_grid(std::int64_t batch, int n_rows, int n_cols) {
  return dim3(static_cast<unsigned>((n_cols + 31) / 32), static_cast<unsigned>((n_rows + 31) / 32),
              static_cast<unsigned>(std::min<std::int64_t>(batch, 65535)));
}

template <class T, int K>
void set_carveout(int percent) {
  MATCHFLOW_CUDA_TRY(cudaFuncSetAttribute(sap_kernel<T, K, false>,
                                          cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

/// Asks for the smallest shared-memory carveout that still holds every
/// block the grid puts on one SM (global costs: the rest of the SM's
/// memory is L1, which caches the cost rows a search revisits).
template <class T, int K>
void prefer_l1(const sap_plan& plan, unsigned launch_grid) {
  const std::int64_t grid = std::max<std::int64_t>(launch_grid, plan.concurrent_blocks);
  int device = 0, n_sm = 0, per_sm = 0, reserved = 0, fit = 0;
  MATCHFLOW_CUDA_TRY(cudaGetDevice(&device));
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, device));
  MATCHFLOW_CUDA_TRY(
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  MATCHFLOW_CUDA_TRY(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  // The occupancy with the driver's carveout (a previous call's may be set).
  set_carveout<T, K>(cudaSharedmemCarveoutDefault);
  MATCHFLOW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, sap_kernel<T, K, false>,
                                                                   plan.block, plan.smem));
  const auto blocks = std::clamp<std::int64_t>((grid + n_sm - 1) / n_sm, 1, std::max(fit, 1));
  const auto need = blocks * static_cast<std::int64_t>(plan.smem + reserved);
  const auto percent = std::min<std::int64_t>(100, (100 * need + per_sm - 1) / per_sm);
  set_carveout<T, K>(static_cast<int>(percent));
}

template <class T, int K, bool Shared>
void launch_k(const sap_plan& plan, const sap_params<T>& prm, unsigned grid, cudaStream_t s) {
  MATCHFLOW_CUDA_TRY(cudaFuncSetAttribute(sap_kernel<T, K, Shared>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(plan.smem)));
  if constexpr (!Shared) {
    if (plan.l1_carveout) {
      prefer_l1<T, K>(plan, grid);
    } else {
      set_carveout<T, K>(cudaSharedmemCarveoutDefault);
    }
  }
  sap_kernel<T, K, Shared><<<grid, plan.block, plan.smem, s>>>(prm);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
}

template <class T, int K>
void launch_k(const sap_plan& plan, const sap_params<T>& prm, unsigned grid, cudaStream_t s) {
  if (plan.costs_shared) {
    launch_k<T, K, true>(plan, prm, grid, s);
  } else {
    launch_k<T, K, false>(plan, prm, grid, s);
  }
}

}  // namespace

status plan_sap(std::int64_t n_rows_in, std::int64_t n_cols_in, std::size_t cost_size,
                bool maximize, const batched_lsap_options& options, sap_plan* plan) {
  sap_plan p;
  p.transposed = n_rows_in > n_cols_in;
  p.n_rows = static_cast<int>(std::min(n_rows_in, n_cols_in));
  p.n_cols = static_cast<int>(std::max(n_rows_in, n_cols_in));
  p.maximize = maximize;
  p.cost_size = cost_size;
  constexpr int max_columns = max_block_threads * max_columns_per_thread;
  if (std::max(n_rows_in, n_cols_in) > max_columns) {
    return fail(status::invalid_input, "gpu-sap: problems wider than " +
                                           std::to_string(max_columns) + " columns (use omp-sap)");
  }
  int max_smem = 0;
  MATCHFLOW_CUDA_TRY(
      cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.device));
  const smem_layout state_only(p.n_rows, p.n_cols, cost_size, false);
  if (state_only.total_bytes > static_cast<std::size_t>(max_smem)) {
    return fail(status::invalid_input, "gpu-sap: problems of " + std::to_string(p.n_cols) +
                                           " columns need " +
                                           std::to_string(state_only.total_bytes) +
                                           " bytes of shared memory per block; "
                                           "the device has " +
                                           std::to_string(max_smem) + " (use omp-sap)");
  }
  const smem_layout with_costs(p.n_rows, p.n_cols, cost_size, true);
  p.costs_shared = with_costs.total_bytes <= static_cast<std::size_t>(max_smem);
  p.smem = p.costs_shared ? with_costs.total_bytes : state_only.total_bytes;
  p.scratch = p.transposed && !p.costs_shared;
  // The search keeps at most max_columns_per_thread columns per thread in
  // registers: a block asked for fewer threads is widened.
  const int needed =
      32 * ((p.n_cols + 32 * max_columns_per_thread - 1) / (32 * max_columns_per_thread));
  p.block = std::max(
      options.block_threads > 0 ? options.block_threads : pick_block_threads(p.n_cols), needed);
  p.columns_per_thread = columns_per_thread(p.n_cols, p.block);
  const int carveout =
      matchflow::detail::env_choice("MATCHFLOW_GPU_SAP_CARVEOUT", {"l1", "driver"});
  if (carveout < 0) {
    return fail(status::invalid_input, "gpu-sap: MATCHFLOW_GPU_SAP_CARVEOUT must be l1 or driver");
  }
  p.l1_carveout = carveout == 0;
  *plan = p;
  return status::ok;
}

template <class T>
int launch_sap(const sap_plan& plan, const T* d_cost, T* d_scratch, std::int64_t batch,
               std::int64_t first_problem, std::int64_t* d_rows, std::int64_t* d_cols,
               unsigned long long* d_failure, cudaStream_t s) {
  if (batch <= 0) return 0;
  int launches = 0;
  if (plan.scratch) {
    transpose_kernel<T><<<transpose_grid(batch, plan.n_cols, plan.n_rows), dim3(32, 8), 0, s>>>(
        d_cost, d_scratch, batch, plan.n_cols, plan.n_rows);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    ++launches;
  }
  sap_params<T> prm{};
  prm.cost = plan.scratch ? d_scratch : d_cost;
  prm.batch = batch;
  prm.first_problem = first_problem;
  prm.n_rows = plan.n_rows;
  prm.n_cols = plan.n_cols;
  prm.load_transposed = plan.transposed && plan.costs_shared;
  prm.transposed = plan.transposed;
  prm.costs_shared = plan.costs_shared;
  prm.sign = plan.maximize ? -1.0 : 1.0;
  prm.row_ind = d_rows;
  prm.col_ind = d_cols;
  prm.first_failure = d_failure;
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(batch, 1 << 30));
  switch (plan.columns_per_thread) {  // the values columns_per_thread returns
    case 1: launch_k<T, 1>(plan, prm, grid, s); break;
    case 2: launch_k<T, 2>(plan, prm, grid, s); break;
    case 3: launch_k<T, 3>(plan, prm, grid, s); break;
    case 4: launch_k<T, 4>(plan, prm, grid, s); break;
    case 5: launch_k<T, 5>(plan, prm, grid, s); break;
    case 6: launch_k<T, 6>(plan, prm, grid, s); break;
    case 8: launch_k<T, 8>(plan, prm, grid, s); break;
    case 10: launch_k<T, 10>(plan, prm, grid, s); break;
    case 12: launch_k<T, 12>(plan, prm, grid, s); break;
    default: launch_k<T, max_columns_per_thread>(plan, prm, grid, s); break;
  }
  return launches + 1;
}

}  // namespace batched

namespace {

using namespace batched;
using wall_clock = matchflow::detail::clock_type;
using matchflow::detail::seconds_since;

/// Stacks below this many bytes, and problems above max_chunk_bytes, are
/// copied in one piece (the threads and the chunking would cost more than
/// they save; the kept staging would be too large).
constexpr std::size_t min_pipelined_bytes = std::size_t(2) << 20;
constexpr std::size_t min_chunk_bytes = std::size_t(1) << 20;
constexpr std::size_t max_chunk_bytes = std::size_t(32) << 20;
constexpr int max_lanes = 16;  ///< streams of the chunks' solves

/// Problems per chunk: about an eighth of the stack, within
/// [min_chunk_bytes, max_chunk_bytes], whole problems.
std::int64_t chunk_problems(std::int64_t batch, std::size_t problem_bytes) {
  const std::size_t total = problem_bytes * static_cast<std::size_t>(batch);
  const std::size_t target = std::clamp(total / 8, min_chunk_bytes, max_chunk_bytes);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(target / problem_bytes), 1, batch);
}

/// Uploads the stack in chunks and queues each chunk's solve behind its
/// copy; returns once every solve is done.
template <class T>
void pipelined_solve(const sap_plan& plan, const T* cost, std::int64_t batch, T* d_cost,
                     T* d_scratch, std::int64_t* d_rows, std::int64_t* d_cols,
                     unsigned long long* d_failure, cudaStream_t copy, batched_lsap_stats* stats) {
  const std::int64_t entries = static_cast<std::int64_t>(plan.n_rows) * plan.n_cols;
  const std::size_t problem_bytes = static_cast<std::size_t>(entries) * sizeof(T);
  const std::int64_t per_chunk = chunk_problems(batch, problem_bytes);
  const std::int64_t n_chunks = (batch + per_chunk - 1) / per_chunk;
  const std::size_t stage_bytes = static_cast<std::size_t>(per_chunk) * problem_bytes;

  staging_lease lease(2 * stage_bytes);  // kept between calls
  const staging stage{lease.data(), stage_bytes, 2};

  const int n_lanes = static_cast<int>(std::min<std::int64_t>(n_chunks, max_lanes));
  std::vector<std::unique_ptr<stream>> lanes;
  for (int l = 0; l < n_lanes; ++l) lanes.push_back(std::make_unique<stream>());
  event copied;
  std::int64_t chunk = 0;
  auto fill = [cost, problem_bytes](char* buf, std::size_t first, std::size_t count) {
    std::memcpy(buf, reinterpret_cast<const char*>(cost) + first * problem_bytes,
                count * problem_bytes);
    return true;
  };
  auto solve_chunk = [&](std::size_t first_problem, std::size_t count) {
    const auto first = static_cast<std::int64_t>(first_problem);
    const cudaStream_t lane = lanes[static_cast<std::size_t>(chunk++ % n_lanes)]->get();
    MATCHFLOW_CUDA_TRY(cudaEventRecord(copied.get(), copy));
    MATCHFLOW_CUDA_TRY(cudaStreamWaitEvent(lane, copied.get(), 0));
    stats->kernel_launches += launch_sap<T>(
        plan, d_cost + first * entries, plan.scratch ? d_scratch + first * entries : nullptr,
        static_cast<std::int64_t>(count), first, d_rows + first * plan.n_rows,
        d_cols + first * plan.n_rows, d_failure, lane);
  };
  auto t0 = wall_clock::now();
  staged_copy(d_cost, static_cast<std::size_t>(batch), problem_bytes,
              static_cast<std::size_t>(per_chunk), stage, fill, solve_chunk, copy);
  stats->seconds_transfer = seconds_since(t0);
  t0 = wall_clock::now();
  for (auto& lane : lanes) lane->synchronize();
  stats->seconds_solve = seconds_since(t0);  // the solves' tail past the last copy
}

template <class T>
status solve(const T* cost, std::int64_t batch, std::int64_t n_rows_in, std::int64_t n_cols_in,
             bool maximize, const batched_lsap_options& options, std::int64_t* row_ind,
             std::int64_t* col_ind, batched_lsap_stats* stats) {
  MATCHFLOW_CUDA_TRY(cudaSetDevice(options.device));
  sap_plan plan;
  if (const status st = plan_sap(n_rows_in, n_cols_in, sizeof(T), maximize, options, &plan);
      st != status::ok) {
    return st;
  }
  plan.concurrent_blocks = batch;  // the chunks' kernels overlap
  stats->shared_costs = plan.costs_shared;
  stats->block_threads = plan.block;
  const std::int64_t entries = static_cast<std::int64_t>(plan.n_rows) * plan.n_cols;

  const auto n_entries = static_cast<std::size_t>(batch * entries);
  const auto n_pairs = static_cast<std::size_t>(batch * plan.n_rows);
  const bool dev = options.on_device;
  const std::size_t own_costs = (dev ? 0 : n_entries) + (plan.scratch ? n_entries : 0);
  use_device_with_memory(options.device, own_costs * sizeof(T) +
                                             (dev ? 0 : 2 * n_pairs * sizeof(std::int64_t)) +
                                             sizeof(unsigned long long));
  stream s(reinterpret_cast<cudaStream_t>(options.stream), dev);
  pooled_allocations pool(s, options.device);  // every buffer of the call, freed on s
  device_buffer<T> d_cost(dev ? 0 : n_entries), d_scratch(plan.scratch ? n_entries : 0);
  device_buffer<std::int64_t> d_rows(dev ? 0 : n_pairs), d_cols(dev ? 0 : n_pairs);
  device_buffer<unsigned long long> d_failure(1);
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(d_failure.data(), 0xff, sizeof(unsigned long long), s));
  static_assert(no_failure == ~0ull, "the memset writes no_failure");
  std::int64_t* const d_row_ind = dev ? row_ind : d_rows.data();
  std::int64_t* const d_col_ind = dev ? col_ind : d_cols.data();

  const std::size_t problem_bytes = static_cast<std::size_t>(entries) * sizeof(T);
  if (!dev && options.pipeline && n_entries * sizeof(T) >= min_pipelined_bytes &&
      problem_bytes <= max_chunk_bytes) {  // the kept staging stays within 2 * max_chunk_bytes
    pipelined_solve(plan, cost, batch, d_cost.data(), d_scratch.data(), d_rows.data(),
                    d_cols.data(), d_failure.data(), s, stats);
  } else {
    auto t0 = wall_clock::now();
    if (!dev) upload_costs(d_cost.data(), cost, n_entries, s);  // returns once the copy is done
    stats->seconds_transfer = seconds_since(t0);
    t0 = wall_clock::now();
    stats->kernel_launches += launch_sap<T>(plan, dev ? cost : d_cost.data(), d_scratch.data(),
                                            batch, 0, d_row_ind, d_col_ind, d_failure.data(), s);
    s.synchronize();
    stats->seconds_solve = seconds_since(t0);
  }

  auto t0 = wall_clock::now();
  if (!dev) {
    d_rows.copy_to_host(row_ind, n_pairs, s);
    d_cols.copy_to_host(col_ind, n_pairs, s);
  }
  pinned_value<unsigned long long> failure;  // eight bytes back, whatever the batch
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(failure.get(), d_failure.data(), sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, s));
  s.synchronize();
  stats->seconds_transfer += seconds_since(t0);

  const unsigned long long first = *failure.get();
  if (first == no_failure) return status::ok;
  stats->failed_problem = static_cast<std::int64_t>(first / 4);
  return first % 4 == infeasible ? status::infeasible : status::invalid_input;
}

}  // namespace

template <class T>
status gpu_batched_sap(const T* cost, std::int64_t batch, std::int64_t n_rows, std::int64_t n_cols,
                       bool maximize, const batched_lsap_options& options, std::int64_t* row_ind,
                       std::int64_t* col_ind, batched_lsap_stats* stats) noexcept {
  return cuda_guarded([&] {
    return solve(cost, batch, n_rows, n_cols, maximize, options, row_ind, col_ind, stats);
  });
}

#define MATCHFLOW_INSTANTIATE_LAUNCH_SAP(T)                                                 \
  template int batched::launch_sap<T>(const batched::sap_plan&, const T*, T*, std::int64_t, \
                                      std::int64_t, std::int64_t*, std::int64_t*,           \
                                      unsigned long long*, cudaStream_t);
MATCHFLOW_GPU_BATCHED_TYPES(MATCHFLOW_INSTANTIATE_GPU_BATCHED_SAP)
MATCHFLOW_GPU_BATCHED_TYPES(MATCHFLOW_INSTANTIATE_LAUNCH_SAP)
#undef MATCHFLOW_INSTANTIATE_LAUNCH_SAP

}  // namespace matchflow::cuda

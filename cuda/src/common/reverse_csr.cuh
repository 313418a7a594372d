// The reverse (transposed) CSR of a directed graph on the device: a
// histogram of heads, an exclusive scan (CUB), then each arc scattered into
// its head's list.  Shared by gpu-pr (paper 002, section III-B: reverse
// arcs mapped to their forward arcs) and the pivot SCC's backward search.
#pragma once

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstddef>

#include "common/error.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda {
namespace {  // kernels of a header: one copy per translation unit

/// In-degree histogram over heads (grid over arcs).
__global__ void indegree_kernel(offset_t m, const vertex_t* __restrict__ heads,
                                unsigned long long* __restrict__ counts) {
  for (offset_t a = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; a < m;
       a += offset_t(gridDim.x) * blockDim.x) {
    atomicAdd(&counts[heads[a]], 1ull);
  }
}

/// Scatters each arc into its head's reverse list.  One warp per tail vertex
/// (grid-stride), lanes over its arcs; the cursors start at rptr.  rarc
/// (the arc's forward position) is skipped when null.
/// sync: cursor (atomicAdd); each slot of rtail/rarc is written once.
__global__ void reverse_fill_kernel(vertex_t n, const offset_t* __restrict__ ptr,
                                    const vertex_t* __restrict__ heads,
                                    unsigned long long* __restrict__ cursor,
                                    vertex_t* __restrict__ rtail, offset_t* __restrict__ rarc) {
  const int lane = threadIdx.x % warp_size;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_size;
  for (std::int64_t u = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
       u < n; u += warps) {
    for (offset_t a = ptr[u] + lane; a < ptr[u + 1]; a += warp_size) {
      const offset_t pos = offset_t(atomicAdd(&cursor[heads[a]], 1ull));
      rtail[pos] = vertex_t(u);
      if (rarc) rarc[pos] = a;
    }
  }
}

}  // namespace

/// Bytes of CUB scratch that build_reverse_csr needs for n vertices (at
/// least 1); the current device's.
inline std::size_t reverse_csr_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(
      nullptr, bytes, static_cast<const unsigned long long*>(nullptr),
      static_cast<offset_t*>(nullptr), n + 1));
  return std::max<std::size_t>(bytes, 1);
}

/// rptr (n + 1), rtail (m) and, when not null, rarc (m) of the graph
/// (ptr, heads), queued on `s`; cursor: n + 1 counters of scratch, temp:
/// reverse_csr_temp_bytes(n) bytes.  Returns the kernel launches queued.
inline int build_reverse_csr(std::int64_t n, offset_t m, const offset_t* ptr,
                             const vertex_t* heads, offset_t* rptr, vertex_t* rtail,
                             offset_t* rarc, unsigned long long* cursor, void* temp,
                             std::size_t temp_bytes, cudaStream_t s) {
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long) * (n + 1), s));
  indegree_kernel<<<std::min<unsigned>(blocks_for(m), 65535u), threads_per_block, 0, s>>>(
      m, heads, cursor);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, cursor, rptr, n + 1, s));
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(cursor, rptr, sizeof(offset_t) * n,
                                     cudaMemcpyDeviceToDevice, s));
  reverse_fill_kernel<<<std::min<unsigned>(blocks_for(n * warp_size), 65535u),
                        threads_per_block, 0, s>>>(vertex_t(n), ptr, heads, cursor, rtail, rarc);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  return 3;
}

}  // namespace matchflow::cuda

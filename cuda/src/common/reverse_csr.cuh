// The reverse (transposed) CSR of a directed graph on the device: a
// histogram of heads, an exclusive scan (CUB), then each arc scattered into
// its head's list.  Shared by gpu-pr (paper 002, section III-B: reverse
// arcs mapped to their forward arcs) and the pivot SCC's backward search.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cub/device/device_scan.cuh>

#include "common/error.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda {
namespace {  // kernels of a header: one copy per translation unit

/// Slot of this lane among the active lanes of its warp that bump the same
/// counter: one atomicAdd per distinct key and warp, not one per lane.  Hub
/// vertices (a segmentation grid's sink: 2^20 in-arcs) would otherwise
/// serialise a million atomics on one address.
__device__ unsigned long long aggregated_increment(unsigned long long* counters, vertex_t key) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, key);
  const int leader = __ffs(peers) - 1;
  const int lane = threadIdx.x % warp_size;
  unsigned long long base = 0;
  if (lane == leader) {
    base = atomicAdd(&counters[key], static_cast<unsigned long long>(__popc(peers)));
  }
  base = __shfl_sync(active, base, leader);
  return base + __popc(peers & ((1u << lane) - 1u));
}

/// In-degree histogram over heads (grid over arcs).
__global__ void indegree_kernel(offset_t m, const vertex_t* __restrict__ heads,
                                unsigned long long* __restrict__ counts) {
  for (offset_t a = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; a < m;
       a += offset_t(gridDim.x) * blockDim.x) {
    aggregated_increment(counts, heads[a]);
  }
}

/// The tail of arc a: the last u with ptr[u] <= a (binary search; vertices
/// without arcs share their ptr value with the next one).
__device__ vertex_t tail_of(offset_t a, vertex_t n, const offset_t* __restrict__ ptr) {
  vertex_t lo = 0, hi = n;  // ptr[lo] <= a < ptr[hi]
  while (hi - lo > 1) {
    const vertex_t mid = lo + (hi - lo) / 2;
    if (ptr[mid] <= a)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Scatters each arc into its head's reverse list; the cursors start at
/// rptr.  A grid over arcs, not a warp per tail: the source of a
/// segmentation grid has 2^20 arcs, which one warp scattered in about 10 ms.
/// rarc (the arc's forward position) is skipped when null.
/// sync: cursor (warp-aggregated atomicAdd); each slot of rtail/rarc is
/// written once.
__global__ void reverse_fill_kernel(vertex_t n, offset_t m, const offset_t* __restrict__ ptr,
                                    const vertex_t* __restrict__ heads,
                                    unsigned long long* __restrict__ cursor,
                                    vertex_t* __restrict__ rtail, offset_t* __restrict__ rarc) {
  for (offset_t a = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; a < m;
       a += offset_t(gridDim.x) * blockDim.x) {
    const offset_t pos = offset_t(aggregated_increment(cursor, heads[a]));
    rtail[pos] = tail_of(a, n, ptr);
    if (rarc) rarc[pos] = a;
  }
}

}  // namespace

/// Bytes of CUB scratch that build_reverse_csr needs for n vertices (at
/// least 1); the current device's.
inline std::size_t reverse_csr_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes,
                                                   static_cast<const unsigned long long*>(nullptr),
                                                   static_cast<offset_t*>(nullptr), n + 1));
  return std::max<std::size_t>(bytes, 1);
}

/// rptr (n + 1), rtail (m) and, when not null, rarc (m) of the graph
/// (ptr, heads), queued on `s`; cursor: n + 1 counters of scratch, temp:
/// reverse_csr_temp_bytes(n) bytes.  Returns the kernel launches queued.
inline int build_reverse_csr(std::int64_t n, offset_t m, const offset_t* ptr, const vertex_t* heads,
                             offset_t* rptr, vertex_t* rtail, offset_t* rarc,
                             unsigned long long* cursor, void* temp, std::size_t temp_bytes,
                             cudaStream_t s) {
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long) * (n + 1), s));
  indegree_kernel<<<std::min<unsigned>(blocks_for(m), 65535u), threads_per_block, 0, s>>>(m, heads,
                                                                                          cursor);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, cursor, rptr, n + 1, s));
  MATCHFLOW_CUDA_TRY(
      cudaMemcpyAsync(cursor, rptr, sizeof(offset_t) * n, cudaMemcpyDeviceToDevice, s));
  reverse_fill_kernel<<<std::min<unsigned>(blocks_for(m), 65535u), threads_per_block, 0, s>>>(
      vertex_t(n), m, ptr, heads, cursor, rtail, rarc);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  return 3;
}

}  // namespace matchflow::cuda

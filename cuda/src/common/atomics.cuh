// Intentional races go through these relaxed atomics (as ECL codes do), so
// that every raced load/store is visible in the source and the compiler
// cannot cache or tear it.
#pragma once

#include <cooperative_groups.h>

#include <cuda/atomic>

namespace matchflow::cuda {

template <class T>
__device__ inline T atomic_read(const T* addr) {
  return ::cuda::atomic_ref<T, ::cuda::thread_scope_device>(*const_cast<T*>(addr))
      .load(::cuda::memory_order_relaxed);
}

template <class T>
__device__ inline void atomic_write(T* addr, T value) {
  ::cuda::atomic_ref<T, ::cuda::thread_scope_device>(*addr).store(value,
                                                                  ::cuda::memory_order_relaxed);
}

/// *addr as one block reads it: one load per block, not per warp (every
/// warp of a large grid loading one word after a grid.sync() queues
/// thousands of loads on one L2 slice: reading gpu-tree's control words
/// once per block took about 2 us off each of its steps).  Every
/// thread of the block calls it; the caller's next barrier (grid.sync)
/// keeps the shared copy stable until everyone has read it, so two calls
/// of one T need a barrier between them.
template <class T>
__device__ inline T block_read(const T* addr) {
  __shared__ T value;
  if (threadIdx.x == 0) value = atomic_read(addr);
  __syncthreads();
  return value;
}

/// A place in a list whose length is `*counter`, for each thread of the
/// warp calling it now: one atomicAdd per warp.
__device__ inline int claim_place(int* counter) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group active = cg::coalesced_threads();
  int base = 0;
  if (active.thread_rank() == 0) base = atomicAdd(counter, static_cast<int>(active.size()));
  return active.shfl(base, 0) + static_cast<int>(active.thread_rank());
}

/// Appends `v` to `list`, whose length is `*counter` (claim_place).
template <class T>
__device__ inline void push(T* list, int* counter, T v) {
  list[claim_place(counter)] = v;
}

}  // namespace matchflow::cuda

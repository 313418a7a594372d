// Intentional races go through these relaxed atomics (as ECL codes do), so
// that every raced load/store is visible in the source and the compiler
// cannot cache or tear it.
#pragma once

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

}  // namespace matchflow::cuda

// A pinned host copy of one small struct (a control block that the host
// reads back with one asynchronous copy per launch).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <vector>

#include "common/error.cuh"

namespace matchflow::cuda {

namespace detail {
/// Small pinned blocks kept for the process and handed out one per
/// pinned_value.  cudaMallocHost and cudaFreeHost cost far more than the
/// readbacks they serve (an allocation pins and maps memory; cudaFreeHost
/// synchronises the device), so a solve takes a kept block instead of
/// allocating its own; blocks are never freed (a static's destructor would
/// run after the CUDA runtime's), and there are as many as solves ever ran
/// at once.
class pinned_blocks {
 public:
  static constexpr std::size_t block_bytes = 256;

  static void* take() {
    pinned_blocks& kept = instance();
    {
      std::lock_guard<std::mutex> lock(kept.m_);
      if (!kept.free_.empty()) {
        void* p = kept.free_.back();
        kept.free_.pop_back();
        return p;
      }
    }
    void* p = nullptr;
    MATCHFLOW_CUDA_TRY(cudaMallocHost(&p, block_bytes));
    return p;
  }
  static void give_back(void* p) noexcept {
    pinned_blocks& kept = instance();
    std::lock_guard<std::mutex> lock(kept.m_);
    try {
      kept.free_.push_back(p);
    } catch (...) {  // no memory for the list: the block is dropped, never freed
    }
  }

 private:
  static pinned_blocks& instance() {
    static auto* kept = new pinned_blocks;  // never destroyed (see above)
    return *kept;
  }
  std::mutex m_;
  std::vector<void*> free_;
};
}  // namespace detail

/// One T in pinned host memory, for the lifetime of the object (a kept
/// block: see detail::pinned_blocks).  The caller must not give it back
/// while a copy into it is in flight (every user synchronises its stream
/// after each readback).
template <class T>
class pinned_value {
  static_assert(sizeof(T) <= detail::pinned_blocks::block_bytes, "pinned block too small");

 public:
  pinned_value() : ptr_(static_cast<T*>(detail::pinned_blocks::take())) {}
  ~pinned_value() {
    if (ptr_) detail::pinned_blocks::give_back(ptr_);
  }
  pinned_value(const pinned_value&) = delete;
  pinned_value& operator=(const pinned_value&) = delete;
  T* get() const { return ptr_; }

  /// Copies *d_value here and waits for it: a solver's read of its control block.
  const T& read_back(const T* d_value, cudaStream_t stream) {
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(ptr_, d_value, sizeof(T), cudaMemcpyDeviceToHost, stream));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream));
    return *ptr_;
  }

 private:
  T* ptr_ = nullptr;
};

}  // namespace matchflow::cuda

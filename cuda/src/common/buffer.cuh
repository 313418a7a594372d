// RAII device memory and streams: nothing leaks on an error path.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "common/error.cuh"

namespace matchflow::cuda {

/// One stream per solve; destroyed (after synchronizing) when it goes out of
/// scope, unless it is the caller's (borrowed: neither waited for nor destroyed
/// here, so the caller's later work on it stays ordered after ours).
class stream {
 public:
  stream() { MATCHFLOW_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  stream(cudaStream_t caller, bool borrowed) : s_(caller), owned_(!borrowed) {
    if (owned_) MATCHFLOW_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~stream() {
    if (s_ && owned_) {
      cudaStreamSynchronize(s_);
      cudaStreamDestroy(s_);
    }
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }
  void synchronize() const { MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
  bool owned_ = true;
};

/// Typed device allocation of `size` elements (uninitialised).
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t size) : size_(size) {
    if (size_ > 0) MATCHFLOW_CUDA_TRY(cudaMalloc(&ptr_, size_ * sizeof(T)));
  }
  ~device_buffer() {
    if (ptr_) cudaFree(ptr_);
  }
  device_buffer(device_buffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  void copy_from_host(const T* h_src, std::size_t n, cudaStream_t s) {
    if (n) MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(ptr_, h_src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  void copy_to_host(T* h_dst, std::size_t n, cudaStream_t s) const {
    if (n) MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(h_dst, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  }
  void fill_bytes(int value, cudaStream_t s) {
    if (size_) MATCHFLOW_CUDA_TRY(cudaMemsetAsync(ptr_, value, bytes(), s));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

/// Selects `device` for this thread and checks that `bytes` fit in its free
/// memory; throws cuda_failure(cudaErrorMemoryAllocation) naming the sizes
/// otherwise, so the caller gets MemoryError before any allocation.
void use_device_with_memory(int device, std::size_t bytes);

}  // namespace matchflow::cuda

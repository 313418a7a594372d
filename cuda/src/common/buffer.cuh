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

namespace detail {
/// The stream device_buffers of this thread allocate on (pooled_allocations).
struct allocation_scope {
  bool pooled = false;
  cudaStream_t stream = nullptr;
};
inline thread_local allocation_scope current_allocation;
}  // namespace detail

/// While alive, device_buffers made on this thread come from the device's
/// stream-ordered pool (cudaMallocAsync on `s`) and go back to it on `s`
/// (cudaFreeAsync): no device-wide synchronisation per free (cudaFree has
/// one), and memory kept by the pool from one call to the next (its release
/// threshold is raised; use_device_with_memory trims it when a problem would
/// not fit otherwise).  Every use of such a buffer must be ordered on `s`.
/// A device without memory pools keeps cudaMalloc.
class pooled_allocations {
 public:
  pooled_allocations(cudaStream_t s, int device);
  ~pooled_allocations() { detail::current_allocation = previous_; }
  pooled_allocations(const pooled_allocations&) = delete;
  pooled_allocations& operator=(const pooled_allocations&) = delete;

 private:
  detail::allocation_scope previous_;
};

/// Typed device allocation of `size` elements (uninitialised).
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t size) : size_(size) {
    if (size_ == 0) return;
    const detail::allocation_scope& scope = detail::current_allocation;
    if (scope.pooled) {
      MATCHFLOW_CUDA_TRY(
          cudaMallocAsync(reinterpret_cast<void**>(&ptr_), size_ * sizeof(T), scope.stream));
      pooled_ = true;
      stream_ = scope.stream;
    } else {
      MATCHFLOW_CUDA_TRY(cudaMalloc(&ptr_, size_ * sizeof(T)));
    }
  }
  ~device_buffer() {
    if (!ptr_) return;
    if (pooled_) {
      cudaFreeAsync(ptr_, stream_);
    } else {
      cudaFree(ptr_);
    }
  }
  device_buffer(device_buffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        pooled_(other.pooled_),
        stream_(other.stream_) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
    std::swap(pooled_, other.pooled_);
    std::swap(stream_, other.stream_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  void copy_from_host(const T* h_src, std::size_t n, cudaStream_t s) {
    if (n)
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(ptr_, h_src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  void copy_to_host(T* h_dst, std::size_t n, cudaStream_t s) const {
    if (n)
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(h_dst, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  }
  void fill_bytes(int value, cudaStream_t s) {
    if (size_) MATCHFLOW_CUDA_TRY(cudaMemsetAsync(ptr_, value, bytes(), s));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  bool pooled_ = false;  ///< from the stream-ordered pool, freed on stream_
  cudaStream_t stream_ = nullptr;
};

/// Selects `device` for this thread and checks that `bytes` fit in its free
/// memory; throws cuda_failure(cudaErrorMemoryAllocation) naming the sizes
/// otherwise, so the caller gets MemoryError before any allocation.
void use_device_with_memory(int device, std::size_t bytes);

/// Whether `bytes` fit in the current device's free memory, counting what
/// the stream-ordered pool keeps from earlier calls as free (it is handed
/// back first when needed).
bool device_has_memory(std::size_t bytes);

}  // namespace matchflow::cuda

// A pinned host copy of one small struct (a control block that the host
// reads back with one asynchronous copy per launch).
#pragma once

#include <cuda_runtime.h>

#include "common/error.cuh"

namespace matchflow::cuda {

template <class T>
class pinned_value {
 public:
  pinned_value() { MATCHFLOW_CUDA_TRY(cudaMallocHost(&ptr_, sizeof(T))); }
  ~pinned_value() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  pinned_value(const pinned_value&) = delete;
  pinned_value& operator=(const pinned_value&) = delete;
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

}  // namespace matchflow::cuda

// Wall-clock phases of a GPU solve, as the stats report them.
#pragma once

#include <cuda_runtime.h>

#include <chrono>

#include "common/error.cuh"

namespace matchflow::cuda {

/// Wall-clock phases of a solve: each mark synchronizes the stream first.
class phase_clock {
 public:
  explicit phase_clock(cudaStream_t s) : s_(s), last_(std::chrono::steady_clock::now()) {}
  /// Seconds since the previous mark (or construction), after the stream drains.
  double mark() {
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s_));
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return dt;
  }

 private:
  cudaStream_t s_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace matchflow::cuda

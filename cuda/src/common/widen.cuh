// Widening on the device of values that crossed the host link narrowed
// (lsap/cost_upload.cuh's costs, the maximum flow's capacities:
// upload_parts' int64_as_int32 parts).
#pragma once

#include <cstddef>

namespace matchflow::cuda {

/// out[k] = in[k] for k < n.
template <class In, class Out>
__global__ void widen_kernel(const In* in, Out* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += stride)
    out[k] = in[k];
}

}  // namespace matchflow::cuda

// Host -> device upload of integer cost matrices, shared by the dense GPU
// assignment solvers (hungarian_dispatch.cu, auction_dispatch.cu): int64
// costs go as int32 when every value fits (half the bytes to copy and to
// read on the device), and their range is found in the same pass for the
// exact-int64 overflow checks.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "matchflow/lsap.hpp"

namespace matchflow::cuda {

/// Integer costs: as int32 into the first half of d_dst when every value
/// fits (returns true), else as int64; *max_abs receives max |c| either way.
inline bool upload_int_costs(std::int64_t* d_dst, const std::int64_t* h_src, std::size_t n_items,
                      std::uint64_t* max_abs, cudaStream_t s) {
  if (n_items * sizeof(std::int64_t) < (std::size_t(32) << 20)) {
    // Small: narrow (or not) on this thread, then one pageable copy; pinned
    // staging costs more than it saves here.
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    for (std::size_t k = 0; k < n_items; ++k) {
      lo = h_src[k] < lo ? h_src[k] : lo;
      hi = h_src[k] > hi ? h_src[k] : hi;
    }
    *max_abs = std::max(matchflow::detail::magnitude(lo), matchflow::detail::magnitude(hi));
    const bool narrow = lo >= std::numeric_limits<std::int32_t>::min() &&
                        hi <= std::numeric_limits<std::int32_t>::max();
    if (narrow) {
      std::vector<std::int32_t> small(h_src, h_src + n_items);
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, small.data(), n_items * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, s));
      MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // `small` is read by the copy
    } else {
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, h_src, n_items * sizeof(std::int64_t),
                                         cudaMemcpyHostToDevice, s));
      MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    }
    return narrow;
  }
  std::mutex m;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  auto merge = [&](std::int64_t a, std::int64_t b) {
    std::lock_guard<std::mutex> g(m);
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  };
  const bool narrow = staged_upload(
      d_dst, n_items, sizeof(std::int32_t),
      [&](char* buf, std::size_t first, std::size_t count) {
        auto* out = reinterpret_cast<std::int32_t*>(buf);
        const std::int64_t* in = h_src + first;
        std::int64_t a = std::numeric_limits<std::int64_t>::max();
        std::int64_t b = std::numeric_limits<std::int64_t>::min();
        for (std::size_t k = 0; k < count; ++k) {
          const std::int64_t x = in[k];
          a = x < a ? x : a;
          b = x > b ? x : b;
          out[k] = static_cast<std::int32_t>(x);
        }
        merge(a, b);
        return a >= std::numeric_limits<std::int32_t>::min() &&
               b <= std::numeric_limits<std::int32_t>::max();
      },
      s);
  if (!narrow) {
    staged_upload(
        d_dst, n_items, sizeof(std::int64_t),
        [&](char* buf, std::size_t first, std::size_t count) {
          const std::int64_t* in = h_src + first;
          std::memcpy(buf, in, count * sizeof(std::int64_t));
          std::int64_t a = std::numeric_limits<std::int64_t>::max();
          std::int64_t b = std::numeric_limits<std::int64_t>::min();
          for (std::size_t k = 0; k < count; ++k) {
            a = in[k] < a ? in[k] : a;
            b = in[k] > b ? in[k] : b;
          }
          merge(a, b);
          return true;
        },
        s);
  }
  *max_abs = std::max(matchflow::detail::magnitude(lo), matchflow::detail::magnitude(hi));
  return narrow;
}

}  // namespace matchflow::cuda

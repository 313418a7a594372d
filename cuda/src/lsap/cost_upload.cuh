// Host -> device upload of integer cost matrices, shared by the dense GPU
// assignment solvers (hungarian_dispatch.cu, auction_dispatch.cu): int64
// costs go as int32 when every value fits (half the bytes to copy and to
// read on the device), and their range is found in the same pass for the
// exact-int64 overflow checks.  The host pass is narrow_costs.hpp's; large
// matrices go through host_copy.cuh's staged_upload.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "lsap/narrow_costs.hpp"
#include "matchflow/lsap.hpp"

namespace matchflow::cuda {

/// Integer costs: as int32 into the first half of d_dst when every value
/// fits (returns true), else as int64; *max_abs receives max |c| either way.
/// `shape`: the staging of large matrices; `Streaming`: narrow_to_int32's
/// stores (benchmarks/upload_sweep.cu times the alternatives).
template <bool Streaming = true>
bool upload_int_costs(std::int64_t* d_dst, const std::int64_t* h_src, std::size_t n_items,
                      std::uint64_t* max_abs, cudaStream_t s, upload_shape shape = {}) {
  int_range range;
  bool narrow = true;
  if (n_items * sizeof(std::int64_t) < (std::size_t(32) << 20)) {
    // Small: narrow (or not) on this thread, then one pageable copy; pinned
    // staging costs more than it saves here.
    std::unique_ptr<std::int32_t[]> small(new std::int32_t[n_items]);
    narrow = narrow_to_int32<Streaming>(h_src, small.get(), n_items, &range);
    if (!narrow) range = range_of(h_src, n_items);
    const void* src = narrow ? static_cast<const void*>(small.get()) : h_src;
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, src, n_items * (narrow ? sizeof(std::int32_t) : sizeof(std::int64_t)),
                                       cudaMemcpyHostToDevice, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // `small` is read by the copy
  } else {
    std::mutex m;
    auto merge = [&](const int_range& r) {
      std::lock_guard<std::mutex> g(m);
      range.lo = std::min(range.lo, r.lo);
      range.hi = std::max(range.hi, r.hi);
    };
    narrow = staged_upload(
        d_dst, n_items, sizeof(std::int32_t),
        [&](char* buf, std::size_t first, std::size_t count) {
          int_range r;
          if (!narrow_to_int32<Streaming>(h_src + first, reinterpret_cast<std::int32_t*>(buf),
                                          count, &r))
            return false;  // abandons the int32 upload; the int64 one takes the range
          merge(r);
          return true;
        },
        s, shape);
    if (!narrow) {
      range = int_range{};
      staged_upload(
          d_dst, n_items, sizeof(std::int64_t),
          [&](char* buf, std::size_t first, std::size_t count) {
            std::memcpy(buf, h_src + first, count * sizeof(std::int64_t));
            merge(range_of(h_src + first, count));
            return true;
          },
          s, shape);
    }
  }
  *max_abs = std::max(matchflow::detail::magnitude(range.lo), matchflow::detail::magnitude(range.hi));
  return narrow;
}

}  // namespace matchflow::cuda

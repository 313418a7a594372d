// Host -> device upload of integer cost matrices, shared by the dense GPU
// assignment solvers (hungarian_dispatch.cu, auction_dispatch.cu): int64
// costs go as int16 or int32 when every value fits (a quarter or half of
// the bytes to copy and to read on the device), and their range is found in
// the same pass for the exact-int64 overflow checks.  The host pass is
// narrow_ints.hpp's; large matrices go through host_copy.cuh's
// staged_upload.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "common/narrow_ints.hpp"
#include "common/widen.cuh"
#include "matchflow/lsap.hpp"

namespace matchflow::cuda {

/// Where an int16 upload puts the costs in an int64 cost buffer of n_items:
/// past the int32 layout's end, so that an int16 head can be widened into
/// the int32 layout without overlap.
inline std::int16_t* int16_costs(std::int64_t* d_cost, std::size_t n_items) {
  return reinterpret_cast<std::int16_t*>(reinterpret_cast<char*>(d_cost) +
                                         n_items * sizeof(std::int32_t));
}

/// Integer costs into d_dst (room for n_items int64) as the narrowest of
/// int16 (only when `narrowest` is 2 and the matrix is staged: at
/// int16_costs(d_dst, n_items)), int32 (at d_dst) and int64 that holds
/// every value; returns its size in bytes.  *max_abs receives max |c|.
/// An int16 upload that meets a value outside int16 goes on as int32 from
/// the chunk it stopped at and the int16 head is widened on the device, so
/// the host reads each value about once (the chunks in flight twice); a
/// value outside int32 restarts the upload as int64.  `shape`: the staging
/// of large matrices; `Streaming`: narrow_to's stores
/// (benchmarks/upload_sweep.cu times the alternatives).
template <bool Streaming = true>
int upload_int_costs(std::int64_t* d_dst, const std::int64_t* h_src, std::size_t n_items,
                     std::uint64_t* max_abs, cudaStream_t s, int narrowest = 2,
                     copy_shape shape = cost_upload_copy) {
  int_range range;
  int width = sizeof(std::int64_t);
  auto* d32 = reinterpret_cast<std::int32_t*>(d_dst);
  if (n_items * sizeof(std::int64_t) < (std::size_t(32) << 20)) {
    // Small: narrow (or not) on this thread, then one pageable copy; pinned
    // staging costs more than it saves here.
    std::unique_ptr<std::int32_t[]> small(new std::int32_t[n_items]);
    const void* src = h_src;
    if (narrow_to<std::int32_t, Streaming>(h_src, small.get(), n_items, &range)) {
      width = sizeof(std::int32_t);
      src = small.get();
    } else {
      range = range_of(h_src, n_items);
    }
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, src, n_items * width, cudaMemcpyHostToDevice, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // `small` is read by the copy
  } else {
    std::mutex m;
    auto merge = [&](const int_range& r) {
      std::lock_guard<std::mutex> g(m);
      range.lo = std::min(range.lo, r.lo);
      range.hi = std::max(range.hi, r.hi);
    };
    // Items [from, n_items) narrowed to Out at `to`; returns the count copied.
    auto narrowed = [&](auto* to, std::size_t from) {
      using Out = std::remove_pointer_t<decltype(to)>;
      return staged_upload(
          to + from, n_items - from, sizeof(Out),
          [&](char* buf, std::size_t first, std::size_t count) {
            int_range r;
            if (!narrow_to<Out, Streaming>(h_src + from + first, reinterpret_cast<Out*>(buf), count,
                                           &r))
              return false;  // abandons this width; a wider one goes on
            merge(r);
            return true;
          },
          s, shape);
    };
    // int16 is tried only when the first values fit: wider random costs
    // show it there, and an abandoned attempt costs up to two chunks of
    // host work (the workers are through a chunk before it is checked).
    const int_range head = range_of(h_src, std::min<std::size_t>(n_items, 4096));
    const bool try16 = narrowest <= 2 && head.lo >= std::numeric_limits<std::int16_t>::min() &&
                       head.hi <= std::numeric_limits<std::int16_t>::max();
    auto* d16 = int16_costs(d_dst, n_items);
    const std::size_t done16 = try16 ? narrowed(d16, 0) : 0;
    if (done16 == n_items) {
      width = sizeof(std::int16_t);
    } else if (done16 + narrowed(d32, done16) == n_items) {
      width = sizeof(std::int32_t);
      if (done16 > 0) {
        widen_kernel<<<blocks_for(static_cast<std::int64_t>(done16)), threads_per_block, 0, s>>>(
            d16, d32, done16);
        MATCHFLOW_CUDA_CHECK_LAUNCH();
        MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
      }
    } else {
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
  *max_abs =
      std::max(matchflow::detail::magnitude(range.lo), matchflow::detail::magnitude(range.hi));
  return width;
}

}  // namespace matchflow::cuda

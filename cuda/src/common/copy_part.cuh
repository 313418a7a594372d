// The arrays of a host <-> device copy, as the copying functions of
// host_copy.cuh and populate_ahead.cuh take them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace matchflow::cuda {

/// One array of a copy: `bytes` bytes from `src` to `dst` (one of them in
/// host memory, the other on the device, as the copying function says).
struct copy_part {
  void* dst;
  const void* src;
  std::size_t bytes;  ///< of dst
  /// upload_parts: src holds bytes / 4 int64 values, which go to dst as int32.
  bool int64_as_int32 = false;
};

/// Calls f(part, at, length, out) for each piece of the parts' concatenation
/// that lies in [begin, end): bytes [at, at + length) of `part`, at offset
/// `out` from `begin`.
template <class F>
inline void for_each_piece(const std::vector<copy_part>& parts, std::size_t begin, std::size_t end,
                           F&& f) {
  std::size_t start = 0;  // offset of the part in the concatenation
  for (const copy_part& p : parts) {
    const std::size_t lo = std::max(begin, start), hi = std::min(end, start + p.bytes);
    if (lo < hi) f(p, lo - start, hi - lo, lo - begin);
    start += p.bytes;
    if (start >= end) return;
  }
}

inline std::size_t total_bytes(const std::vector<copy_part>& parts) {
  std::size_t total = 0;
  for (const copy_part& p : parts) total += p.bytes;
  return total;
}

/// Downloads of at least this many bytes in all are staged; smaller ones are
/// plain cudaMemcpyAsync calls (waking the worker threads costs more).
constexpr std::size_t min_staged_copy = std::size_t(4) << 20;
/// Uploads are staged from 1 MiB (H200 host: 1 MiB 0.072 ms staged against
/// 0.082 plain, 256 KiB 0.048 against 0.027; results/h200/copy-sweep.txt),
/// and those that narrow int64 values to int32 from 512 KiB: the plain
/// alternative sends all the int64 bytes (512 KiB: 0.049 against 0.083 ms).
constexpr std::size_t min_staged_upload = std::size_t(1) << 20;
constexpr std::size_t min_narrowed_copy = std::size_t(512) << 10;

}  // namespace matchflow::cuda

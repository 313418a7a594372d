// Host pass of the narrowed uploads (lsap/cost_upload.cuh: the dense
// assignment's costs; host_copy.cuh's upload_parts: the maximum flow's
// capacities): int64 values written as int16 or int32 into a pinned staging
// chunk, with their range.  Plain C++ (no CUDA), so that
// benchmarks/upload_sweep.cu and its host-only check can include it as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace matchflow::cuda {

/// The lowest and highest value of a block of costs.
struct int_range {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
};

/// Writes in[k] as Out (int32 or int16) to out[k] for k < count.  True when
/// every value fits Out, with *range the block's range; false otherwise (out
/// and *range are then unspecified: the caller uploads a wider type).
///
/// Why this shape: the fit test is (x + 2^(b-1)) >> b == 0 (b bits of Out)
/// ORed over the block and the range is taken on the narrowed values, both
/// of which vectorise on plain x86-64 (SSE2); the int64 min/max of the
/// obvious loop does not (no 64-bit compare before SSE4.2).  `Streaming`
/// (x86; elsewhere plain stores) writes with non-temporal stores: the pinned
/// chunk is only read by the DMA, and plain stores first read each line in
/// (read-for-ownership: for int32, 2 instead of 1.5 bytes of memory traffic
/// per byte read), though the chunk then leaves the cache before the DMA
/// reads it.  Streaming stores were the fastest (benchmarks/upload_sweep.cu;
/// NOTES.md, "Host copies").
template <class Out, bool Streaming = false>
inline bool narrow_to(const std::int64_t* in, Out* out, std::size_t count, int_range* range) {
  static_assert(std::is_same_v<Out, std::int32_t> || std::is_same_v<Out, std::int16_t>);
  constexpr int bits = 8 * sizeof(Out);
  constexpr std::uint64_t half = std::uint64_t{1} << (bits - 1);
  if (count == 0) return true;
  std::uint64_t outside = 0;
  Out lo = std::numeric_limits<Out>::max();
  Out hi = std::numeric_limits<Out>::min();
  auto one = [&](std::size_t k) {
    const std::int64_t x = in[k];
    outside |= (static_cast<std::uint64_t>(x) + half) >> bits;
    const auto y = static_cast<Out>(x);
    lo = y < lo ? y : lo;
    hi = y > hi ? y : hi;
    out[k] = y;
  };
  std::size_t k = 0;
#if defined(__SSE2__)
  if constexpr (Streaming) {
    // Non-temporal stores need 16-byte aligned targets: the head goes one by one.
    for (; k < count && (reinterpret_cast<std::uintptr_t>(out + k) & 15) != 0; ++k) one(k);
    constexpr std::size_t step = 16 / sizeof(Out);  // values per 16-byte store
    const __m128i bias = _mm_set1_epi64x(static_cast<long long>(half));
    __m128i bad = _mm_setzero_si128();
    __m128i vlo = _mm_set1_epi32(0), vhi = vlo;  // replaced by the first group's values
    auto low_halves = [&](std::size_t at) {      // in[at..at+4) as int32, and their fit test
      const __m128i p = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + at));
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + at + 2));
      bad = _mm_or_si128(bad, _mm_srli_epi64(_mm_add_epi64(p, bias), bits));
      bad = _mm_or_si128(bad, _mm_srli_epi64(_mm_add_epi64(q, bias), bits));
      return _mm_castps_si128(
          _mm_shuffle_ps(_mm_castsi128_ps(p), _mm_castsi128_ps(q), _MM_SHUFFLE(2, 0, 2, 0)));
    };
    auto group = [&](std::size_t at) {  // `step` values, narrowed
      if constexpr (sizeof(Out) == 4) {
        return low_halves(at);
      } else {  // values that fit int16 pass the signed saturation unchanged
        const __m128i a = low_halves(at);
        return _mm_packs_epi32(a, low_halves(at + 4));
      }
    };
    auto min_max = [&](__m128i y) {
      if constexpr (sizeof(Out) == 4) {
        const __m128i lt = _mm_cmplt_epi32(y, vlo), gt = _mm_cmpgt_epi32(y, vhi);
        vlo = _mm_or_si128(_mm_and_si128(lt, y), _mm_andnot_si128(lt, vlo));
        vhi = _mm_or_si128(_mm_and_si128(gt, y), _mm_andnot_si128(gt, vhi));
      } else {
        vlo = _mm_min_epi16(vlo, y);
        vhi = _mm_max_epi16(vhi, y);
      }
    };
    if (k + step <= count) {
      vlo = vhi = group(k);
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + k), vlo);
      for (k += step; k + step <= count; k += step) {
        const __m128i y = group(k);
        min_max(y);
        _mm_stream_si128(reinterpret_cast<__m128i*>(out + k), y);
      }
      _mm_sfence();  // the streamed stores are visible before the chunk goes to the DMA
      alignas(16) Out l[step], h[step];
      alignas(16) std::uint64_t b[2];
      _mm_store_si128(reinterpret_cast<__m128i*>(l), vlo);
      _mm_store_si128(reinterpret_cast<__m128i*>(h), vhi);
      _mm_store_si128(reinterpret_cast<__m128i*>(b), bad);
      outside |= b[0] | b[1];
      for (std::size_t i = 0; i < step; ++i) {
        lo = l[i] < lo ? l[i] : lo;
        hi = h[i] > hi ? h[i] : hi;
      }
    }
  }
#endif
  for (; k < count; ++k) one(k);
  if (outside != 0) return false;
  range->lo = lo;
  range->hi = hi;
  return true;
}

/// The range of a block of int64 costs (the int64 upload's pass).
inline int_range range_of(const std::int64_t* in, std::size_t count) {
  int_range r;
  for (std::size_t k = 0; k < count; ++k) {
    r.lo = in[k] < r.lo ? in[k] : r.lo;
    r.hi = in[k] > r.hi ? in[k] : r.hi;
  }
  return r;
}

}  // namespace matchflow::cuda

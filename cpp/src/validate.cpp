// check_compressed: one parallel pass over the ids and the offsets;
// widen_offsets, first_negative: one over the values; capacity_sum: one over
// an arc range.
#include "matchflow/validate.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "id_bounds.hpp"
#include "openmp.hpp"

namespace matchflow {
namespace {

// Below this many entries a parallel region costs more than the pass.
constexpr std::int64_t parallel_min = 1 << 16;

// The per-thread passes, compiled for AVX2 and the baseline and picked when
// the library loads: with SSE2 alone the int64 comparison of the offsets
// does not vectorize and the int32 min / max takes a compare and a blend,
// and the passes ran at a third of NumPy's max (2-core dev host, 2048^2
// segmentation_grid: 12.7 ms for its 21M ids and 4.2M offsets).
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define MATCHFLOW_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#define MATCHFLOW_INLINED_INTO_CLONES __attribute__((always_inline)) inline
#else
#define MATCHFLOW_SIMD_CLONES
#define MATCHFLOW_INLINED_INTO_CLONES inline
#endif

/// The ids' least and greatest, inlined into each clone of bounds_of (a
/// clone's callee compiles for the clone's target only when inlined).
template <class Id>
MATCHFLOW_INLINED_INTO_CLONES detail::id_bounds bounds_in(const Id* ids, offset_t count) {
  Id lo = std::numeric_limits<Id>::max();
  Id hi = std::numeric_limits<Id>::min();
  for (offset_t e = 0; e < count; ++e) {
    lo = std::min(lo, ids[e]);
    hi = std::max(hi, ids[e]);
  }
  return {lo, hi};
}

/// Whether ptr[v + 1] < ptr[v] for some v in [0, count).
MATCHFLOW_SIMD_CLONES bool goes_down(const offset_t* ptr, std::int64_t count) {
  bool down = false;
  for (std::int64_t v = 0; v < count; ++v) down |= ptr[v + 1] < ptr[v];
  return down;
}

/// The OR of all values: its sign bit is set iff one of them is negative.
MATCHFLOW_SIMD_CLONES std::uint64_t or_of(const std::int64_t* values, std::int64_t count) {
  std::uint64_t bits = 0;
  for (std::int64_t i = 0; i < count; ++i) bits |= std::uint64_t(values[i]);
  return bits;
}
MATCHFLOW_SIMD_CLONES std::uint32_t or_of(const std::int32_t* values, std::int64_t count) {
  std::uint32_t bits = 0;
  for (std::int64_t i = 0; i < count; ++i) bits |= std::uint32_t(values[i]);
  return bits;
}

/// Chunk c of `team` equal chunks of [0, n): its first index.
std::int64_t chunk_start(std::int64_t n, int team, int c) { return n * c / team; }

/// The team for a pass over n entries: one thread below parallel_min.
int pass_team(std::int64_t n, int threads) {
  return n >= parallel_min ? detail::team_size(threads) : 1;
}

template <class Id>
void id_range(const Id* ids, offset_t nnz, int threads, std::int64_t* lo, std::int64_t* hi) {
  const int team = pass_team(nnz, threads);
  std::int64_t min_id = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_id = std::numeric_limits<std::int64_t>::min();
#pragma omp parallel for num_threads(team) schedule(static, 1) reduction(min : min_id) \
    reduction(max : max_id)
  for (int c = 0; c < team; ++c) {
    const std::int64_t first = chunk_start(nnz, team, c);
    const detail::id_bounds b =
        detail::bounds_of(ids + first, chunk_start(nnz, team, c + 1) - first);
    min_id = std::min(min_id, b.lo);
    max_id = std::max(max_id, b.hi);
  }
  *lo = min_id;
  *hi = max_id;
}

bool non_decreasing(const offset_t* ptr, std::int64_t n_major, int threads) {
  const int team = pass_team(n_major, threads);
  bool down = false;
#pragma omp parallel for num_threads(team) schedule(static, 1) reduction(|| : down)
  for (int c = 0; c < team; ++c) {
    const std::int64_t first = chunk_start(n_major, team, c);
    down = goes_down(ptr + first, chunk_start(n_major, team, c + 1) - first) || down;
  }
  return !down;
}

template <class Id>
status check(const offset_t* ptr, std::int64_t n_major, const Id* ids, offset_t nnz,
             std::int64_t n_minor, int threads) noexcept {
  if (nnz > 0) {
    std::int64_t lo = 0, hi = 0;
    id_range(ids, nnz, threads, &lo, &hi);
    if (hi >= n_minor) {
      return fail(status::invalid_input, "indices must be < " + std::to_string(n_minor));
    }
    if (lo < 0) return fail(status::invalid_input, "indices must be >= 0");
  }
  // SciPy skips this when nnz == 0, where e.g. ptr = [0, 1, 0] would send an
  // algorithm past the end of `ids`: checked always.
  if (!non_decreasing(ptr, n_major, threads)) {
    return fail(status::invalid_input, "indptr must be a non-decreasing sequence");
  }
  return status::ok;
}

}  // namespace

status check_compressed(const offset_t* ptr, std::int64_t n_major, const std::int32_t* ids,
                        offset_t nnz, std::int64_t n_minor, int threads) noexcept {
  return check(ptr, n_major, ids, nnz, n_minor, threads);
}

status check_compressed(const offset_t* ptr, std::int64_t n_major, const std::int64_t* ids,
                        offset_t nnz, std::int64_t n_minor, int threads) noexcept {
  return check(ptr, n_major, ids, nnz, n_minor, threads);
}

void widen_offsets(const std::int32_t* in, std::int64_t count, offset_t* out,
                   int threads) noexcept {
#pragma omp parallel for num_threads(pass_team(count, threads)) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) out[i] = in[i];
}

namespace {

template <class T>
std::int64_t first_negative_in(const T* values, std::int64_t n, int threads) {
  using bits_t = decltype(or_of(values, 0));
  const int team = pass_team(n, threads);
  bits_t bits = 0;
#pragma omp parallel for num_threads(team) schedule(static, 1) reduction(| : bits)
  for (int c = 0; c < team; ++c) {
    const std::int64_t first = chunk_start(n, team, c);
    bits |= or_of(values + first, chunk_start(n, team, c + 1) - first);
  }
  if (static_cast<std::make_signed_t<bits_t>>(bits) >= 0) return -1;
  return std::find_if(values, values + n, [](T v) { return v < 0; }) - values;
}

template <class T>
void capacity_sum_of(const T* caps, const std::int32_t* heads, std::int64_t n, std::int32_t skip,
                     int threads, std::uint64_t* high, std::uint64_t* low) {
  using wide = unsigned __int128;  // n < 2^63 terms below 2^63 each
  wide total = 0;
#pragma omp parallel num_threads(pass_team(n, threads))
  {
    const auto [c, team] = detail::thread_in_team();
    wide sum = 0;
    for (std::int64_t k = chunk_start(n, team, c); k < chunk_start(n, team, c + 1); ++k) {
      if (heads[k] != skip) sum += wide(caps[k]);
    }
#pragma omp critical(matchflow_capacity_sum)
    total += sum;
  }
  *high = std::uint64_t(total >> 64);
  *low = std::uint64_t(total);
}

}  // namespace

std::int64_t first_negative(const std::int64_t* values, std::int64_t n, int threads) noexcept {
  return first_negative_in(values, n, threads);
}

std::int64_t first_negative(const std::int32_t* values, std::int64_t n, int threads) noexcept {
  return first_negative_in(values, n, threads);
}

namespace detail {

MATCHFLOW_SIMD_CLONES id_bounds bounds_of(const std::int32_t* ids, offset_t count) {
  return bounds_in(ids, count);
}

MATCHFLOW_SIMD_CLONES id_bounds bounds_of(const std::int64_t* ids, offset_t count) {
  return bounds_in(ids, count);
}

}  // namespace detail

void capacity_sum(const std::int64_t* caps, const std::int32_t* heads, std::int64_t n,
                  std::int32_t skip, int threads, std::uint64_t* high,
                  std::uint64_t* low) noexcept {
  capacity_sum_of(caps, heads, n, skip, threads, high, low);
}

void capacity_sum(const std::int32_t* caps, const std::int32_t* heads, std::int64_t n,
                  std::int32_t skip, int threads, std::uint64_t* high,
                  std::uint64_t* low) noexcept {
  capacity_sum_of(caps, heads, n, skip, threads, high, low);
}

}  // namespace matchflow

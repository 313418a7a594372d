// check_compressed: one parallel pass over the ids and the offsets;
// first_negative: one over the values.
#include "matchflow/validate.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "openmp.hpp"

namespace matchflow {
namespace {

// Below this many entries a parallel region costs more than the pass.
constexpr std::int64_t parallel_min = 1 << 16;

template <class Id>
void id_range(const Id* ids, offset_t nnz, int team, std::int64_t* lo, std::int64_t* hi) {
  Id min_id = std::numeric_limits<Id>::max(), max_id = std::numeric_limits<Id>::min();
#pragma omp parallel for num_threads(team) if (nnz >= parallel_min) schedule(static) \
    reduction(min : min_id) reduction(max : max_id)
  for (offset_t e = 0; e < nnz; ++e) {
    min_id = std::min(min_id, ids[e]);
    max_id = std::max(max_id, ids[e]);
  }
  *lo = min_id;
  *hi = max_id;
}

bool non_decreasing(const offset_t* ptr, std::int64_t n_major, int team) {
  bool down = false;
#pragma omp parallel for num_threads(team) if (n_major >= parallel_min) schedule(static) \
    reduction(|| : down)
  for (std::int64_t v = 0; v < n_major; ++v) down = down || ptr[v + 1] < ptr[v];
  return !down;
}

template <class Id>
status check(const offset_t* ptr, std::int64_t n_major, const Id* ids, offset_t nnz,
             std::int64_t n_minor, int threads) noexcept {
  const int team = detail::team_size(threads);
  if (nnz > 0) {
    std::int64_t lo = 0, hi = 0;
    id_range(ids, nnz, team, &lo, &hi);
    if (hi >= n_minor) {
      return fail(status::invalid_input, "indices must be < " + std::to_string(n_minor));
    }
    if (lo < 0) return fail(status::invalid_input, "indices must be >= 0");
  }
  // SciPy skips this when nnz == 0, where e.g. ptr = [0, 1, 0] would send an
  // algorithm past the end of `ids`: checked always.
  if (!non_decreasing(ptr, n_major, team)) {
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

std::int64_t first_negative(const std::int64_t* values, std::int64_t n, int threads) noexcept {
  const int team = detail::team_size(threads);
  // The OR of all values has the sign bit iff one is negative: a reduction
  // that vectorizes with plain SSE2 (an int64 min does not, before AVX-512).
  std::uint64_t bits = 0;
#pragma omp parallel for num_threads(team) if (n >= parallel_min) schedule(static) \
    reduction(| : bits)
  for (std::int64_t i = 0; i < n; ++i) bits |= std::uint64_t(values[i]);
  if (std::int64_t(bits) >= 0) return -1;
  return std::find_if(values, values + n, [](std::int64_t v) { return v < 0; }) - values;
}

}  // namespace matchflow

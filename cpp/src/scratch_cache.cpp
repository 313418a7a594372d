// The host scratch cache behind big_array_of: blocks freed by one call are
// kept, already paged in, for the next (the host-side counterpart of the
// stream-ordered pool the CUDA code keeps, buffer.cuh).  Repeated calls on
// graphs of similar size then skip the page faults of first touch; the
// cap (MATCHFLOW_HOST_CACHE_MB, 0 turns the cache off) bounds what stays
// resident between calls, and matchflow.free_host_cache() hands it back.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "big_array.hpp"
#include "matchflow/backend.hpp"
#include "matchflow/detail/kept_memory.hpp"
#include "matchflow/detail/per_process.hpp"

namespace matchflow::detail {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;
// Blocks below this go straight back to malloc, whose heap reuses them.
constexpr std::size_t least_kept = mib;

/// MATCHFLOW_HOST_CACHE_MB, by default 1 GiB or a sixteenth of physical memory.
std::size_t cap_bytes() { return kept_cap("MATCHFLOW_HOST_CACHE_MB", 1024, 16); }

struct scratch_cache {
  std::mutex mutex;
  std::vector<scratch_block> kept;  ///< oldest first
  std::size_t kept_bytes = 0;
};

/// The process's cache (a child of fork() starts one of its own).
scratch_cache& cache() { return per_process<scratch_cache>(); }

}  // namespace

scratch_block acquire_scratch(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (bytes >= least_kept) {
    bytes = (bytes + 2 * mib - 1) / (2 * mib) * (2 * mib);  // sizes in 2 MiB steps reuse better
    scratch_cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    const auto best = best_fit(c.kept, bytes);
    if (best != c.kept.end()) {
      const scratch_block block = *best;
      c.kept.erase(best);
      c.kept_bytes -= block.bytes;
      return block;
    }
  }
  void* p = std::malloc(bytes);
  if (p == nullptr) {
    free_scratch_cache();  // what the cache keeps may be what is missing
    p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
  }
  return {p, bytes};
}

void release_scratch(scratch_block block) noexcept {
  if (block.data == nullptr) return;
  const std::size_t cap = cap_bytes();
  const bool keep = block.bytes >= least_kept && block.bytes <= cap;
  scratch_cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  while (!c.kept.empty() && c.kept_bytes + (keep ? block.bytes : 0) > cap) {  // oldest out first
    std::free(c.kept.front().data);
    c.kept_bytes -= c.kept.front().bytes;
    c.kept.erase(c.kept.begin());
  }
  if (keep) {
    try {
      c.kept.push_back(block);
      c.kept_bytes += block.bytes;
      return;
    } catch (...) {  // no room to record it: freed below
    }
  }
  std::free(block.data);
}

std::size_t free_scratch_cache() noexcept {
  scratch_cache& c = cache();
  std::vector<scratch_block> kept;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    kept.swap(c.kept);
    c.kept_bytes = 0;
  }
  std::size_t bytes = 0;
  for (const scratch_block& b : kept) {
    std::free(b.data);
    bytes += b.bytes;
  }
  return bytes;
}

}  // namespace matchflow::detail

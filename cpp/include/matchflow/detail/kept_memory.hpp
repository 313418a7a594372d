// The rules of the memory kept between calls (the host scratch cache,
// cpp/src/scratch_cache.cpp; the page-locked result blocks,
// cuda/src/common/pinned_results.cu): how much may be kept, and which kept
// block a request reuses.
#pragma once

#ifdef __linux__
#include <unistd.h>
#endif

#include <algorithm>
#include <cstddef>
#include <vector>

#include "matchflow/detail/environment.hpp"

namespace matchflow::detail {

/// The cap in bytes: the environment variable `env` in MiB when set to a
/// number >= 0, else `ceiling_mib` MiB or physical memory / `ram_share`,
/// whichever is less.  Read at every use, so that one process can compare
/// caps.
inline std::size_t kept_cap(const char* env, std::size_t ceiling_mib, std::size_t ram_share) {
  constexpr std::size_t mib = std::size_t(1) << 20;
  const double mb = env_number(env, -1, 0);
  if (mb >= 0) return std::size_t(mb * double(mib));
  std::size_t cap = ceiling_mib * mib;
#ifdef __linux__
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    cap = std::min(cap, std::size_t(pages) * std::size_t(page) / ram_share);
  }
#endif
  return cap;
}

/// The smallest of `kept` (blocks with a `bytes` field) that holds `bytes`
/// without wasting more than half of itself; kept.end() when none does.
template <class Block>
typename std::vector<Block>::iterator best_fit(std::vector<Block>& kept, std::size_t bytes) {
  auto best = kept.end();
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    if (it->bytes >= bytes && it->bytes <= 2 * bytes &&
        (best == kept.end() || it->bytes < best->bytes)) {
      best = it;
    }
  }
  return best;
}

}  // namespace matchflow::detail

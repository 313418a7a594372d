// The reuse rule of the memory kept between calls (the host scratch cache,
// cpp/src/scratch_cache.cpp; the page-locked result blocks,
// cuda/src/common/pinned_results.cu).
#pragma once

#include <cstddef>
#include <vector>

namespace matchflow::detail {

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

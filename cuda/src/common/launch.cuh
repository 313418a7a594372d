// Grid sizing with 64-bit arithmetic.
#pragma once

#include <cstdint>

namespace matchflow::cuda {

constexpr int threads_per_block = 256;
constexpr int warp_size = 32;

/// Blocks needed for `work` items at `per_block` items per block.
inline unsigned int blocks_for(std::int64_t work, int per_block = threads_per_block) {
  const std::int64_t b = (work + per_block - 1) / per_block;
  return static_cast<unsigned int>(b > 0 ? b : 1);
}

}  // namespace matchflow::cuda

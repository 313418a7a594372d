// Large scratch arrays left uninitialised, kept for reuse between calls
// (scratch_cache.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace matchflow::detail {

/// A block of at least the bytes asked for: from the scratch cache when it
/// keeps one that fits, else freshly allocated (std::bad_alloc on failure).
struct scratch_block {
  void* data;
  std::size_t bytes;  ///< the block's whole size, which may exceed the request
};
scratch_block acquire_scratch(std::size_t bytes);

/// Hands a block back: kept for the next call while the cache's cap allows
/// (MATCHFLOW_HOST_CACHE_MB), else freed.
void release_scratch(scratch_block block) noexcept;

/// Frees every block the cache keeps; returns the bytes freed.
std::size_t free_scratch_cache() noexcept;

/// Hands a big_array's storage back to the scratch cache.
struct scratch_deleter {
  std::size_t bytes = 0;
  void operator()(void* p) const noexcept { release_scratch({p, bytes}); }
};

/// An uninitialised array of trivially constructible T (every slot written
/// before read), allocated by big_array_of.
template <class T>
using big_array = std::unique_ptr<T[], scratch_deleter>;

/// `count` slots of T, from the scratch cache.  The maximum-flow codes'
/// residual graph (36 bytes an input arc) and the flow matrix's transpose
/// (16 bytes) are first written by every thread at scattered places: in
/// fresh memory that is one 4 KiB page fault per 113 arcs, about half of
/// the residual graph's build (benchmarks/NOTES.md, "Host scratch cache").
template <class T>
big_array<T> big_array_of(std::size_t count) {
  static_assert(std::is_trivially_default_constructible_v<T>);
  const scratch_block block = acquire_scratch(count * sizeof(T));
  return big_array<T>(static_cast<T*>(block.data), scratch_deleter{block.bytes});
}

}  // namespace matchflow::detail

// Large scratch arrays left uninitialised, optionally on transparent huge
// pages (big_array_of).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace matchflow::detail {

/// Frees a big_array's storage.
struct free_deleter {
  void operator()(void* p) const { std::free(p); }
};

/// An uninitialised array of trivially constructible T (every slot written
/// before read), allocated for big_array_of.
template <class T>
using big_array = std::unique_ptr<T[], free_deleter>;

/// `count` slots of T.  With MATCHFLOW_HUGE_PAGES=1 (Linux), aligned to
/// 2 MiB and marked for transparent huge pages before its first touch: the
/// maximum-flow codes' residual graph (36 bytes an input arc) and the flow
/// matrix's transpose (16 bytes) are first written by every thread at
/// scattered places, one 4 KiB page fault per 113 arcs.  Dev host, pr on
/// one thread, segmentation 1024^2 (5.2M arcs), setup 0.097-0.110 s ->
/// 0.044-0.056 s (five runs each, twice; once 0.20 s, min of three), the
/// flow-matrix share of "other" 0.117 -> 0.078 s.  An A/B switch, off by
/// default: with the kernel's default defrag setting a huge-page fault may
/// compact memory synchronously; untimed at 16 threads.
template <class T>
big_array<T> big_array_of(std::size_t count) {
  static_assert(std::is_trivially_default_constructible_v<T>);
  const std::size_t bytes = std::max<std::size_t>(1, count * sizeof(T));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const char* env = std::getenv("MATCHFLOW_HUGE_PAGES");
  constexpr std::size_t huge = std::size_t(1) << 21;
  if (env != nullptr && std::atoi(env) != 0 && bytes >= huge) {
    const std::size_t rounded = (bytes + huge - 1) / huge * huge;
    void* p = std::aligned_alloc(huge, rounded);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: ignored where unsupported
    return big_array<T>(static_cast<T*>(p));
  }
#endif
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return big_array<T>(static_cast<T*>(p));
}

}  // namespace matchflow::detail

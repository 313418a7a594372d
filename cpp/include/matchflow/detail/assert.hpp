// Preconditions of the core, stated where they are assumed (OR-Tools'
// DCHECK): checked in builds configured with MATCHFLOW_ASSERTS=ON (a debug
// build; CI runs the CPU suite on one) and compiled out otherwise.  The
// Python layer validates every input once, so a failed assertion is a bug
// in matchflow, not in the caller's data: it reports where and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace matchflow::detail {

[[noreturn]] inline void assertion_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "matchflow: precondition failed: %s (%s:%d)\n", condition, file, line);
  std::abort();
}

}  // namespace matchflow::detail

#ifdef MATCHFLOW_ENABLE_ASSERTS
#define MATCHFLOW_ASSERT(condition) \
  ((condition) ? void(0) : ::matchflow::detail::assertion_failed(#condition, __FILE__, __LINE__))
#else
#define MATCHFLOW_ASSERT(condition) ((void)0)
#endif

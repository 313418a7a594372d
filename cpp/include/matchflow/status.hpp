// Status codes returned by every matchflow entry point.  No exception, exit
// or printf crosses the C++ API: callers get a status and, for anything but
// `ok`, a human-readable message from last_error() (per calling thread).
#pragma once

#include <string>

namespace matchflow {

enum class status : int {
  ok = 0,
  infeasible = 1,
  invalid_input = 2,
  overflow = 3,
  out_of_memory = 4,
  cuda_unavailable = 5,
  cuda_error = 6,
};

/// Message describing the last non-ok status returned on this thread.
const char* last_error() noexcept;

/// Records `message` for last_error() and returns `code`, so that error
/// paths read `return fail(status::cuda_error, "...")`.
status fail(status code, const std::string& message) noexcept;

/// Runs `body` (which returns a status) and converts escaping exceptions:
/// std::bad_alloc -> out_of_memory, anything else -> invalid_input with
/// its what() text.  Every entry point of the library is wrapped in it.
template <class Body>
status guarded(Body&& body) noexcept;

}  // namespace matchflow

#include "matchflow/detail/guarded.hpp"

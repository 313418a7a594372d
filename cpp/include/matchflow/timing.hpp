// Wall-clock phase timing for the stats structs (CPU algorithms and GPU host drivers).
#pragma once

#include <chrono>

namespace matchflow::detail {

using clock_type = std::chrono::steady_clock;

/// Seconds elapsed since `start`.
inline double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace matchflow::detail

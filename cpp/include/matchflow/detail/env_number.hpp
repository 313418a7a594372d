// The core's A/B overrides and tuning knobs, read from the environment (the
// OpenMP and the CUDA code alike).
#pragma once

#include <cstdlib>

namespace matchflow::detail {

/// The variable `name` when it is a number of at least `least`, else
/// `fallback` (unset, empty or malformed values change nothing).
inline double env_number(const char* name, double fallback, double least) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const double x = std::strtod(env, &end);
  return *end == '\0' && x >= least ? x : fallback;
}

}  // namespace matchflow::detail

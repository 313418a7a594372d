// The one reader of the environment variables the core honours (the README's
// "Environment variables" lists them all).  Unset or empty variables, and
// malformed values of the numeric ones, change nothing.
#pragma once

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace matchflow::detail {

/// The variable `name`, or nullptr when it is unset or empty.
inline const char* env_text(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || *env == '\0' ? nullptr : env;
}

/// The variable `name` when it is a number of at least `least`, else
/// `fallback`.
inline double env_number(const char* name, double fallback, double least) {
  const char* env = env_text(name);
  if (env == nullptr) return fallback;
  char* end = nullptr;
  const double x = std::strtod(env, &end);
  return *end == '\0' && x >= least ? x : fallback;
}

/// The index in `choices` of the variable `name` (0, the default, when
/// unset), or -1 for a value that is none of them.
inline int env_choice(const char* name, std::initializer_list<const char*> choices) {
  const char* env = env_text(name);
  if (env == nullptr) return 0;
  int index = 0;
  for (const char* c : choices) {
    if (std::strcmp(env, c) == 0) return index;
    ++index;
  }
  return -1;
}

}  // namespace matchflow::detail

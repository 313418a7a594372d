#include "matchflow/status.hpp"

namespace matchflow {
namespace {
thread_local std::string last_message;
}

const char* last_error() noexcept { return last_message.c_str(); }

status fail(status code, const std::string& message) noexcept {
  try {
    last_message = message;
  } catch (...) {
    // Out of memory while recording the message: keep the code at least.
  }
  return code;
}

}  // namespace matchflow

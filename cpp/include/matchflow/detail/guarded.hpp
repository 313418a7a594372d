#pragma once

#include <exception>
#include <new>

namespace matchflow {

template <class Body>
status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(status::out_of_memory, "out of host memory");
  } catch (const std::exception& e) {
    return fail(status::invalid_input, e.what());
  } catch (...) {
    return fail(status::invalid_input, "unknown C++ exception");
  }
}

}  // namespace matchflow

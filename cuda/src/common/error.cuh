// Checking CUDA calls.  Inside cuda/ a failed call throws cuda_failure;
// every entry point runs its body through cuda_guarded(), which turns the
// exception into status::cuda_error (or out_of_memory) with the CUDA error
// text in last_error().  Nothing is thrown across the library's API.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "matchflow/status.hpp"

namespace matchflow::cuda {

struct cuda_failure : std::runtime_error {
  cudaError_t code;
  cuda_failure(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

inline void throw_on_error(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  throw cuda_failure(code, std::string("CUDA error ") + cudaGetErrorName(code) + " (" +
                               cudaGetErrorString(code) + ") in " + call + " at " + file + ":" +
                               std::to_string(line));
}

/// Runs `body` (returning status) and maps CUDA failures to statuses.  After
/// a failure the stream's pending work may still reference freed buffers, so
/// the device is synchronized before RAII destructors run (they run inside
/// body, hence the synchronize happens in cuda_failure's handler only for
/// sticky errors, where nothing can run any more anyway).
template <class Body>
status cuda_guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const cuda_failure& e) {
    cudaGetLastError();  // clear a non-sticky error so later calls work
    const bool oom = e.code == cudaErrorMemoryAllocation;
    return fail(oom ? status::out_of_memory : status::cuda_error, e.what());
  } catch (const std::bad_alloc&) {
    return fail(status::out_of_memory, "out of host memory");
  } catch (const std::invalid_argument& e) {  // a device input found malformed on the device
    return fail(status::invalid_input, e.what());
  } catch (const std::exception& e) {
    return fail(status::cuda_error, e.what());
  } catch (...) {
    return fail(status::cuda_error, "unknown exception in CUDA code");
  }
}

}  // namespace matchflow::cuda

/// Checks a CUDA runtime call; throws cuda_failure on error.
#define MATCHFLOW_CUDA_TRY(call) \
  ::matchflow::cuda::throw_on_error((call), #call, __FILE__, __LINE__)

/// Checks the launch that was just made (configuration errors, not results).
#define MATCHFLOW_CUDA_CHECK_LAUNCH() MATCHFLOW_CUDA_TRY(cudaPeekAtLastError())

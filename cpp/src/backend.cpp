// Build and machine facts; the CUDA half comes from cuda/ (or cuda_stub.cpp).
#include "matchflow/backend.hpp"

#include <cstring>

#include "big_array.hpp"
#include "matchflow/detail/cuda_backend.hpp"

#ifdef _OPENMP
#include <omp.h>
#include <pthread.h>
#endif

namespace matchflow {
namespace {

#if defined(_OPENMP) && (_OPENMP >= 201811 || (defined(__GNUC__) && __GNUC__ >= 9))
// fork() after an OpenMP parallel region leaves the child's team pointing at
// threads the child does not have: libgomp's next parallel region there
// waits for them forever (Python's multiprocessing forks by default on Linux
// before 3.14; tests/test_flow.py, test_fork_child_solves).  So before
// every fork the forking thread hands its team back (OpenMP 5.0's
// omp_pause_resource_all; a no-op when it has none), and parent and child
// each start a fresh team at their next parallel region.  Registered here,
// in a file every build links in, when the module loads.
void release_team_before_fork() { omp_pause_resource_all(omp_pause_hard); }
const bool fork_handler_registered =
    pthread_atfork(release_team_before_fork, nullptr, nullptr) == 0;
#endif

}  // namespace

bool cuda_compiled() noexcept {
#ifdef MATCHFLOW_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

const char* cuda_architectures() noexcept { return cuda::architectures(); }
int cuda_device_count() noexcept { return cuda::device_count(); }

status cuda_get_device_info(int device, device_info* info) noexcept {
  return cuda::get_device_info(device, info);
}

std::size_t free_host_cache() noexcept {
  return detail::free_scratch_cache() + cuda::free_pinned_results();
}
void* take_pinned_result(std::size_t* bytes) noexcept { return cuda::take_pinned_result(bytes); }
void give_back_pinned_result(void* data, std::size_t bytes) noexcept {
  cuda::give_back_pinned_result(data, bytes);
}

bool asserts_compiled() noexcept {
#ifdef MATCHFLOW_ENABLE_ASSERTS
  return true;
#else
  return false;
#endif
}

bool openmp_compiled() noexcept {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

int openmp_max_threads() noexcept {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace matchflow

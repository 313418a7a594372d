// Build and machine facts; the CUDA half comes from cuda/ (or cuda_stub.cpp).
#include "matchflow/backend.hpp"

#include <cstring>

#include "matchflow/cuda/entry.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace matchflow {

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

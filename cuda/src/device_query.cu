// Device discovery.  Nothing here runs at import: the Python layer asks
// lazily.  Any runtime error (no driver, no device, CUDA_VISIBLE_DEVICES="")
// means "no usable device", never an abort.
#include <cstdio>
#include <cstring>
#include <string>

#include "common/buffer.cuh"
#include "matchflow/cuda/entry.hpp"

namespace matchflow::cuda {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

const char* architectures() noexcept { return MATCHFLOW_CUDA_ARCHITECTURES; }

status get_device_info(int device, device_info* info) noexcept {
  return cuda_guarded([&] {
    cudaDeviceProp prop{};
    MATCHFLOW_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
    MATCHFLOW_CUDA_TRY(cudaMemGetInfo(&info->free_memory, &info->total_memory));
    std::snprintf(info->name, sizeof(info->name), "%s", prop.name);
    info->major = prop.major;
    info->minor = prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    return status::ok;
  });
}

void use_device_with_memory(int device, std::size_t bytes) {
  MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
  std::size_t free_bytes = 0, total_bytes = 0;
  MATCHFLOW_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes) {
    throw cuda_failure(cudaErrorMemoryAllocation,
                       "the GPU cannot hold this problem: it needs " + std::to_string(bytes) +
                           " bytes of device memory, " + std::to_string(free_bytes) +
                           " of " + std::to_string(total_bytes) + " are free");
  }
}

}  // namespace matchflow::cuda

// Device discovery.  Nothing here runs at import: the Python layer asks
// lazily.  Any runtime error (no driver, no device, CUDA_VISIBLE_DEVICES="")
// means "no usable device", never an abort.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "common/buffer.cuh"
#include "matchflow/detail/cuda_backend.hpp"

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

namespace {
bool memory_pools_supported(int device) {
  int supported = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
  return supported != 0;
}
}  // namespace

pooled_allocations::pooled_allocations(cudaStream_t s, int device)
    : previous_(detail::current_allocation) {
  constexpr int max_devices = 64;
  static std::once_flag configured[max_devices];
  if (device < 0 || device >= max_devices || !memory_pools_supported(device)) return;
  std::call_once(configured[device], [device] {
    // Keep freed memory in the pool between calls (the default threshold, 0,
    // hands it back to the driver at every synchronisation).
    cudaMemPool_t pool;
    MATCHFLOW_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = UINT64_MAX;
    MATCHFLOW_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  });
  detail::current_allocation = detail::allocation_scope{true, s};
}

namespace {
/// The current device's free and total memory, after the pool's kept memory
/// is handed back if less than `bytes` is free without it.
void free_memory(int device, std::size_t bytes, std::size_t* free_bytes, std::size_t* total) {
  MATCHFLOW_CUDA_TRY(cudaMemGetInfo(free_bytes, total));
  if (bytes > *free_bytes && memory_pools_supported(device)) {
    // Memory the pool keeps from earlier calls counts as used: hand it back.
    cudaMemPool_t pool;
    MATCHFLOW_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
    MATCHFLOW_CUDA_TRY(cudaDeviceSynchronize());  // frees still in flight complete
    MATCHFLOW_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
    MATCHFLOW_CUDA_TRY(cudaMemGetInfo(free_bytes, total));
  }
}
}  // namespace

void use_device_with_memory(int device, std::size_t bytes) {
  MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
  if (bytes == 0) return;  // nothing to check: spare the driver query
  std::size_t free_bytes = 0, total_bytes = 0;
  free_memory(device, bytes, &free_bytes, &total_bytes);
  if (bytes > free_bytes) {
    throw cuda_failure(cudaErrorMemoryAllocation,
                       "the GPU cannot hold this problem: it needs " + std::to_string(bytes) +
                           " bytes of device memory, " + std::to_string(free_bytes) + " of " +
                           std::to_string(total_bytes) + " are free");
  }
}

bool device_has_memory(std::size_t bytes) {
  int device = 0;
  MATCHFLOW_CUDA_TRY(cudaGetDevice(&device));
  std::size_t free_bytes = 0, total_bytes = 0;
  free_memory(device, bytes, &free_bytes, &total_bytes);
  return bytes <= free_bytes;
}

}  // namespace matchflow::cuda

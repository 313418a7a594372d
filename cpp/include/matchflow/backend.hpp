// What this build and this machine offer.
#pragma once

#include <cstddef>

#include "matchflow/status.hpp"

namespace matchflow {

struct device_info {
  char name[256] = {0};
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int major = 0, minor = 0;
  int multiprocessors = 0;
};

bool cuda_compiled() noexcept;
/// CUDA architectures compiled in ("" without CUDA).
const char* cuda_architectures() noexcept;
/// Number of usable CUDA devices; 0 on any runtime error (no driver, no
/// device, CUDA_VISIBLE_DEVICES=""), never throws or aborts.
int cuda_device_count() noexcept;
status cuda_get_device_info(int device, device_info* info) noexcept;
/// OpenMP threads a parallel region gets by default (1 without OpenMP).
int openmp_max_threads() noexcept;
bool openmp_compiled() noexcept;
/// Whether the core checks its preconditions (MATCHFLOW_ASSERTS=ON, detail/assert.hpp).
bool asserts_compiled() noexcept;
/// Frees the host memory kept between calls: the CPU codes' scratch
/// (scratch_cache.cpp) and the page-locked blocks kept for result arrays;
/// returns the bytes freed.
std::size_t free_host_cache() noexcept;
/// Page-locked host memory for a result array that a GPU method fills, so
/// that its download is one DMA (cuda/src/common/pinned_results.cu): a
/// block of at least *bytes bytes, *bytes set to the block's size, or
/// nullptr when there is none (small arrays, the cap reached, no CUDA).
void* take_pinned_result(std::size_t* bytes) noexcept;
/// Returns a block of take_pinned_result and its size, once nothing uses it.
void give_back_pinned_result(void* data, std::size_t bytes) noexcept;

}  // namespace matchflow

// The skew test's sample of a GPU-resident CSR
// (matchflow::count_empty_sampled_rows): how many of rows 0, step, 2 step,
// ... are empty (indptr[r] == indptr[r + 1]), counted by one block that
// writes the count into pinned host memory, so the host waits for one
// launch and copies nothing: NOTES, "The whole call from GPU memory".
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "common/error.cuh"
#include "common/launch.cuh"
#include "common/pinned.cuh"
#include "matchflow/detail/cuda_backend.hpp"

namespace matchflow::cuda {

namespace {

template <typename Offset>
__global__ __launch_bounds__(threads_per_block) void count_empty_kernel(
    const Offset* __restrict__ indptr, std::int64_t count, std::int64_t step, long long* empty) {
  long long mine = 0;
  for (std::int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const std::int64_t r = i * step;
    mine += indptr[r] == indptr[r + 1];
  }
  using reduce = cub::BlockReduce<long long, threads_per_block>;
  __shared__ typename reduce::TempStorage scratch;
  const long long total = reduce(scratch).Sum(mine);
  if (threadIdx.x == 0) *empty = total;
}

}  // namespace

status count_empty_sampled_rows(const raw_csr& g, std::int64_t step, int device,
                                std::uintptr_t stream, std::int64_t* empty) noexcept {
  return cuda_guarded([&] {
    const std::int64_t count = (g.n_rows + step - 1) / step;
    *empty = 0;
    if (count == 0) return status::ok;
    MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    pinned_value<long long> counted;
    long long* out = nullptr;  // the pinned block as the device addresses it
    MATCHFLOW_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&out), counted.get(), 0));
    if (g.offset_bytes == 4) {
      count_empty_kernel<<<1, threads_per_block, 0, s>>>(static_cast<const std::int32_t*>(g.indptr),
                                                         count, step, out);
    } else {
      count_empty_kernel<<<1, threads_per_block, 0, s>>>(static_cast<const std::int64_t*>(g.indptr),
                                                         count, step, out);
    }
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    *empty = *counted.get();
    return status::ok;
  });
}

}  // namespace matchflow::cuda

// The sample of a GPU-resident CSR's row offsets that the host's skew test
// reads (matchflow::sample_row_offsets): the pairs (indptr[r], indptr[r+1])
// of every step-th row, gathered by one strided copy (cudaMemcpy2DAsync:
// `step` offsets apart on the device, packed on the host), no kernel.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/error.cuh"
#include "matchflow/detail/cuda_backend.hpp"

namespace matchflow::cuda {

namespace {

/// Offset `i` of a packed host array of 4- or 8-byte offsets.
std::int64_t offset_at(const std::vector<unsigned char>& bytes, int width, std::size_t i) {
  if (width == 4) {
    std::int32_t v;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, bytes.data() + i * 8, 8);
  return v;
}

}  // namespace

status sample_row_offsets(const raw_csr& g, std::int64_t step, int device, std::uintptr_t stream,
                          std::int64_t* starts, std::int64_t* ends) noexcept {
  return cuda_guarded([&] {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    const auto width = static_cast<std::size_t>(g.offset_bytes);
    const auto rows = static_cast<std::size_t>(g.n_rows);
    const auto every = static_cast<std::size_t>(step);
    const std::size_t count = (rows + every - 1) / every;
    if (count == 0) return status::ok;
    MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
    // step 1 reads the whole array (a pitch below the pair's width is not a 2-D copy).
    const bool whole = every == 1;
    std::vector<unsigned char> bytes((whole ? rows + 1 : 2 * count) * width);
    if (whole) {
      MATCHFLOW_CUDA_TRY(
          cudaMemcpyAsync(bytes.data(), g.indptr, bytes.size(), cudaMemcpyDeviceToHost, s));
    } else {
      MATCHFLOW_CUDA_TRY(cudaMemcpy2DAsync(bytes.data(), 2 * width, g.indptr, every * width,
                                           2 * width, count, cudaMemcpyDeviceToHost, s));
    }
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < count; ++i) {
      starts[i] = offset_at(bytes, g.offset_bytes, whole ? i : 2 * i);
      ends[i] = offset_at(bytes, g.offset_bytes, whole ? i + 1 : 2 * i + 1);
    }
    return status::ok;
  });
}

}  // namespace matchflow::cuda

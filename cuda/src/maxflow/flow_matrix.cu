// SciPy's flow matrix on the device.  Every arc a = (u, v) gives two
// entries, (u, v, +f) and (v, u, -f); a radix sort by (row, column) and a
// reduce-by-key (CUB) sum the entries of equal position, which yields
// exactly the CPU builder's matrix: pattern(A) + pattern(A^T), sorted,
// parallel arcs and an arc against its reverse summed, explicit zeros kept
// (a self-loop meets itself: a stored 0).  The CPU builder's cost was the
// largest part of a gpu-pr call beyond the solve (NOTES.md, "gpu-pr's flow matrix").
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "maxflow/flow_matrix.cuh"

namespace matchflow::cuda {
namespace {

/// row << bits | column, bits = bits_for(n): the radix sort then runs over
/// 2 bits_for(n) bits, not 32 + bits_for(n) (five 8-bit passes for a
/// million vertices instead of seven).
using key_t = unsigned long long;

/// Both entries of every arc, over the reverse CSR (each arc once: a =
/// rarc[r] enters v = heads[a] from u = rtail[r]): (u, v, +flow) at a, (v,
/// u, -flow) at m + r.  A grid over arcs, not a warp per vertex: the source
/// and the sink of a segmentation grid each hold an arc to every pixel, and
/// one warp wrote each of those rows (NOTES.md, "gpu-pr's flow matrix").
__global__ void entries_kernel(device_flow f, int bits, key_t* __restrict__ keys,
                               long long* __restrict__ values) {
  for (offset_t r = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; r < f.m;
       r += offset_t(gridDim.x) * blockDim.x) {
    const offset_t a = f.rarc[r];
    const key_t u = unsigned(f.rtail[r]), v = unsigned(f.heads[a]);
    const long long x = f.flow[a];
    keys[a] = u << bits | v;
    values[a] = x;
    keys[f.m + r] = v << bits | u;
    values[f.m + r] = -x;
  }
}

/// indptr from the sorted unique keys: entry i opens every row from the
/// previous entry's row + 1 up to its own; the last closes the rest.
/// Columns are the keys' low `bits` bits.
__global__ void csr_kernel(const key_t* __restrict__ unique, const long long* __restrict__ count,
                           std::int64_t n, int bits, offset_t* __restrict__ indptr,
                           vertex_t* __restrict__ columns) {
  const std::int64_t nnz = *count;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nnz;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = std::int64_t(unique[i] >> bits);
    const std::int64_t prev = i == 0 ? -1 : std::int64_t(unique[i - 1] >> bits);
    for (std::int64_t r = prev + 1; r <= row; ++r) indptr[r] = i;
    if (i == nnz - 1) {
      for (std::int64_t r = row + 1; r <= n; ++r) indptr[r] = nnz;
    }
    columns[i] = vertex_t(unique[i] & ((key_t(1) << bits) - 1));
  }
}

int bits_for(std::int64_t n) {
  int bits = 1;
  while (bits < 32 && (std::int64_t(1) << bits) < n) ++bits;
  return bits;
}

}  // namespace

bool device_flow_matrix(const device_flow& f, cudaStream_t s, offset_t* indptr, vertex_t* indices,
                        capacity_t* data, offset_t* nnz, std::int64_t* kernel_launches) {
  const std::int64_t items = 2 * f.m;
  if (items == 0) {
    std::fill(indptr, indptr + f.n + 1, offset_t(0));
    *nnz = 0;
    return true;
  }
  cub::DoubleBuffer<key_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<long long> values(nullptr, nullptr);
  const int bits = bits_for(f.n);
  const int end_bit = 2 * bits;
  std::size_t sort_bytes = 0, reduce_bytes = 0;
  MATCHFLOW_CUDA_TRY(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, values, items, 0, end_bit, s));
  MATCHFLOW_CUDA_TRY(cub::DeviceReduce::ReduceByKey(
      nullptr, reduce_bytes, keys.Current(), keys.Alternate(), values.Current(), values.Alternate(),
      static_cast<long long*>(nullptr), ::cuda::std::plus<long long>{}, items, s));
  const std::size_t temp = std::max(sort_bytes, reduce_bytes);
  const std::size_t need = std::size_t(items) * 2 * (sizeof(key_t) + sizeof(long long)) +
                           std::size_t(f.n + 1) * sizeof(offset_t) + temp + 64;
  if (!device_has_memory(need + need / 16)) return false;

  device_buffer<key_t> key0(items), key1(items);
  device_buffer<long long> value0(items), value1(items), count(1);
  device_buffer<offset_t> d_indptr(std::size_t(f.n + 1));
  device_buffer<unsigned char> scratch(temp);
  keys = cub::DoubleBuffer<key_t>(key0.data(), key1.data());
  values = cub::DoubleBuffer<long long>(value0.data(), value1.data());

  entries_kernel<<<std::min<unsigned>(blocks_for(f.m), 65535u), threads_per_block, 0, s>>>(
      f, bits, keys.Current(), values.Current());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  std::size_t bytes = temp;
  MATCHFLOW_CUDA_TRY(
      cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, keys, values, items, 0, end_bit, s));
  bytes = temp;
  MATCHFLOW_CUDA_TRY(cub::DeviceReduce::ReduceByKey(
      scratch.data(), bytes, keys.Current(), keys.Alternate(), values.Current(), values.Alternate(),
      count.data(), ::cuda::std::plus<long long>{}, items, s));
  // The sorted keys are spent: their buffer takes the int32 columns.
  vertex_t* columns = reinterpret_cast<vertex_t*>(keys.Current());
  csr_kernel<<<std::min<unsigned>(blocks_for(items), 65535u), threads_per_block, 0, s>>>(
      keys.Alternate(), count.data(), f.n, bits, d_indptr.data(), columns);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  *kernel_launches += 4;

  long long entries = 0;
  MATCHFLOW_CUDA_TRY(
      cudaMemcpyAsync(&entries, count.data(), sizeof(entries), cudaMemcpyDeviceToHost, s));
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  // 12 bytes per entry into pageable arrays, one staged pass
  // (common/host_copy.cuh); gpu-pr pages them in while its phases run
  // (common/prefault.cuh).
  download_parts({copy_part{indptr, d_indptr.data(), sizeof(offset_t) * std::size_t(f.n + 1)},
                  copy_part{indices, columns, sizeof(vertex_t) * std::size_t(entries)},
                  copy_part{data, values.Alternate(), sizeof(capacity_t) * std::size_t(entries)}},
                 s);
  *nnz = entries;
  return true;
}

}  // namespace matchflow::cuda

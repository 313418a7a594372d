// The strongly connected component of one pivot vertex, on the GPU: the
// forward-backward step of Fleischer, Hendrickson & Pinar (2000), as GPU SCC
// codes use it first (Barnat et al. 2011; Hong, Rodia & Olukotun 2013, who
// pick the pivot maximising in-degree x out-degree to hit the giant
// component): the vertices that the pivot reaches and that reach it.  Two
// level-synchronous searches, forward over the CSR and backward over its
// transpose (common/reverse_csr.cuh).  The caller (cpp/src/preprocess/
// pivot_scc.cpp) contracts that component and runs Tarjan on the rest, so
// the work Tarjan does sequentially shrinks by the giant component; on a
// graph without one the step is wasted (benchmarks/NOTES.md, Sparse-solver
// preprocessing).
//
// The levels run without a host round trip each: every level is one launch
// that reads its frontier's size from the device (three counters in turn:
// input, output, and the one cleared for the next level, as gpu-pr's BFS),
// and the host reads a size back only once per `levels_per_check` launches;
// the launches after the search ends find an empty frontier and return.
#include <algorithm>
#include <cstdint>
#include <cub/device/device_reduce.cuh>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "common/pinned.cuh"
#include "common/reverse_csr.cuh"
#include "matchflow/detail/cuda_backend.hpp"

namespace matchflow::cuda {
namespace {

constexpr int levels_per_check = 16;

/// Level `level` of a search over (ptr, adj): one warp per frontier vertex
/// (grid-stride), lanes over its arcs; each unseen head is claimed by an
/// atomic exchange and appended to the next frontier.  Frontier lists and
/// counters alternate with the level (see the file comment).
/// sync: seen (atomicExch), counts (atomicAdd); each next[] slot written once.
__global__ void reach_level_kernel(const offset_t* __restrict__ ptr,
                                   const vertex_t* __restrict__ adj, unsigned* __restrict__ seen,
                                   vertex_t* list0, vertex_t* list1, int* counts, int level) {
  const vertex_t* in = (level & 1) ? list1 : list0;
  vertex_t* out = (level & 1) ? list0 : list1;
  const int size = counts[level % 3];
  if (blockIdx.x == 0 && threadIdx.x == 0) counts[(level + 2) % 3] = 0;
  int* count_out = &counts[(level + 1) % 3];
  const int lane = threadIdx.x % warp_size;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_size;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size; i < size;
       i += warps) {
    const vertex_t v = in[i];
    for (offset_t a = ptr[v] + lane; a < ptr[v + 1]; a += warp_size) {
      const vertex_t w = adj[a];
      if (seen[w] == 0 && atomicExch(&seen[w], 1u) == 0) out[atomicAdd(count_out, 1)] = w;
    }
  }
}

/// key[v] = min(out-degree x in-degree, 2^31 - 1) << 32 | ~v: the largest
/// key is the pivot, the least vertex among equal products.
__global__ void pivot_key_kernel(vertex_t n, const offset_t* __restrict__ ptr,
                                 const offset_t* __restrict__ rptr,
                                 unsigned long long* __restrict__ key) {
  for (std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += std::int64_t(gridDim.x) * blockDim.x) {
    const double product = double(ptr[v + 1] - ptr[v]) * double(rptr[v + 1] - rptr[v]);
    const unsigned long long weight = unsigned(std::min(product, 2147483647.0));
    key[v] = weight << 32 | (0xffffffffu - unsigned(v));
  }
}

/// member[v] = reached both ways; *size += their count (one atomic a block).
__global__ void member_kernel(vertex_t n, const unsigned* __restrict__ forward,
                              const unsigned* __restrict__ backward,
                              std::uint8_t* __restrict__ member, int* size) {
  for (std::int64_t base = std::int64_t(blockIdx.x) * blockDim.x; base < n;
       base += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t v = base + threadIdx.x;
    const bool in = v < n && forward[v] != 0 && backward[v] != 0;
    if (v < n) member[v] = in;
    const int count = __syncthreads_count(in);
    if (threadIdx.x == 0 && count) atomicAdd(size, count);
  }
}

/// The device side of one call.
class pivot_search {
 public:
  pivot_search(const adjacency_view& g, int device, cudaStream_t s)
      : n_(g.n), m_(g.ptr[g.n]), s_(s) {
    use_device_with_memory(device, 0);  // selects the device for the CUB queries
    temp_bytes_ = std::max(reverse_csr_temp_bytes(n_), max_temp_bytes());
    const std::size_t n = std::size_t(n_) + 1, m = std::size_t(m_);
    use_device_with_memory(
        device, m * 2 * sizeof(vertex_t) +
                    n * (3 * sizeof(offset_t) + 2 * sizeof(unsigned) + 2 * sizeof(vertex_t) + 1) +
                    temp_bytes_ + 64);
    ptr_ = device_buffer<offset_t>(n);
    rptr_ = device_buffer<offset_t>(n);
    cursor_ = device_buffer<unsigned long long>(n);  // also the pivot keys
    adj_ = device_buffer<vertex_t>(m);
    radj_ = device_buffer<vertex_t>(m);
    forward_ = device_buffer<unsigned>(n);
    backward_ = device_buffer<unsigned>(n);
    list0_ = device_buffer<vertex_t>(n);
    list1_ = device_buffer<vertex_t>(n);
    member_ = device_buffer<std::uint8_t>(n);
    counts_ = device_buffer<int>(4);  // three for the levels, one for the size
    temp_ = device_buffer<unsigned char>(temp_bytes_);
    int sms = 1;
    MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    grid_ = std::min<unsigned>(blocks_for(std::int64_t(n_) * warp_size), unsigned(sms * 8));
    upload_parts({copy_part{ptr_.data(), g.ptr, sizeof(offset_t) * n},
                  copy_part{adj_.data(), g.adj, sizeof(vertex_t) * m}},
                 s_);
  }

  /// Finds the pivot's component; member (host, n bytes) marks it.
  pivot_scc_result run(std::uint8_t* member) {
    pivot_scc_result out;
    launches_ += build_reverse_csr(n_, m_, ptr_.data(), adj_.data(), rptr_.data(), radj_.data(),
                                   nullptr, cursor_.data(), temp_.data(), temp_bytes_, s_);
    out.pivot = pivot();
    out.levels = reach(ptr_.data(), adj_.data(), forward_.data(), out.pivot) +
                 reach(rptr_.data(), radj_.data(), backward_.data(), out.pivot);
    MATCHFLOW_CUDA_TRY(cudaMemsetAsync(counts_.data() + 3, 0, sizeof(int), s_));
    member_kernel<<<std::min<unsigned>(blocks_for(n_), 65535u), threads_per_block, 0, s_>>>(
        n_, forward_.data(), backward_.data(), member_.data(), counts_.data() + 3);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    ++launches_;
    download_parts({copy_part{member, member_.data(), std::size_t(n_)}}, s_);
    out.size = read_count(3);
    out.kernel_launches = launches_;
    return out;
  }

 private:
  std::size_t max_temp_bytes() const {
    std::size_t bytes = 0;
    MATCHFLOW_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes,
                                              static_cast<unsigned long long*>(nullptr),
                                              static_cast<unsigned long long*>(nullptr), n_));
    return bytes;
  }

  vertex_t pivot() {
    unsigned long long* key = cursor_.data();  // the transpose is built: its cursors are spent
    pivot_key_kernel<<<std::min<unsigned>(blocks_for(n_), 65535u), threads_per_block, 0, s_>>>(
        n_, ptr_.data(), rptr_.data(), key);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    device_buffer<unsigned long long> best(1);
    std::size_t bytes = temp_bytes_;
    MATCHFLOW_CUDA_TRY(cub::DeviceReduce::Max(temp_.data(), bytes, key, best.data(), n_, s_));
    launches_ += 2;
    pinned_value<unsigned long long> h;
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(h.get(), best.data(), sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, s_));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s_));
    return vertex_t(0xffffffffu - unsigned(*h.get() & 0xffffffffu));
  }

  /// Marks in `seen` every vertex that `root` reaches over (ptr, adj);
  /// returns the levels searched.
  std::int64_t reach(const offset_t* ptr, const vertex_t* adj, unsigned* seen, vertex_t root) {
    MATCHFLOW_CUDA_TRY(cudaMemsetAsync(seen, 0, sizeof(unsigned) * std::size_t(n_), s_));
    const unsigned one = 1;
    const int first[3] = {1, 0, 0};
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(seen + root, &one, sizeof(one), cudaMemcpyHostToDevice, s_));
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(list0_.data(), &root, sizeof(root), cudaMemcpyHostToDevice, s_));
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(counts_.data(), first, sizeof(first), cudaMemcpyHostToDevice, s_));
    for (int level = 0;; level += levels_per_check) {
      for (int k = level; k < level + levels_per_check; ++k) {
        reach_level_kernel<<<grid_, threads_per_block, 0, s_>>>(ptr, adj, seen, list0_.data(),
                                                                list1_.data(), counts_.data(), k);
        MATCHFLOW_CUDA_CHECK_LAUNCH();
      }
      launches_ += levels_per_check;
      const int next = level + levels_per_check;
      if (read_count(next % 3) == 0) return next;  // an upper bound: levels past the end are empty
    }
  }

  /// counts_[k], after the stream drains (it also orders the host copies
  /// made from stack memory above).
  int read_count(int k) {
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(count_.get(), counts_.data() + k, sizeof(int), cudaMemcpyDeviceToHost, s_));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s_));
    return *count_.get();
  }

  const vertex_t n_;
  const offset_t m_;
  cudaStream_t s_;
  std::size_t temp_bytes_ = 0;
  unsigned grid_ = 1;
  std::int64_t launches_ = 0;
  device_buffer<offset_t> ptr_, rptr_;
  device_buffer<unsigned long long> cursor_;
  device_buffer<vertex_t> adj_, radj_, list0_, list1_;
  device_buffer<unsigned> forward_, backward_;
  device_buffer<std::uint8_t> member_;
  device_buffer<int> counts_;
  device_buffer<unsigned char> temp_;
  pinned_value<int> count_;
};

}  // namespace

status gpu_pivot_scc(const adjacency_view& g, int device, std::uint8_t* member,
                     pivot_scc_result* result) noexcept {
  return cuda_guarded([&] {
    *result = pivot_scc_result{};
    if (g.n == 0) return status::ok;
    MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
    stream s;
    pooled_allocations pool(s, device);  // every buffer of the call, freed on s
    pivot_search search(g, device, s);
    *result = search.run(member);
    return status::ok;
  });
}

}  // namespace matchflow::cuda

// The graph upload of the GPU matching methods (G-PR, APFB/APsB): the one
// place that moves a bipartite graph and its initial matching to the device.
//
// Problem.  The methods need the column orientation (CSC) and, G-PR, the row
// orientation (CSR) too, plus an initial matching.  The Python layer passes
// only the CSR.  Building the CSC on the host (a sequential counting sort,
// cpp/src/transpose.cpp) and the greedy start on the host cost more than
// the GPU solve itself (benchmarks/NOTES.md), so for the GPU methods both
// are computed here, on the device, from the uploaded CSR:
//
//   1. upload the CSR (pageable copies by default; see upload_mode);
//   2. initial matching: the greedy kernel (graph_upload_kernels.cuh, one
//      thread per row, atomicCAS on row4col), or the host's mates when the
//      caller computed them (Karp-Sipser), or none;
//   3. only when that matching is not perfect on the smaller side: the CSC,
//      uploaded when the caller passed it, else built on the device (row of
//      each edge by a CUB max-scan, column degrees by atomics plus a CUB
//      exclusive sum, rows by a stable CUB radix sort keyed by column; the
//      same CSC the host transpose builds, rows sorted within each column).
//
// Paper 000 (G-PR) and paper 004 (APFB/APsB) both take the graph and the
// cheap matching as given on the device; everything here is outside what
// they time.  Deviation: their cheap matching is sequential (see the
// kernel's comment for what the parallel one differs in).
//
// Timing: each phase ends with a stream synchronize and is added to its
// stats field (seconds_transfer, seconds_init, seconds_transpose;
// allocations to seconds_setup).  Kernel launches, CUB's included, are
// counted in stats->kernel_launches (for the radix sort, CUB's onesweep
// launch sequence: histogram, scan, one kernel per 8-bit digit pass).
#include "matching/graph_upload.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/error.cuh"
#include "common/launch.cuh"
#include "matching/graph_upload_kernels.cuh"

namespace matchflow::cuda {
namespace {

using upload::max_op;

/// Bits needed for column ids 0 .. n - 1 (at least 1).
int key_bits(vertex_t n) {
  int bits = 1;
  while (bits < 31 && (std::int64_t(1) << bits) < std::int64_t(n)) ++bits;
  return bits;
}

/// CUB scratch for the transpose (max over its three calls).
std::size_t transpose_temp_bytes(vertex_t n, offset_t nnz) {
  std::size_t scan_rows = 0, scan_cols = 0, sort = 0;
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, scan_rows,
                                                    static_cast<vertex_t*>(nullptr),
                                                    static_cast<vertex_t*>(nullptr), max_op{},
                                                    nnz));
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_cols,
                                                   static_cast<offset_t*>(nullptr),
                                                   static_cast<offset_t*>(nullptr),
                                                   std::int64_t(n) + 1));
  MATCHFLOW_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
      nullptr, sort, static_cast<const vertex_t*>(nullptr), static_cast<vertex_t*>(nullptr),
      static_cast<const vertex_t*>(nullptr), static_cast<vertex_t*>(nullptr), nnz, 0,
      key_bits(n)));
  return std::max<std::size_t>({scan_rows, scan_cols, sort, 1});
}

// ---- host -> device copies ---------------------------------------------------

/// How the CSR is copied.  pageable: cudaMemcpyAsync from the caller's
/// arrays (the driver stages them).  register: page-lock the caller's
/// arrays for the copy (cudaHostRegister), then copy.  staged: our own
/// double-buffered pinned chunks.  Chosen by MATCHFLOW_UPLOAD (measurement
/// only; the default is the fastest measured).
enum class upload_mode { pageable, registered, staged };

upload_mode upload_mode_from_env() {
  const char* v = std::getenv("MATCHFLOW_UPLOAD");
  if (v && std::strcmp(v, "register") == 0) return upload_mode::registered;
  if (v && std::strcmp(v, "staged") == 0) return upload_mode::staged;
  return upload_mode::pageable;
}

constexpr std::size_t large_copy = std::size_t(4) << 20;    // smaller copies stay pageable
constexpr std::size_t stage_chunk = std::size_t(8) << 20;  // staged: bytes per chunk

/// Pinned host memory (RAII).
class pinned_bytes {
 public:
  explicit pinned_bytes(std::size_t n) { MATCHFLOW_CUDA_TRY(cudaMallocHost(&p_, n)); }
  ~pinned_bytes() {
    if (p_) cudaFreeHost(p_);
  }
  pinned_bytes(const pinned_bytes&) = delete;
  pinned_bytes& operator=(const pinned_bytes&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }

 private:
  void* p_ = nullptr;
};

/// An event (RAII).
class event {
 public:
  event() { MATCHFLOW_CUDA_TRY(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

/// Page-locks a host range for the lifetime of the object (RAII); when the
/// range cannot be registered (e.g. already registered) it stays pageable.
class host_registration {
 public:
  host_registration(const void* p, std::size_t n) {
    if (cudaHostRegister(const_cast<void*>(p), n, cudaHostRegisterDefault) == cudaSuccess) {
      p_ = const_cast<void*>(p);
    } else {
      cudaGetLastError();  // not sticky: clear it, the copy goes pageable
    }
  }
  ~host_registration() {
    if (p_) cudaHostUnregister(p_);
  }
  host_registration(const host_registration&) = delete;
  host_registration& operator=(const host_registration&) = delete;

 private:
  void* p_ = nullptr;
};

void copy_staged(void* d_dst, const void* h_src, std::size_t bytes, cudaStream_t s) {
  pinned_bytes buf[2] = {pinned_bytes(stage_chunk), pinned_bytes(stage_chunk)};
  event done[2];
  bool used[2] = {false, false};
  const auto* src = static_cast<const unsigned char*>(h_src);
  auto* dst = static_cast<unsigned char*>(d_dst);
  for (std::size_t off = 0, k = 0; off < bytes; off += stage_chunk, k ^= 1) {
    const std::size_t n = std::min(stage_chunk, bytes - off);
    if (used[k]) MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k].get()));
    std::memcpy(buf[k].get(), src + off, n);
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(dst + off, buf[k].get(), n, cudaMemcpyHostToDevice, s));
    MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k].get(), s));
    used[k] = true;
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // the chunks die with this frame
}

template <class T>
void copy_h2d(device_buffer<T>& dst, const T* h_src, std::size_t n, cudaStream_t s,
              upload_mode mode) {
  const std::size_t bytes = n * sizeof(T);
  if (bytes == 0) return;
  if (bytes < large_copy || mode == upload_mode::pageable) {
    dst.copy_from_host(h_src, n, s);
  } else if (mode == upload_mode::staged) {
    copy_staged(dst.data(), h_src, bytes, s);
  } else {
    host_registration reg(h_src, bytes);
    dst.copy_from_host(h_src, n, s);
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // before the registration ends
  }
}

// ---- the steps ---------------------------------------------------------------

/// Step 2, greedy: the kernel, then its cardinality read back.
std::int64_t greedy_start(device_graph& d, cudaStream_t s, matching_stats* stats) {
  device_buffer<unsigned long long> matched(1);
  matched.fill_bytes(0, s);
  d.row4col.fill_bytes(0xff, s);  // -1
  upload::greedy_kernel<<<blocks_for(d.m), threads_per_block, 0, s>>>(
      d.m, d.row_ptr.data(), d.row_adj.data(), d.col4row.data(), d.row4col.data(),
      matched.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats->kernel_launches;
  unsigned long long h_matched = 0;
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&h_matched, matched.data(), sizeof(h_matched),
                                     cudaMemcpyDeviceToHost, s));
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  return static_cast<std::int64_t>(h_matched);
}

/// Step 3 on the device: d.col_ptr / d.col_adj from d.row_ptr / d.row_adj.
void build_columns(device_graph& d, cudaStream_t s, matching_stats* stats) {
  const offset_t nnz = d.nnz;
  const std::size_t temp_bytes = transpose_temp_bytes(d.n, nnz);
  device_buffer<unsigned char> temp(temp_bytes);
  device_buffer<vertex_t> row_of(std::size_t(std::max<offset_t>(nnz, 1)));
  device_buffer<vertex_t> keys_out(std::size_t(std::max<offset_t>(nnz, 1)));

  // 1. row of each edge
  row_of.fill_bytes(0, s);
  upload::mark_row_starts_kernel<<<blocks_for(d.m), threads_per_block, 0, s>>>(
      d.m, d.row_ptr.data(), row_of.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  std::size_t bytes = temp_bytes;
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::InclusiveScan(temp.data(), bytes, row_of.data(),
                                                    row_of.data(), max_op{}, nnz, s));
  // 2. column offsets
  d.col_ptr.fill_bytes(0, s);
  int sms = 1, device = 0;
  MATCHFLOW_CUDA_TRY(cudaGetDevice(&device));
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned count_blocks = std::min<unsigned>(blocks_for(nnz), unsigned(sms) * 8);
  upload::count_columns_kernel<<<count_blocks, threads_per_block, 0, s>>>(
      nnz, d.row_adj.data(), reinterpret_cast<unsigned long long*>(d.col_ptr.data()));
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  bytes = temp_bytes;
  MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, d.col_ptr.data(),
                                                   d.col_ptr.data(), std::int64_t(d.n) + 1, s));
  // 3. rows sorted by column (stable)
  const int bits = key_bits(d.n);
  bytes = temp_bytes;
  MATCHFLOW_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
      temp.data(), bytes, static_cast<const vertex_t*>(d.row_adj.data()), keys_out.data(),
      static_cast<const vertex_t*>(row_of.data()), d.col_adj.data(), nnz, 0, bits, s));
  // mark + scan (2) + count + scan (2) + sort (histogram, exclusive sum, passes)
  stats->kernel_launches += 1 + 2 + 1 + 2 + 2 + (bits + 7) / 8;
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // before the scratch is freed
}

}  // namespace

std::size_t graph_bytes(const bipartite_view& g, gpu_start start, bool keep_rows) {
  const std::size_t m = std::size_t(g.n_rows()), n = std::size_t(g.n_cols());
  const std::size_t nnz = std::size_t(g.rows.nnz());
  const bool build = !g.has_cols();
  const bool rows = keep_rows || build || start == gpu_start::greedy;
  std::size_t bytes = (m + n) * sizeof(vertex_t) + 64;                       // mates
  bytes += (n + 1) * sizeof(offset_t) + nnz * sizeof(vertex_t);              // CSC
  if (rows) bytes += (m + 1) * sizeof(offset_t) + nnz * sizeof(vertex_t);    // CSR
  if (build) {
    bytes += 2 * nnz * sizeof(vertex_t) +
             transpose_temp_bytes(g.n_cols(), offset_t(nnz));  // row_of, keys_out, CUB
  }
  return bytes;
}

bool prepare_graph(const bipartite_view& g, gpu_start start, const vertex_t* h_col4row,
                   const vertex_t* h_row4col, bool keep_rows, device_graph& d, cudaStream_t s,
                   matching_stats* stats) {
  const upload_mode mode = upload_mode_from_env();
  d.m = g.n_rows();
  d.n = g.n_cols();
  d.nnz = g.rows.nnz();
  const bool build = !g.has_cols();
  const bool rows = keep_rows || build || start == gpu_start::greedy;
  phase_clock clock(s);

  // Allocations (setup).
  d.col4row = device_buffer<vertex_t>(std::size_t(d.m));
  d.row4col = device_buffer<vertex_t>(std::size_t(d.n));
  if (rows) {
    d.row_ptr = device_buffer<offset_t>(std::size_t(d.m) + 1);
    d.row_adj = device_buffer<vertex_t>(std::size_t(d.nnz));
  }
  stats->seconds_setup += clock.mark();

  // 1. CSR (and the host's mates) up.
  if (rows) {
    copy_h2d(d.row_ptr, g.rows.ptr, std::size_t(d.m) + 1, s, mode);
    copy_h2d(d.row_adj, g.rows.adj, std::size_t(d.nnz), s, mode);
  }
  if (start == gpu_start::host_mates) {
    d.col4row.copy_from_host(h_col4row, std::size_t(d.m), s);
    d.row4col.copy_from_host(h_row4col, std::size_t(d.n), s);
  }
  stats->seconds_transfer += clock.mark();

  // 2. Initial matching.
  if (start == gpu_start::greedy) {
    d.init_cardinality = greedy_start(d, s, stats);
    stats->init_cardinality = d.init_cardinality;
    stats->seconds_init += clock.mark();
  } else if (start == gpu_start::empty) {
    d.col4row.fill_bytes(0xff, s);
    d.row4col.fill_bytes(0xff, s);
    d.init_cardinality = 0;
    stats->seconds_init += clock.mark();
  } else {
    std::int64_t matched = 0;
    for (vertex_t v = 0; v < d.n; ++v) matched += h_row4col[v] >= 0;
    d.init_cardinality = matched;
  }
  if (d.init_cardinality == std::min<std::int64_t>(d.m, d.n)) return false;

  // 3. CSC: the caller's, or built here.
  d.col_ptr = device_buffer<offset_t>(std::size_t(d.n) + 1);
  d.col_adj = device_buffer<vertex_t>(std::size_t(d.nnz));
  stats->seconds_setup += clock.mark();
  if (build) {
    build_columns(d, s, stats);
    stats->seconds_transpose += clock.mark();
  } else {
    copy_h2d(d.col_ptr, g.cols.ptr, std::size_t(d.n) + 1, s, mode);
    copy_h2d(d.col_adj, g.cols.adj, std::size_t(d.nnz), s, mode);
    stats->seconds_transfer += clock.mark();
  }
  if (!keep_rows) {
    d.row_ptr = device_buffer<offset_t>();
    d.row_adj = device_buffer<vertex_t>();
    stats->seconds_setup += clock.mark();
  }
  return true;
}

void download_matching(const device_graph& d, vertex_t* h_col4row, vertex_t* h_row4col,
                       cudaStream_t s, matching_stats* stats) {
  phase_clock clock(s);
  clock.mark();  // the solve's work is not transfer
  d.col4row.copy_to_host(h_col4row, std::size_t(d.m), s);
  d.row4col.copy_to_host(h_row4col, std::size_t(d.n), s);
  stats->seconds_transfer += clock.mark();
}

double launch_seconds(int device) {
  constexpr int max_devices = 64;
  constexpr int launches = 200;
  static std::array<std::atomic<double>, max_devices> cache{};  // 0 = not measured yet
  static std::mutex lock;
  if (device < 0 || device >= max_devices) return 0;
  const double known = cache[device].load();
  if (known > 0) return known;
  std::lock_guard<std::mutex> guard(lock);
  if (cache[device].load() > 0) return cache[device].load();
  stream s;
  phase_clock clock(s);
  upload::empty_kernel<<<1, 1, 0, s>>>();  // first launch: module load
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  clock.mark();
  for (int i = 0; i < launches; ++i) {
    upload::empty_kernel<<<1, 1, 0, s>>>();
    MATCHFLOW_CUDA_CHECK_LAUNCH();
  }
  const double per_launch = clock.mark() / launches;
  cache[device].store(per_launch);
  return per_launch;
}

}  // namespace matchflow::cuda

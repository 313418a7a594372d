// The auction start of sparse-sap on the GPU: column duals of a square
// sparse assignment problem from Bertsekas' epsilon-scaling auction, handed
// to the exact shortest augmenting path stage on the CPU
// (cpp/src/lsap/sparse_shortest_path.cpp, step 1), which takes every row's
// least column under them and repairs the rest.  The CPU computes the same
// kind of duals in cpp/src/lsap/sparse_auction.cpp; on 10^6 random rows with
// 5-10 entries that auction was most of the solve on 16 threads
// (benchmarks/NOTES.md, "Sparse LAP on the GPU").
//
// The rounds are gpu-auction's (auction_kernels.cuh: Jacobi bidding, one
// warp per free row, the winner per column by one 64-bit atomicMax, block 0
// alone for the short tails), over CSR rows instead of dense ones: only
// bid_step and record_win differ, and these are the overloads below.  The
// schedule is the CPU auction's: eps from range / 10 down to range / n
// (range = largest - least weight), divided by 10 per phase, every row freed
// at the start of a phase; a row with one entry bids range below its
// column.
//
// Deviations from the CPU auction, and why.
//   - No Gauss-Seidel tail: a phase ends once at most 256 rows are free
//     (the CPU's jacobi_min_free), and the next starts from its duals.  Run
//     to the end, Jacobi rounds fought price wars of 65,536 rounds and more
//     in the first phase on 10^6 random rows with 5 entries (12 s, against
//     6.6 s for the CPU's whole auction: benchmarks/NOTES.md, "Sparse LAP
//     on the GPU"); the rows left free by the last phase go to the exact
//     searches.
//   - A phase stops after phase_rounds rounds (the CPU counts bids): a
//     problem without a full matching bids forever, and the exact stage,
//     which reports it, needs no particular start.  The duals so far are
//     returned; later phases are skipped.
//   - A column goes to the best bid by its float32 price in the atomic key
//     (then the highest row), not by the exact bid and the lowest row: the
//     duals differ from the CPU's (the answer's cost cannot: the exact
//     stage certifies it).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "lsap/auction_kernels.cuh"
#include "matchflow/detail/cuda_backend.hpp"

namespace matchflow::cuda::auction {

constexpr double sparse_eps_ratio = 10.0;  ///< as cpp/src/lsap/sparse_auction.cpp
constexpr int sparse_phase_rounds = 1 << 16;
/// A phase ends once at most this many rows are free (see the header).
constexpr int sparse_phase_free_rows = 256;

/// One square sparse problem and its auction state (sizes: sparse_buffers).
template <class T>
struct sparse_params {
  const std::int64_t* ptr;  ///< CSR offsets, n + 1
  const int* idx;           ///< column of each entry
  const T* w;               ///< weight of each entry
  int n;
  double* v;  ///< column duals (-price)
  int* row4col;
  int* bid_col;                  ///< per row: the column it bid on this round (-1: none)
  double* bid_v;                 ///< per row: its bid (the new v of bid_col)
  unsigned long long* key;       ///< per column: this round's best (price, row + 1); 0 = none
  int* list[3];                  ///< free rows, round robin
  unsigned long long* extremes;  ///< ordered keys of the least and the largest weight
  control* ctl;
};

/// Orders doubles as unsigned integers (for atomicMin / atomicMax).
__device__ inline unsigned long long ordered_key(double x) {
  const auto b = static_cast<unsigned long long>(__double_as_longlong(x));
  return (b >> 63) ? ~b : b | (1ull << 63);
}

__device__ inline double from_ordered_key(unsigned long long k) {
  return __longlong_as_double(static_cast<long long>((k >> 63) ? k & ~(1ull << 63) : ~k));
}

/// One warp per free row over its entries: the best two and the bid.
template <class T>
__device__ void bid_step(const sparse_params<T>& p, const int* rows, int m, double eps, double big,
                         std::int64_t warp, std::int64_t n_warps, int lane) {
  for (std::int64_t k = warp; k < m; k += n_warps) {
    const int i = rows[k];
    const int offset = i % p.n;
    top2 t{INFINITY, INFINITY, -1, -1, 0};
    for (std::int64_t e = p.ptr[i] + lane; e < p.ptr[i + 1]; e += 32) {
      const int j = p.idx[e];
      insert(t, static_cast<double>(p.w[e]) - p.v[j], j, offset, p.n);
    }
    warp_top2(t, offset, p.n);
    if (lane != 0) continue;
    if (t.j1 < 0) {  // an empty row: no full matching, the exact stage says so
      p.bid_col[i] = -1;
      atomicExch(&p.ctl->error, 1);
      continue;
    }
    const double new_v = p.v[t.j1] - (t.w2 < INFINITY ? t.w2 - t.w1 : big) - eps;
    p.bid_col[i] = t.j1;
    p.bid_v[i] = new_v;
    atomicMax(&p.key[t.j1], bid_key(new_v, i));
  }
}

/// Nothing per row to record when a row wins a column: the duals are the
/// result (resolve_step, auction_kernels.cuh).
template <class T>
__device__ void record_win(const sparse_params<T>&, int, int, int) {}

/// The least and the largest weight into p.extremes (a warp's, then one
/// atomic per warp).
template <class T>
__device__ void weight_extremes(const sparse_params<T>& p, std::int64_t tid, std::int64_t n_threads,
                                int lane) {
  unsigned long long lo = ~0ull, hi = 0;
  const std::int64_t nnz = p.ptr[p.n];
  for (std::int64_t e = tid; e < nnz; e += n_threads) {
    const unsigned long long k = ordered_key(static_cast<double>(p.w[e]));
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  for (int d = 16; d > 0; d >>= 1) {
    const unsigned long long a = __shfl_xor_sync(batched::full_mask, lo, d);
    const unsigned long long b = __shfl_xor_sync(batched::full_mask, hi, d);
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
  if (lane == 0) {
    atomicMin(&p.extremes[0], lo);
    atomicMax(&p.extremes[1], hi);
  }
}

/// The whole auction in one cooperative launch.  Every thread runs the same
/// control flow; decisions read values written before the last grid.sync().
template <class T>
__global__ __launch_bounds__(solve_threads) void sparse_auction_kernel(sparse_params<T> p) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t tid = grid.thread_rank(), n_threads = grid.size();
  control* ctl = p.ctl;
  for (std::int64_t j = tid; j < p.n; j += n_threads) {
    p.v[j] = 0;
    p.key[j] = 0;
  }
  weight_extremes(p, tid, n_threads, static_cast<int>(threadIdx.x & 31));
  grid.sync();
  const double range =
      from_ordered_key(atomic_read(&p.extremes[1])) - from_ordered_key(atomic_read(&p.extremes[0]));
  if (!(range > 0)) return;  // every assignment costs the same: v = 0 will do
  const double final_eps = range / p.n;
  int slot = 0;
  for (double eps = range / sparse_eps_ratio;; eps = fmax(eps / sparse_eps_ratio, final_eps)) {
    for (std::int64_t j = tid; j < p.n; j += n_threads) p.row4col[j] = -1;
    for (std::int64_t i = tid; i < p.n; i += n_threads) p.list[slot % 3][i] = static_cast<int>(i);
    if (tid == 0) {
      ctl->count[slot % 3] = p.n;
      ctl->count[(slot + 1) % 3] = 0;
      ++ctl->phases;
    }
    grid.sync();
    slot = rounds(p, grid, slot, eps, range, sparse_phase_rounds, sparse_phase_free_rows);
    const bool stop = atomic_read(&ctl->error) != 0 ||
                      atomic_read(&ctl->count[slot % 3]) > sparse_phase_free_rows ||
                      eps <= final_eps;
    grid.sync();  // every thread has decided before the next phase resets the counts
    if (stop) return;
  }
}

}  // namespace matchflow::cuda::auction

namespace matchflow::cuda {
namespace {

using namespace auction;

/// Device arrays of one auction.
template <class T>
struct sparse_buffers {
  device_buffer<std::int64_t> ptr;
  device_buffer<int> idx;
  device_buffer<T> w;
  device_buffer<double> v, bid_v;
  device_buffer<int> row4col, bid_col, lists;
  device_buffer<unsigned long long> key, extremes;
  device_buffer<control> ctl;

  sparse_buffers(std::int64_t n, std::int64_t nnz)
      : ptr(n + 1),
        idx(nnz),
        w(nnz),
        v(n),
        bid_v(n),
        row4col(n),
        bid_col(n),
        lists(3 * n),
        key(n),
        extremes(2),
        ctl(1) {}

  static std::size_t bytes(std::int64_t n, std::int64_t nnz) {
    return static_cast<std::size_t>(nnz) * (sizeof(int) + sizeof(T)) +
           static_cast<std::size_t>(n + 1) * (sizeof(std::int64_t) + 2 * sizeof(double) +
                                              5 * sizeof(int) + sizeof(unsigned long long)) +
           2 * sizeof(unsigned long long) + sizeof(control);
  }

  sparse_params<T> view(int n) {
    sparse_params<T> p{ptr.data(),      idx.data(),     w.data(),     n,          v.data(),
                       row4col.data(),  bid_col.data(), bid_v.data(), key.data(), {},
                       extremes.data(), ctl.data()};
    for (int k = 0; k < 3; ++k) p.list[k] = lists.data() + static_cast<std::int64_t>(k) * n;
    return p;
  }
};

template <class T>
status run(const std::int64_t* row_ptr, const std::int32_t* col_idx, const T* weight,
           std::int64_t n, int device, double* v, bool* usable, sparse_lsap_stats* stats) {
  const std::int64_t nnz = row_ptr[n];
  MATCHFLOW_CUDA_TRY(cudaSetDevice(device));
  use_device_with_memory(device, sparse_buffers<T>::bytes(n, nnz));
  int sms = 0, coop = 0, occupancy = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  MATCHFLOW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &occupancy, sparse_auction_kernel<T>, solve_threads, 0));
  if (!coop || occupancy < 1) {
    return fail(status::cuda_error,
                "the GPU sparse auction needs a device with cooperative launch");
  }
  stream strm;
  sparse_buffers<T> b(n, nnz);
  b.ptr.copy_from_host(row_ptr, static_cast<std::size_t>(n + 1), strm);
  b.idx.copy_from_host(col_idx, static_cast<std::size_t>(nnz), strm);
  b.w.copy_from_host(weight, static_cast<std::size_t>(nnz), strm);
  const unsigned long long extremes[2] = {~0ull, 0ull};
  b.extremes.copy_from_host(extremes, 2, strm);
  b.ctl.fill_bytes(0, strm);
  sparse_params<T> p = b.view(static_cast<int>(n));
  void* args[] = {&p};
  // One block per SM, as gpu-auction: grid.sync(), twice per round, costs
  // more with more blocks.
  MATCHFLOW_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(sparse_auction_kernel<T>),
                                                 sms, solve_threads, args, 0, strm));
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  control c{};
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&c, p.ctl, sizeof(c), cudaMemcpyDeviceToHost, strm));
  b.v.copy_to_host(v, static_cast<std::size_t>(n), strm);
  strm.synchronize();
  stats->auction_phases += c.phases;
  stats->auction_bids += c.bids;
  *usable = c.error == 0;
  return status::ok;
}

}  // namespace

template <class T>
status gpu_sparse_auction(const std::int64_t* row_ptr, const std::int32_t* col_idx, const T* weight,
                          std::int64_t n, int device, double* v, bool* usable,
                          sparse_lsap_stats* stats) noexcept {
  return cuda_guarded([&] {
    *usable = false;
    if (n == 0 || row_ptr[n] == 0) {
      std::fill_n(v, n, 0.0);
      *usable = true;
      return status::ok;
    }
    return run(row_ptr, col_idx, weight, n, device, v, usable, stats);
  });
}

MATCHFLOW_GPU_SPARSE_AUCTION_TYPES(MATCHFLOW_INSTANTIATE_GPU_SPARSE_AUCTION)

}  // namespace matchflow::cuda

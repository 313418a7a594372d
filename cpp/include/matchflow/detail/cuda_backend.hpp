// The GPU backend's entry points, as the core calls them: host-only
// declarations owned by the core (style.md, 2.3).  cuda/ implements them;
// where CUDA is not compiled, cpp/src/cuda_stub.cpp defines each to return
// status::cuda_unavailable.  The core's dispatch files (lsap/dispatch.cpp,
// lsap/batched.cpp, ...) include this; no cpp/ file includes from cuda/.
#pragma once

#include "matchflow/backend.hpp"
#include "matchflow/batched_lsap.hpp"
#include "matchflow/lsap.hpp"
#include "matchflow/matching.hpp"
#include "matchflow/maxflow.hpp"
#include "matchflow/preprocess.hpp"

namespace matchflow::cuda {

int device_count() noexcept;
status get_device_info(int device, device_info* info) noexcept;
const char* architectures() noexcept;

/// Page-locked host memory kept for result arrays (common/pinned_results.cu):
/// a block of at least *bytes bytes, *bytes set to its size, or nullptr;
/// its return; the kept blocks freed (their bytes).
void* take_pinned_result(std::size_t* bytes) noexcept;
void give_back_pinned_result(void* data, std::size_t bytes) noexcept;
std::size_t free_pinned_results() noexcept;

/// Where a GPU matching method gets its initial matching.
enum class gpu_start : int {
  host_mates = 0,  ///< col4row / row4col hold it on entry (e.g. Karp-Sipser, computed on the host)
  greedy = 1,      ///< computed on the device (cheap greedy, cuda/src/matching/graph_upload.cu)
  empty = 2,       ///< none: every vertex starts unmatched
  greedy_by_degree = 3,  ///< greedy, rows of fewer entries first (matching_options)
};

/// Whether the device computes the start (one of the greedy kinds).
constexpr bool device_greedy(gpu_start start) {
  return start == gpu_start::greedy || start == gpu_start::greedy_by_degree;
}

/// The device start that `options` ask for ("cheap" or "none").
inline gpu_start device_start(const matching_options& options) {
  if (options.init != matching_init::cheap) return gpu_start::empty;
  return options.skewed_degrees ? gpu_start::greedy_by_degree : gpu_start::greedy;
}

/// G-PR (paper 000).  The mates arrays hold the maximum matching on exit
/// (and the initial one on entry when `start` is host_mates).  `g` may lack
/// its column orientation: it is then built on the device.
status gpu_pr(const bipartite_view& g, gpu_start start, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept;

/// APFB / APsB (paper 004); `apfb` selects APFB, else APsB.  Same contract
/// as gpu_pr.
status gpu_ap(const bipartite_view& g, gpu_start start, bool apfb, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept;

/// gpu_pr / gpu_ap on the caller's raw CSR (matchflow::solve_matching_raw):
/// `start` greedy or empty; for a CSR in GPU memory `stream` is the caller's
/// cudaStream_t, which every copy and kernel is ordered on; col4row /
/// row4col are in the CSR's memory.
status gpu_pr_raw(const raw_csr& g, gpu_start start, const matching_options& options,
                  std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) noexcept;
status gpu_ap_raw(const raw_csr& g, gpu_start start, bool apfb, const matching_options& options,
                  std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) noexcept;

/// matchflow::count_empty_sampled_rows.
status count_empty_sampled_rows(const raw_csr& g, std::int64_t step, int device,
                                std::uintptr_t stream, std::int64_t* empty) noexcept;

/// CU-TREE (`tree` true) or CU-CLASS Hungarian (paper 001); same contract as
/// matchflow::solve_lsap_dense.
template <class T>
status gpu_hungarian(const T* cost, std::int64_t n_rows, std::int64_t n_cols, bool tree,
                     const lsap_options& options, std::int64_t* col4row, T* u, T* v,
                     lsap_stats* stats) noexcept;

/// CU-TREE / CU-CLASS on int32 costs, uploaded and read as they are (no
/// host pass); duals int64.
status gpu_hungarian_int32(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                           bool tree, const lsap_options& options, std::int64_t* col4row,
                           std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept;

/// gpu-auction (cuda/src/lsap/auction_kernels.cuh): epsilon-scaling auction
/// and exact shortest-path finish; same contract as
/// matchflow::solve_lsap_dense.  In: double, float, int64 or int32; U: the
/// duals' type (In for floats, int64 for integers).
template <class In, class U>
status gpu_auction(const In* cost, std::int64_t n_rows, std::int64_t n_cols,
                   const lsap_options& options, std::int64_t* col4row, U* u, U* v,
                   lsap_stats* stats) noexcept;

/// The auction start of sparse-sap on the GPU (cuda/src/lsap/sparse_auction.cu):
/// column duals v (n entries, on the host) of the n x n CSR problem, as
/// matchflow::detail::sparse_auction computes them on the CPU; *usable is
/// false when the auction stopped early (an empty row).  T: double or int64.
template <class T>
status gpu_sparse_auction(const std::int64_t* row_ptr, const std::int32_t* col_idx, const T* weight,
                          std::int64_t n, int device, double* v, bool* usable,
                          sparse_lsap_stats* stats) noexcept;
/// gpu-sap: one thread block per problem (cuda/src/lsap/batched_kernels.cuh);
/// same contract as matchflow::solve_batched_lsap, except that a failing
/// problem's status comes back with its index in stats->failed_problem and
/// no message (the caller writes it).
template <class T>
status gpu_batched_sap(const T* cost, std::int64_t batch, std::int64_t n_rows, std::int64_t n_cols,
                       bool maximize, const batched_lsap_options& options, std::int64_t* row_ind,
                       std::int64_t* col_ind, batched_lsap_stats* stats) noexcept;

/// The types each template above is built for, and its explicit
/// instantiation: the CUDA sources and cpp/src/cuda_stub.cpp apply the same
/// lists, so that a CPU-only build links the same symbols.
#define MATCHFLOW_GPU_HUNGARIAN_TYPES(X) X(double) X(float) X(std::int64_t)
#define MATCHFLOW_INSTANTIATE_GPU_HUNGARIAN(T)                                 \
  template status gpu_hungarian<T>(const T*, std::int64_t, std::int64_t, bool, \
                                   const lsap_options&, std::int64_t*, T*, T*, \
                                   lsap_stats*) noexcept;
#define MATCHFLOW_GPU_AUCTION_TYPES(X) \
  X(double, double) X(float, float) X(std::int64_t, std::int64_t) X(std::int32_t, std::int64_t)
#define MATCHFLOW_INSTANTIATE_GPU_AUCTION(In, U)                                                 \
  template status gpu_auction<In, U>(const In*, std::int64_t, std::int64_t, const lsap_options&, \
                                     std::int64_t*, U*, U*, lsap_stats*) noexcept;
#define MATCHFLOW_GPU_SPARSE_AUCTION_TYPES(X) X(double) X(std::int64_t)
#define MATCHFLOW_INSTANTIATE_GPU_SPARSE_AUCTION(T)                                         \
  template status gpu_sparse_auction<T>(const std::int64_t*, const std::int32_t*, const T*, \
                                        std::int64_t, int, double*, bool*,                  \
                                        sparse_lsap_stats*) noexcept;
#define MATCHFLOW_GPU_BATCHED_TYPES(X) \
  X(double) X(float) X(std::int64_t) X(std::int32_t) X(std::uint8_t)
#define MATCHFLOW_INSTANTIATE_GPU_BATCHED_SAP(T)                                                \
  template status gpu_batched_sap<T>(const T*, std::int64_t, std::int64_t, std::int64_t, bool,  \
                                     const batched_lsap_options&, std::int64_t*, std::int64_t*, \
                                     batched_lsap_stats*) noexcept;

/// The strongly connected component of the vertex of greatest in-degree x
/// out-degree of `g` (cuda/src/preprocess/pivot_scc.cu): member[v] = 1 for
/// its vertices, else 0 (host array of g.n bytes).
status gpu_pivot_scc(const adjacency_view& g, int device, std::uint8_t* member,
                     pivot_scc_result* result) noexcept;

/// ECL-MaxFlow push-relabel (paper 002); same contract as
/// matchflow::solve_maxflow with method gpu_pr.
status gpu_maxflow(const flow_network& net, const flow_options& options, flow_result* result,
                   flow_stats* stats) noexcept;

}  // namespace matchflow::cuda

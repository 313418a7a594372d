// Linear sum assignment (LSAP): the C++ entry point.
//
// Minimise sum_i cost[i][col4row[i]] over injective maps rows -> columns, for
// a dense row-major cost matrix with n_rows <= n_cols (the Python layer
// transposes tall matrices and negates for `maximize`).  Costs are float64,
// float32, int64 or int32 (integers are solved exactly, with 64-bit sums and
// int64 duals).  An
// entry equal to +infinity (floating types) is forbidden; the Python layer
// has already proved that an assignment avoiding all of them exists.
// Integer costs must satisfy max(n_rows, n_cols, 8) * max|c| <= 2^62 (so that
// no dual or path length can overflow int64); the solvers check it in their
// first pass over the costs and return status::overflow otherwise.
#pragma once

#include <algorithm>
#include <cstdint>

#include "matchflow/status.hpp"

namespace matchflow {

enum class lsap_method : int {
  omp_tree = 0,     ///< Date & Nagi's alternating-tree Hungarian, OpenMP (paper 001)
  gpu_tree = 1,     ///< CU-TREE (paper 001)
  gpu_classic = 2,  ///< CU-CLASS with zero-slack CSR compression (paper 001)
  gpu_auction = 3,  ///< epsilon-scaling auction (Bertsekas), exact shortest-path finish
};

struct lsap_options {
  int threads = 0;  ///< OpenMP threads; 0 = omp_get_max_threads()
  int device = 0;   ///< CUDA device ordinal
  /// GPU methods only: `cost` is in the GPU memory of `device`, not on the
  /// host; it is copied device to device, ordered on `stream` (the caller's
  /// cudaStream_t; 0 = the legacy default stream).  The caller has checked
  /// it (finite, n_rows <= n_cols) on the device.
  bool cost_on_device = false;
  std::uintptr_t stream = 0;
  /// With cost_on_device and int64 costs: `cost` holds int32 values instead
  /// (the caller narrowed them, or they came as int32), and `cost_max_abs`
  /// is max |cost| (the overflow bound is checked against it).
  bool cost_int32 = false;
  std::uint64_t cost_max_abs = 0;
  /// solve_lsap_sparse only: the auction start of square problems runs on
  /// GPU `device` (cuda/src/lsap/sparse_auction.cu); the exact shortest
  /// augmenting paths that follow stay on the CPU.
  bool sparse_auction_on_gpu = false;
};

struct lsap_stats {
  double seconds_init = 0;            ///< row/column reduction, initial assignment
  double seconds_solve = 0;           ///< everything after
  double seconds_transfer = 0;        ///< host <-> device copies
  std::int64_t iterations = 0;        ///< iterations (paper 001's: tree search, dual updates,
                                      ///< then augmentation of >= 1 path); <= n_rows
  std::int64_t augmenting_paths = 0;  ///< total paths augmented after the initial assignment
  std::int64_t dual_updates = 0;
  std::int64_t kernel_launches = 0;
  std::int64_t search_steps =
      0;  ///< gpu-tree: forward and dual steps (each ends in a grid barrier)
  /// Optional output buffer, set by the CALLER before the call (nullptr: not
  /// recorded), capacity n_rows: entry k receives the number of augmenting
  /// paths found in iteration k, for k < iterations.  Every iteration
  /// augments at least one path, hence iterations <= n_rows.
  std::int64_t* paths_per_iteration = nullptr;
  /// GPU: bytes of each integer cost as uploaded and read when narrower
  /// than int64 because every value fits (4: int32, 2: int16), else 0;
  /// duals and sums stay int64.
  std::int64_t narrow_costs = 0;
  /// gpu-auction: epsilon-scaling phases, Jacobi rounds (with those of the
  /// augmenting row reduction) and bids before the searches; its iterations
  /// are the searches that follow (one path each).
  std::int64_t auction_phases = 0;
  std::int64_t auction_rounds = 0;
  std::int64_t auction_bids = 0;
};

namespace detail {

/// |x| of an int64 cost, exact for INT64_MIN.
inline std::uint64_t magnitude(std::int64_t x) {
  return x < 0 ? static_cast<std::uint64_t>(-(x + 1)) + 1 : static_cast<std::uint64_t>(x);
}

/// The exact-int64 condition of integer costs: max(n_rows, n_cols, 8) * max|c|
/// <= 2^62 keeps every dual (within 8 max|c|) and every path sum (within
/// n max|c|) far from overflow.
inline bool int_costs_fit(std::uint64_t max_abs, std::int64_t n_rows, std::int64_t n_cols) {
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>({n_rows, n_cols, 8}));
  return max_abs <= (std::uint64_t{1} << 62) / n;
}

constexpr const char* int_overflow_message =
    "integer costs too large to solve exactly in int64: need max(n_rows, n_cols, 8) * max|c| "
    "<= 2**62";

constexpr const char* sparse_int_overflow_message =
    "integer weights too large to solve exactly in int64: need max(n_rows, n_cols, 8) * "
    "max|w| <= 2**58";

}  // namespace detail

/// The shortest augmenting path solver (Crouse 2016; the algorithm of
/// scipy.optimize.linear_sum_assignment, giving the same arrays, ties
/// included), in float64, for small matrices of any real element type and
/// any strides (transposed views need no copy).  Any shape: tall matrices
/// are solved transposed.
/// @param[in]  cost      entry (i, j) at byte offset i * row_stride + j * col_stride
/// @param[in]  maximize  maximise the sum instead
/// @param[out] row_ind   length min(n_rows, n_cols): assigned rows, increasing
/// @param[out] col_ind   length min(n_rows, n_cols): their columns
/// @return invalid_input for NaN or the wrong infinity (-inf; +inf under
///         maximize), infeasible when the forbidden entries leave no full
///         assignment, overflow for integers that float64 does not keep
///         exact (max(n_rows, n_cols, 8) * max|c| > 2^50).
template <class T>
status solve_lsap_shortest_path(const T* cost, std::int64_t n_rows, std::int64_t n_cols,
                                std::int64_t row_stride, std::int64_t col_stride, bool maximize,
                                std::int64_t* row_ind, std::int64_t* col_ind) noexcept;

/// solve_lsap_shortest_path for an element type known at run time, as NumPy
/// names it: `kind` 'f' (itemsize 8 or 4), 'i' or 'u' (8, 4, 2 or 1); any
/// other type is status::invalid_input, with no message (not ours to read).
status solve_lsap_shortest_path_of(char kind, int itemsize, const void* cost, std::int64_t n_rows,
                                   std::int64_t n_cols, std::int64_t row_stride,
                                   std::int64_t col_stride, bool maximize, std::int64_t* row_ind,
                                   std::int64_t* col_ind) noexcept;

/// Solves the LSAP.
/// @param[in]  cost     n_rows x n_cols, row-major, n_rows <= n_cols
/// @param[out] col4row  length n_rows: column assigned to each row
/// @param[out] u        length n_rows: row duals
/// @param[out] v        length n_cols: column duals; u[i] + v[j] <= cost[i][j]
///                      everywhere, equality on assigned pairs, v[j] <= 0 and
///                      v[j] = 0 on unassigned columns (the optimality certificate)
/// @param[out] stats    what the run did
status solve_lsap_dense(const double* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        double* u, double* v, lsap_stats* stats) noexcept;
status solve_lsap_dense(const float* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        float* u, float* v, lsap_stats* stats) noexcept;
status solve_lsap_dense(const std::int64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept;
/// int32 costs, int64 duals: the GPU methods read them as they are (no
/// host pass); omp-tree solves a widened int64 copy.
status solve_lsap_dense(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        lsap_method method, const lsap_options& options, std::int64_t* col4row,
                        std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept;

// ---- sparse assignment ---------------------------------------------------------

/// What one sparse solve did.
struct sparse_lsap_stats {
  double seconds_init = 0;            ///< row reduction and greedy assignment
  double seconds_solve = 0;           ///< the shortest augmenting path searches
  std::int64_t initial_matches = 0;   ///< rows assigned by the greedy pass
  std::int64_t augmenting_paths = 0;  ///< searches (one path each)
  std::int64_t columns_scanned = 0;   ///< columns finalised over all searches
  std::int64_t edges_relaxed = 0;     ///< stored entries examined by the searches
  std::int64_t auction_phases = 0;    ///< epsilon-scaling phases of the start (square)
  std::int64_t auction_bids = 0;      ///< bids over those phases
};

/// Solves the sparse LSAP by shortest augmenting paths (Jonker & Volgenant
/// 1987, a binary-heap Dijkstra over the stored entries:
/// cpp/src/lsap/sparse_shortest_path.cpp).  Stored entries are the allowed
/// pairs; duplicates are parallel edges.
/// @param[in]  row_ptr  length n_rows + 1, CSR offsets
/// @param[in]  col_idx  length row_ptr[n_rows], column of each entry, < n_cols
/// @param[in]  weight   length row_ptr[n_rows], finite
/// @param[out] col4row  length n_rows: column assigned to each row
/// @param[out] u        length n_rows: row duals
/// @param[out] v        length n_cols: column duals; u[i] + v[j] <= w on every
///                      entry, equality on assigned pairs, v[j] <= 0 and v[j] = 0
///                      on unassigned columns
/// @param[out] stats    what the run did
/// @return infeasible when no assignment covers every row ("no full matching
///         exists"); overflow for int64 weights with max(n_rows, n_cols, 8) *
///         max|w| > 2^58; invalid_input when n_rows > n_cols.
status solve_lsap_sparse(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                         const double* weight, std::int64_t n_rows, std::int64_t n_cols,
                         const lsap_options& options, std::int64_t* col4row, double* u, double* v,
                         sparse_lsap_stats* stats) noexcept;
status solve_lsap_sparse(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                         const std::int64_t* weight, std::int64_t n_rows, std::int64_t n_cols,
                         const lsap_options& options, std::int64_t* col4row, std::int64_t* u,
                         std::int64_t* v, sparse_lsap_stats* stats) noexcept;

}  // namespace matchflow

// Batched linear sum assignment: many independent dense problems of one
// shape, solved in one call.
//
// cost holds `batch` row-major n_rows x n_cols matrices back to back (any
// shape: tall problems are solved transposed).  Each problem is solved by
// the shortest augmenting path algorithm (Crouse 2016, the algorithm of
// scipy.optimize.linear_sum_assignment): on the CPU one problem per OpenMP
// thread at a time (cpp/src/lsap/batched.cpp), on the GPU one thread block
// per problem (cuda/src/lsap/batched_kernels.cuh).  The solvers check the
// costs in their first pass (NaN and the wrong infinity: invalid_input) and
// find infeasible problems themselves; the Python layer does no pass over
// the costs.
#pragma once

#include <cstdint>

#include "matchflow/lsap.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

enum class batched_lsap_method : int {
  omp_sap = 0,  ///< OpenMP over problems, each by the sequential shortest augmenting path
  gpu_sap = 1,  ///< one CUDA thread block per problem, shortest augmenting path
};

struct batched_lsap_options {
  int threads = 0;  ///< OpenMP threads; 0 = omp_get_max_threads()
  int device = 0;   ///< CUDA device ordinal
  int block_threads =
      0;             ///< gpu-sap: threads per block, a multiple of 32 in [32, 512]; 0 = by size
  int pipeline = 1;  ///< gpu-sap: overlap the upload of large stacks with their solve
  /// gpu-sap only: `cost`, `row_ind` and `col_ind` are in the GPU memory of
  /// `device` (read and written there, never copied through the host), and
  /// the work is ordered on `stream` (the caller's cudaStream_t; 0 = the
  /// legacy default stream).  The kernel checks the costs as for host input.
  bool on_device = false;
  std::uintptr_t stream = 0;
};

struct batched_lsap_stats {
  double seconds_solve = 0;     ///< the searches (GPU: the kernels, without copies; pipelined:
                                ///< their tail past the last copy)
  double seconds_transfer = 0;  ///< host <-> device copies
  std::int64_t kernel_launches = 0;
  std::int64_t failed_problem = -1;  ///< lowest batch index whose status is not ok
  std::int64_t shared_costs = 0;     ///< gpu-sap: 1 when the costs were read from shared memory
  std::int64_t block_threads = 0;    ///< gpu-sap: threads per block used
};

/// Solves `batch` problems.  T: double, float, int64, int32 or uint8.
/// Costs are read as float64 (integers exact while max(n_rows, n_cols, 8) *
/// max|c| <= 2^50, as in solve_lsap_shortest_path; the CPU method returns
/// overflow past that bound, the GPU one rounds as SciPy does).
/// @param[in]  cost     batch * n_rows * n_cols entries, problem after problem
/// @param[in]  maximize maximise the sums instead
/// @param[out] row_ind  batch * min(n_rows, n_cols): per problem the assigned rows, increasing
/// @param[out] col_ind  batch * min(n_rows, n_cols): their columns
/// @return the status of the lowest failing problem, its index in
///         stats->failed_problem and in last_error(): invalid_input (NaN or
///         the wrong infinity), infeasible, overflow (CPU, integers)
template <class T>
status solve_batched_lsap(const T* cost, std::int64_t batch, std::int64_t n_rows,
                          std::int64_t n_cols, bool maximize, batched_lsap_method method,
                          const batched_lsap_options& options, std::int64_t* row_ind,
                          std::int64_t* col_ind, batched_lsap_stats* stats) noexcept;

}  // namespace matchflow

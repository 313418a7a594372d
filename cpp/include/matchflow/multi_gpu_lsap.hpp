// Dense linear assignment split over several GPUs: paper 001's multi-GPU
// Hungarian (Section 5), the search's per-step exchanges GPU to GPU.  Two
// variants: CU-TREE with the columns split into blocks, one per GPU
// (cuda/src/lsap/multi_gpu_kernels.cuh), and CU-CLASS with the rows split
// (multi_classic_kernels.cuh).
//
// A solve is a set of parts, one per block, each an `lsap_part`:
// create every part (its block uploaded, its buffers allocated), connect
// them (in one process: lsap_parts_connect; one part per process:
// lsap_part_connect_ipc with every part's lsap_part_ipc_handle, exchanged
// by the caller's launcher), launch every part, then finish each.  The
// answer is SciPy's: col4row over all rows, u, and each part's v block.
// The parts are implemented by the CUDA backend; without CUDA every call
// returns status::cuda_unavailable.
#pragma once

#include <cstdint>

#include "matchflow/lsap.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

/// The element type of a cost matrix.
enum class cost_kind : int { int32 = 0, int64 = 1, float32 = 2, float64 = 3 };

/// One part: the block of rows [row0, row0 + height) and columns [col0,
/// col0 + width) of an n_rows x n_cols problem (n_rows <= n_cols) on GPU
/// `device`: all rows and width >= 1 columns for CU-TREE's column split,
/// height >= 1 rows and all columns for CU-CLASS's row split (split_rows).
struct lsap_part_config {
  int device = 0;
  int part = 0;             ///< this part's index in [0, parts)
  int parts = 1;            ///< at most lsap_max_parts
  int parts_on_device = 1;  ///< parts of this process on `device` (they share its SMs)
  std::int64_t n_rows = 0, n_cols = 0;
  std::int64_t col0 = 0, width = 0;
  std::int64_t row0 = 0, height = 0;
  bool split_rows = false;
  cost_kind kind = cost_kind::float64;
  /// The costs, one of: this part's block in a row-major host matrix (its
  /// row i at host_cost + i * host_stride elements), read in pieces ...
  const void* host_cost = nullptr;
  std::int64_t host_stride = 0;
  /// ... or the part's n_rows x width row-major block in `device`'s memory,
  /// read where it is (kept alive and unchanged by the caller until finish).
  const void* device_cost = nullptr;
  /// Host costs: read the complement (~c for integers, -c for floats), so
  /// that a maximisation needs no negated copy of the matrix.
  bool complement = false;
  /// How long a part waits for another's post before it gives up.
  double timeout_seconds = 60.0;
};

constexpr int lsap_max_parts = 8;

class lsap_part;

/// Checks the device's memory, allocates the part's buffers, uploads its
/// block and computes its row minima.
status lsap_part_create(const lsap_part_config& config, lsap_part** part) noexcept;
/// The CUDA IPC handle (64 bytes) of the part's exchange buffers.
status lsap_part_ipc_handle(lsap_part* part, void* handle) noexcept;
/// Connects every part of a solve held by this process (in part order),
/// enabling peer access between their GPUs.
status lsap_parts_connect(lsap_part* const* parts, int count) noexcept;
/// Connects this process's part to the others from every part's IPC
/// handle (parts * 64 bytes, in part order).
status lsap_part_connect_ipc(lsap_part* part, const void* handles) noexcept;
/// Starts the part's solve; returns at once.
status lsap_part_launch(lsap_part* part) noexcept;
/// Waits for the part's solve; col4row (n_rows; may be null), u of the
/// part's rows (height; may be null) and v of its columns (width).  u and v are int64 for
/// integer costs, else of the cost type.  status::infeasible when no
/// assignment avoids every +inf; cuda_error when a part stopped hearing
/// from the others (a GPU or process stopped).
status lsap_part_finish(lsap_part* part, std::int64_t* col4row, void* u, void* v,
                        lsap_stats* stats) noexcept;
void lsap_part_destroy(lsap_part* part) noexcept;

/// The same splits on the CPU (cpp/src/lsap/split_tree.cpp, and
/// split_classic.cpp for `rows`): `parts` column (row) blocks run one
/// after the other in this thread, with the kernels' exchanges, claims and
/// replicated path walks; the splits' reference where no GPU is (not a
/// fast solver).  The contract of solve_lsap_dense
/// (n_rows <= n_cols, duals in the cost type, int64 for integers); the
/// duals are as solved (no shift).
status solve_lsap_split(const double* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                        bool rows, std::int64_t* col4row, double* u, double* v,
                        lsap_stats* stats) noexcept;
status solve_lsap_split(const float* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                        bool rows, std::int64_t* col4row, float* u, float* v,
                        lsap_stats* stats) noexcept;
status solve_lsap_split(const std::int64_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        int parts, bool rows, std::int64_t* col4row, std::int64_t* u,
                        std::int64_t* v, lsap_stats* stats) noexcept;
status solve_lsap_split(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                        int parts, bool rows, std::int64_t* col4row, std::int64_t* u,
                        std::int64_t* v, lsap_stats* stats) noexcept;

}  // namespace matchflow

// Device code shared by the GPU matching methods: the greedy initial
// matching and the pieces of the on-device transpose (CSR -> CSC).  The host
// side, which runs them (and CUB's scans and radix sort between them), is
// graph_upload.cu.
//
// Greedy initial matching.  This is where the GPU methods compute their
// starting matching (the "cheap matching" both papers start from: paper 000,
// section IV, and paper 004, section 4, run every algorithm from it).
// Deviation: the papers compute it sequentially on the host; here every row
// claims its first unclaimed column with atomicCAS on row4col, all rows at
// once.  The result is a maximal matching (a row left unmatched saw all its
// columns claimed), as the sequential greedy's is, but not necessarily the
// same one, so on naturally ordered meshes (where the sequential greedy is
// often perfect) a few vertices may be left to the solve.
//
// Terms.  Rows u (CSR: row_ptr/row_adj), columns v (CSC: col_ptr/col_adj);
// col4row / row4col as everywhere in matchflow; -1 = unmatched.
#pragma once

#include <cstdint>

#include "common/atomics.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda::upload {

/// Greedy initial matching.  Thread mapping: one thread per row.  Each row
/// walks its columns in order and claims the first one still free with
/// atomicCAS(row4col[v], -1, u).  Expects row4col = -1 on entry.
/// sync: row4col (atomicCAS; relaxed pre-check), *matched (one atomicAdd per block).
/// safe: col4row[u] (one writer: u's thread), row_ptr, row_adj (read only).
__global__ __launch_bounds__(threads_per_block) void greedy_kernel(
    vertex_t m, const offset_t* __restrict__ row_ptr, const vertex_t* __restrict__ row_adj,
    vertex_t* __restrict__ col4row, vertex_t* row4col, unsigned long long* matched) {
  const std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  vertex_t mate = -1;
  if (u < m) {
    const offset_t end = row_ptr[u + 1];
    for (offset_t e = row_ptr[u]; e < end; ++e) {
      const vertex_t v = row_adj[e];
      if (atomic_read(&row4col[v]) != -1) continue;  // cheap test before the CAS
      if (atomicCAS(&row4col[v], vertex_t{-1}, vertex_t(u)) == -1) {
        mate = v;
        break;
      }
    }
    col4row[u] = mate;
  }
  const int count = __syncthreads_count(mate != -1);
  if (threadIdx.x == 0 && count > 0) atomicAdd(matched, static_cast<unsigned long long>(count));
}

// ---------------------------------------------------------------------------
// Transpose (CSR -> CSC) on the device.  Steps, with the kernels below:
//   1. row of each edge: row_of = 0; mark_row_starts_kernel writes u at the
//      first edge of every non-empty row u; an inclusive max-scan (CUB)
//      spreads it over the row's edges.
//   2. column degrees: count_columns_kernel (atomicAdd per edge) into
//      col_ptr[0, n), col_ptr[n] = 0; an exclusive sum (CUB, in place)
//      turns them into the CSC offsets.
//   3. col_adj: a stable radix sort (CUB) of the pairs (column, row) keyed
//      by column; rows were in increasing order, so each column's rows come
//      out sorted, exactly as the host transpose's counting sort leaves them.
// ---------------------------------------------------------------------------

/// Thread mapping: one thread per row.  safe: row_of[row_ptr[u]] (the first
/// edges of distinct non-empty rows are distinct positions).
__global__ __launch_bounds__(threads_per_block) void mark_row_starts_kernel(
    vertex_t m, const offset_t* __restrict__ row_ptr, vertex_t* __restrict__ row_of) {
  const std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u < m && row_ptr[u + 1] > row_ptr[u]) row_of[row_ptr[u]] = vertex_t(u);
}

/// The scan operator of step 1.
struct max_op {
  __device__ vertex_t operator()(vertex_t a, vertex_t b) const { return a > b ? a : b; }
};

/// Thread mapping: grid-stride loop over the edges.
/// sync: counts (atomicAdd).  safe: row_adj (read only).
__global__ __launch_bounds__(threads_per_block) void count_columns_kernel(
    offset_t nnz, const vertex_t* __restrict__ row_adj, unsigned long long* counts) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz;
       e += stride) {
    atomicAdd(&counts[row_adj[e]], 1ull);
  }
}

// Tried and dropped for step 3: a scatter by atomicAdd on per-column
// cursors (rows in arbitrary order).  On R-MAT scale 20 (16M edges) the
// whole transpose took 1.41-1.47 ms either way on the H100.

/// Used once per process to measure what one kernel launch costs.
__global__ void empty_kernel() {}

}  // namespace matchflow::cuda::upload

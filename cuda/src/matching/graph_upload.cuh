// Host side of the graph upload shared by the GPU matching methods (G-PR,
// APFB/APsB): see graph_upload.cu.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "common/buffer.cuh"
#include "matchflow/cuda/entry.hpp"

namespace matchflow::cuda {

/// A bipartite graph and its matching on the device.  Either orientation may
/// be absent (size 0): APFB/APsB drop the CSR once the CSC is built.
struct device_graph {
  vertex_t m = 0, n = 0;
  offset_t nnz = 0;
  device_buffer<offset_t> row_ptr, col_ptr;
  device_buffer<vertex_t> row_adj, col_adj;
  device_buffer<vertex_t> col4row, row4col;
  std::int64_t init_cardinality = 0;  ///< size of the initial matching
};

/// Peak device bytes prepare_graph needs (graph, mates, transpose scratch).
std::size_t graph_bytes(const bipartite_view& g, gpu_start start, bool keep_rows);

/// Puts `g` and its initial matching on the device: uploads the CSR (and the
/// host's mates for gpu_start::host_mates), computes the greedy start on the
/// device for gpu_start::greedy, then, only when that start is not already
/// perfect on the smaller side, uploads the CSC (when `g` has it) or builds
/// it on the device.  `keep_rows` false frees the CSR at the end.  Times go
/// to stats (transfer, init, transpose, setup for the allocations) and
/// launches to stats->kernel_launches.  Returns false when the start is
/// perfect (nothing to solve: d then has no CSC).
bool prepare_graph(const bipartite_view& g, gpu_start start, const vertex_t* h_col4row,
                   const vertex_t* h_row4col, bool keep_rows, device_graph& d, cudaStream_t s,
                   matching_stats* stats);

/// Copies the matching back (timed as transfer).
void download_matching(const device_graph& d, vertex_t* h_col4row, vertex_t* h_row4col,
                       cudaStream_t s, matching_stats* stats);

/// Seconds one kernel launch costs on `device` (a loop of empty launches,
/// measured on the first call per device and remembered).
double launch_seconds(int device);

/// Wall-clock phases of a solve: each mark synchronizes the stream first.
class phase_clock {
 public:
  explicit phase_clock(cudaStream_t s) : s_(s), last_(std::chrono::steady_clock::now()) {}
  /// Seconds since the previous mark (or construction), after the stream drains.
  double mark() {
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s_));
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return dt;
  }

 private:
  cudaStream_t s_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace matchflow::cuda

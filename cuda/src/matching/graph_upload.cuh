// Host side of the graph upload shared by the GPU matching methods (G-PR,
// APFB/APsB): see graph_upload.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/buffer.cuh"
#include "common/host_copy.cuh"
#include "common/phase_clock.cuh"
#include "matchflow/detail/cuda_backend.hpp"

namespace matchflow::cuda {

/// A bipartite graph and its matching on the device.  Either orientation may
/// be absent (size 0): see graph_sides.
struct device_graph {
  vertex_t m = 0, n = 0;
  offset_t nnz = 0;
  device_buffer<offset_t> row_ptr, col_ptr;
  device_buffer<vertex_t> row_adj, col_adj;
  device_buffer<vertex_t> col4row, row4col;
  std::int64_t init_cardinality = 0;  ///< size of the initial matching
  populate_ahead result_pages;        ///< host result arrays mapped while the solve runs
};

/// What a GPU matching method is given: the host's checked graph
/// (bipartite_view) with host mate arrays, or the caller's raw CSR (raw_csr,
/// checked on the device) with mate arrays in its memory; for a raw CSR in
/// GPU memory, the caller's stream, which every copy and kernel is then
/// ordered on.
struct matching_input {
  vertex_t m = 0, n = 0;
  offset_t nnz = 0;
  const bipartite_view* host = nullptr;  ///< the host's checked graph, or null
  const raw_csr* raw = nullptr;          ///< the caller's raw CSR, or null
  vertex_t* col4row = nullptr;           ///< results, in the input's memory
  vertex_t* row4col = nullptr;
  cudaStream_t caller_stream = nullptr;  ///< raw CSR in GPU memory: the caller's stream
  bool has_cols() const { return host != nullptr && host->has_cols(); }
  /// The graph and the results are in the caller's GPU memory.
  bool on_device() const { return raw != nullptr && raw->on_device; }
};

/// The input of a host graph `g` (its nnz read from g.rows.ptr).
matching_input host_input(const bipartite_view& g, vertex_t* col4row, vertex_t* row4col);

/// The input of the caller's raw CSR `g`, results to col4row / row4col (in
/// g's memory); ordered on `s` when g is in GPU memory.
matching_input raw_input(const raw_csr& g, vertex_t* col4row, vertex_t* row4col, cudaStream_t s);

/// The stream a solve runs on: the caller's for a device input, else its own.
inline stream solve_stream(const matching_input& in) {
  return stream(in.caller_stream, in.on_device());
}

/// The orientations a method solves on: G-PR needs both; APFB/APsB search
/// from one side over its own adjacency only, the CSC (columns, the CSR
/// then dropped once the CSC is built) or the CSR (rows: no CSC at all).
enum class graph_sides { columns, rows, both };

/// Peak device bytes prepare_graph needs (graph, mates, transpose scratch).
std::size_t graph_bytes(const matching_input& in, gpu_start start, graph_sides sides);

/// Puts the graph and its initial matching on the device: uploads the CSR
/// (and the host's mates for gpu_start::host_mates), or uploads (host
/// memory) and converts and checks the caller's raw CSR (std::invalid_argument
/// naming the fault; the mates then come from the device greedy or empty),
/// computes the greedy start on the device for gpu_start::greedy and
/// greedy_by_degree, then, only when that start is not already
/// perfect on the smaller side and `sides` needs the CSC, uploads it (when
/// `g` has it) or builds it on the device.  graph_sides::columns frees the
/// CSR at the end.  Times go
/// to stats (transfer, init, transpose, setup for the allocations) and
/// launches to stats->kernel_launches.  Returns false when the start is
/// perfect (nothing to solve: d then has no CSC).
bool prepare_graph(const matching_input& in, gpu_start start, graph_sides sides, device_graph& d,
                   cudaStream_t s, matching_stats* stats);

/// Counts the matching on the device (stats->cardinality), then copies it
/// to the input's result arrays: to the host (timed as transfer), or to the
/// caller's device arrays (ordered on `s`, not waited for).
void download_matching(const device_graph& d, const matching_input& in, cudaStream_t s,
                       matching_stats* stats);

/// Fills the input's result arrays with -1 (a graph with no rows or no
/// columns); a raw CSR is still checked (prepare_graph's faults).
void empty_matching(const matching_input& in);

/// Seconds one kernel launch costs on `device` (a loop of empty launches,
/// measured on the first call per device and remembered).
double launch_seconds(int device);

}  // namespace matchflow::cuda

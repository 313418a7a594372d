// solve_matching: initial matching, then the chosen algorithm on the chosen
// backend.  The only matching code that calls into cuda/.  GPU methods with
// the greedy (or no) start get the CSR alone and do the rest on the device
// (cuda/src/matching/graph_upload.cu); with Karp-Sipser the host computes
// the start (and the transpose it needs) as for the CPU methods.
#include <algorithm>
#include <chrono>

#include "matchflow/detail/assert.hpp"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/matching.hpp"
#include "matchflow/timing.hpp"
#include "matching_cpu.hpp"
#include "transpose.hpp"

namespace matchflow {
namespace {

using detail::clock_type;
using detail::seconds_since;

bool is_gpu(matching_method method) {
  return method == matching_method::gpu_pr || method == matching_method::gpu_apfb ||
         method == matching_method::gpu_apsb;
}

/// GPU methods time their own phases (transfer, transpose, init, solve).
status run_gpu(const bipartite_view& g, matching_method method, cuda::gpu_start start,
               const matching_options& options, vertex_t* col4row, vertex_t* row4col,
               matching_stats* stats) {
  if (method == matching_method::gpu_pr) {
    return cuda::gpu_pr(g, start, options, col4row, row4col, stats);
  }
  return cuda::gpu_ap(g, start, method == matching_method::gpu_apfb, options, col4row, row4col,
                      stats);
}

status run_method(const bipartite_view& g, matching_method method, const matching_options& options,
                  vertex_t* col4row, vertex_t* row4col, matching_stats* stats) {
  switch (method) {
    case matching_method::pr:
      detail::push_relabel(g, options.relabel_k, col4row, row4col, stats);
      return status::ok;
    case matching_method::pdbfs:
      if (!g.has_cols()) {  // search from the rows: roles and mate arrays swap
        const bipartite_view swapped{adjacency_view{g.n_cols(), nullptr, nullptr}, g.rows};
        detail::pdbfs(swapped, options.threads, row4col, col4row, stats);
      } else {
        detail::pdbfs(g, options.threads, col4row, row4col, stats);
      }
      return status::ok;
    case matching_method::gpu_pr:
    case matching_method::gpu_apfb:
    case matching_method::gpu_apsb:
      return run_gpu(g, method, cuda::gpu_start::host_mates, options, col4row, row4col, stats);
    case matching_method::msbfs_graft:
      detail::msbfs_graft(g, options.threads, col4row, row4col, stats);
      return status::ok;
  }
  return fail(status::invalid_input, "unknown matching method");
}

void initial(const bipartite_view& g, matching_init init, int threads, vertex_t* col4row,
             vertex_t* row4col, matching_stats* stats) {
  const auto start = clock_type::now();
  std::fill(col4row, col4row + g.n_rows(), vertex_t{-1});
  std::fill(row4col, row4col + g.n_cols(), vertex_t{-1});
  stats->init_cardinality = detail::initial_matching(g, init, col4row, row4col, threads);
  stats->seconds_init += seconds_since(start);
}

/// P-DBFS gets the parallel greedy initial matching.  MS-BFS-Graft (what
/// "auto" runs on many cores) keeps the sequential one: slower on random
/// graphs, but on naturally ordered meshes often already perfect, where the
/// parallel one left a few vertices to the full solve (NOTES.md, "CPU constants").
int init_threads(matching_method method, const matching_options& options) {
  return method == matching_method::pdbfs ? options.threads : 1;
}

/// P-DBFS searches from the rows over the stored CSR unless the column
/// orientation is already built (Karp-Sipser) or the graph is too tall
/// (too_tall_to_search_rows, graph.hpp).
bool pdbfs_needs_cols(const bipartite_view& g) {
  return g.has_cols() || too_tall_to_search_rows(g.n_rows(), g.n_cols());
}

/// `g` with its column orientation present, building it into `storage` if
/// the caller left it out (timed in stats->seconds_transpose).
bipartite_view with_cols(const bipartite_view& g, detail::adjacency_storage& storage,
                         matching_stats* stats) {
  if (g.has_cols()) return g;
  const auto start = clock_type::now();
  storage = detail::transpose(g.rows, g.n_cols());
  stats->seconds_transpose += seconds_since(start);
  return bipartite_view{g.rows, storage.view()};
}

}  // namespace

status solve_matching(const bipartite_view& g, matching_method method,
                      const matching_options& options, vertex_t* col4row, vertex_t* row4col,
                      matching_stats* stats) noexcept {
  // The Python layer's checks (_validation.as_bipartite): a structurally
  // valid CSR over the rows; the columns' orientation is the core's to build.
  MATCHFLOW_ASSERT(g.rows.n >= 0 && g.cols.n >= 0 && g.rows.ptr != nullptr);
  MATCHFLOW_ASSERT(g.rows.ptr[0] == 0 && options.threads >= 0);
  return guarded([&] {
    *stats = matching_stats{};
    if (is_gpu(method) && options.init != matching_init::karp_sipser) {
      // The device uploads the CSR, computes the greedy start and builds the
      // column orientation itself (cuda/src/matching/graph_upload.cu).
      return run_gpu(g, method, cuda::device_start(options), options, col4row, row4col, stats);
    }
    const vertex_t perfect = std::min(g.n_rows(), g.n_cols());
    detail::adjacency_storage csc;
    bipartite_view graph = g;
    // P-DBFS over the rows gets Karp-Sipser over the rows (cheap.cpp): no
    // transpose to spare, so no probe either.
    if (options.init == matching_init::karp_sipser &&
        (method != matching_method::pdbfs || pdbfs_needs_cols(g))) {
      // Karp-Sipser needs the column orientation and a sequential pass over
      // both; a greedy probe (rows only, O(n) when it succeeds) first spares
      // both on inputs it already matches perfectly (naturally ordered meshes).
      initial(g, matching_init::cheap, 1, col4row, row4col, stats);
      if (stats->init_cardinality == perfect) return status::ok;
      graph = with_cols(g, csc, stats);
    }
    initial(graph, options.init, init_threads(method, options), col4row, row4col, stats);
    if (stats->init_cardinality == perfect) {
      return status::ok;  // perfect on the smaller side: already maximum
    }
    if (method != matching_method::pdbfs || pdbfs_needs_cols(graph)) {
      graph = with_cols(graph, csc, stats);
    }
    const auto start = clock_type::now();
    const status st = run_method(graph, method, options, col4row, row4col, stats);
    if (!is_gpu(method)) stats->seconds_solve = seconds_since(start);
    return st;
  });
}

status solve_matching_raw(const raw_csr& g, matching_method method, const matching_options& options,
                          std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                          matching_stats* stats) noexcept {
  return guarded([&] {
    *stats = matching_stats{};
    if (!is_gpu(method) || options.init == matching_init::karp_sipser) {
      return fail(status::invalid_input,
                  "a raw CSR needs a GPU method and the 'cheap' or 'none' start");
    }
    const auto start = cuda::device_start(options);
    if (method == matching_method::gpu_pr) {
      return cuda::gpu_pr_raw(g, start, options, stream, col4row, row4col, stats);
    }
    return cuda::gpu_ap_raw(g, start, method == matching_method::gpu_apfb, options, stream, col4row,
                            row4col, stats);
  });
}

status count_empty_sampled_rows(const raw_csr& g, std::int64_t step, int device,
                                std::uintptr_t stream, std::int64_t* empty) noexcept {
  return cuda::count_empty_sampled_rows(g, step, device, stream, empty);
}

}  // namespace matchflow

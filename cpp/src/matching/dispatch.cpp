// solve_matching: initial matching, then the chosen algorithm on the chosen
// backend.  The only matching code that calls into cuda/.
#include <algorithm>
#include <chrono>

#include "matchflow/cuda/entry.hpp"
#include "matchflow/matching.hpp"
#include "matching_cpu.hpp"
#include "transpose.hpp"

namespace matchflow {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

status run_method(const bipartite_view& g, matching_method method,
                  const matching_options& options, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) {
  switch (method) {
    case matching_method::pr:
      detail::push_relabel(g, options.relabel_k, col4row, row4col, stats);
      return status::ok;
    case matching_method::pdbfs:
      detail::pdbfs(g, options.threads, col4row, row4col, stats);
      return status::ok;
    case matching_method::gpu_pr:
      return cuda::gpu_pr(g, options, col4row, row4col, stats);
    case matching_method::gpu_apfb:
      return cuda::gpu_ap(g, true, options, col4row, row4col, stats);
    case matching_method::gpu_apsb:
      return cuda::gpu_ap(g, false, options, col4row, row4col, stats);
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
  stats->seconds_init = seconds_since(start);
}

/// The parallel methods get the parallel greedy initial matching.
int init_threads(matching_method method, const matching_options& options) {
  const bool parallel =
      method == matching_method::pdbfs || method == matching_method::msbfs_graft;
  return parallel ? options.threads : 1;
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
                      const matching_options& options, vertex_t* col4row,
                      vertex_t* row4col, matching_stats* stats) noexcept {
  return guarded([&] {
    *stats = matching_stats{};
    detail::adjacency_storage csc;
    bipartite_view graph =
        options.init == matching_init::karp_sipser ? with_cols(g, csc, stats) : g;
    initial(graph, options.init, init_threads(method, options), col4row, row4col, stats);
    if (stats->init_cardinality == std::min(g.n_rows(), g.n_cols())) {
      return status::ok;  // perfect on the smaller side: already maximum
    }
    graph = with_cols(graph, csc, stats);
    const auto start = clock_type::now();
    const status st = run_method(graph, method, options, col4row, row4col, stats);
    stats->seconds_solve = seconds_since(start) - stats->seconds_transfer;
    return st;
  });
}

}  // namespace matchflow

// APFB / APsB host driver: maximum cardinality bipartite matching by GPU
// augmenting paths (paper 004, Algorithm 1; kernels in apfb_kernels.cuh).
//
// Algorithm 1 becomes one CUDA graph launched once per solve (built, and
// kept for later solves of its shape, in apfb_graph.cuh):
//
//   first_init                              (line 4 of the first phase)
//   while phase_loop:                       (Algorithm 1 line 2)
//     phase_begin                           (lines 3-5; sets level_loop)
//     while level_loop:                     (line 6)
//       bfs (GPUBFS or GPUBFS-WR)           (lines 7-11; its last block sets
//                                            level_loop, APsB stops at the
//                                            first level that found a path)
//     alternate                             (line 12; sets phase_loop)
//     fix_reset                             (line 13, and line 4 of the
//                                            next phase on the columns
//                                            this phase visited)
//     or, grafting (APFB with GPUBFS-WR):
//     graft_classify, graft_apply           (line 13; the live trees stay,
//                                            and the next phase searches
//                                            from their columns that met
//                                            a torn-down tree)
//
// Both loops are conditional `while` nodes, so the host neither launches
// per level nor reads flags back: launch overhead is one graph launch per
// solve plus the device-side scheduling of each kernel node.  The paper
// launches every kernel from the host and copies vertex_inserted and
// augmenting_path_found back after each level.
//
// Thread layouts (paper 004, section 4): CT = 256 blocks x 256 threads for
// every kernel; MT = min(n, resident threads of the device) threads, where n
// is the number of vertices the kernel strides over (columns for
// INITBFSARRAY, BFS and FIXMATCHING, rows for ALTERNATE).
//
// Search side.  The algorithm is symmetric in the two sides and reads only
// the searching side's adjacency, so it runs on the transposed problem (the
// rows search over the uploaded CSR: no CSC, no device transpose) unless
// the caller passed the CSC or the graph is too tall
// (too_tall_to_search_rows, matchflow/graph.hpp: P-DBFS's rule too).  The
// kernels' "columns" are then the graph's rows.
//
// Graph upload, initial matching and (column search) the CSC: graph_upload.cu
// (shared with G-PR).  seconds_solve is the graph launch alone
// (synchronized at both ends).
//
// Memory: the searching side's offsets and ids, both mate arrays,
// predecessor, bfs_array, mate0, two queues, the end list, (GPUBFS-WR)
// root and (grafting) 4 touch slots per column; for the column search, the
// CSR only until the CSC is built.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/launch.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/detail/environment.hpp"
#include "matching/apfb_graph.cuh"
#include "matching/apfb_kernels.cuh"
#include "matching/graph_upload.cuh"

namespace matchflow::cuda {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Grid sizes of the two thread layouts.
struct layout {
  bool mt = false;
  std::int64_t resident_threads = 0;  ///< SMs x max threads per SM
  unsigned int blocks(std::int64_t n) const {
    if (!mt) return 256;  // CT: the paper's fixed 256 x 256 grid
    return blocks_for(std::max<std::int64_t>(1, std::min(n, resident_threads)));
  }
};

/// The graph's kernels for this variant and layout (apfb_graph.cuh).
template <bool WR, bool GRAFT>
ap_shape graph_shape(const ap::ap_args& args, const layout& lay, int device) {
  const unsigned int col_blocks = lay.blocks(args.n_cols);
  const unsigned int row_blocks = lay.blocks(args.n_rows);
  auto kernel = [](auto* func, unsigned int blocks) {
    return ap_kernel{reinterpret_cast<void*>(func), blocks};
  };
  ap_shape shape;
  shape.device = device;
  shape.kernels = {kernel(&ap::first_init_kernel<WR, GRAFT>, col_blocks),
                   kernel(&ap::phase_begin_kernel, 0),
                   kernel(&ap::bfs_kernel<WR, GRAFT>, col_blocks),
                   (WR && args.shortest) ? kernel(&ap::alternate_kernel<true>, row_blocks)
                                         : kernel(&ap::alternate_kernel<false>, row_blocks)};
  if (GRAFT) {
    shape.kernels.push_back(kernel(&ap::graft_classify_kernel, col_blocks));
    shape.kernels.push_back(kernel(&ap::graft_apply_kernel, col_blocks));
  } else {
    shape.kernels.push_back(kernel(&ap::fix_reset_kernel<WR>, col_blocks));
  }
  return shape;
}

ap_shape graph_shape(bool wr, bool graft, const ap::ap_args& args, const layout& lay, int device) {
  if (graft) return graph_shape<true, true>(args, lay, device);
  if (wr) return graph_shape<true, false>(args, lay, device);
  return graph_shape<false, false>(args, lay, device);
}

/// The launch layout over the device's resident threads.
layout resident_layout(int device, bool mt) {
  int sms = 0, threads_per_sm = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MATCHFLOW_CUDA_TRY(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  layout lay;
  lay.mt = mt;
  lay.resident_threads = static_cast<std::int64_t>(sms) * threads_per_sm;
  return lay;
}

/// The search's device arrays: per column bfs_array, mate0, two queues (and
/// root with the WR kernel; grafting, the touch slots too), per row
/// predecessor and the end-row list, in one allocation (every cudaFree
/// synchronizes the device), and the control block.
struct ap_buffers {
  static std::size_t words(std::size_t n_rows, std::size_t n_cols, bool wr, bool graft) {
    return (4 + (wr ? 1 : 0) + (graft ? ap::touch_slots : 0)) * n_cols + 2 * n_rows;
  }
  static std::size_t bytes(std::size_t n_rows, std::size_t n_cols, bool wr, bool graft) {
    return words(n_rows, n_cols, wr, graft) * sizeof(vertex_t) + sizeof(ap::ap_control);
  }
  ap_buffers(std::size_t n_rows, std::size_t n_cols, bool wr, bool graft)
      : pool(words(n_rows, n_cols, wr, graft)), ctl(1) {}
  device_buffer<vertex_t> pool;
  device_buffer<ap::ap_control> ctl;
};

/// Whether APFB with GPUBFS-WR grafts (apfb_kernels.cuh, "Tree grafting"):
/// where the host found the degrees skewed; MATCHFLOW_AP_GRAFT = 1 / 0 makes
/// it always / never graft, for A/B runs and tests.
bool grafting(const matching_options& options, bool apfb) {
  if (!apfb || options.bfs_kernel == 0) return false;
  switch (matchflow::detail::env_choice("MATCHFLOW_AP_GRAFT", {"auto", "1", "0"})) {
    case 1: return true;
    case 2: return false;
    default: return options.skewed_degrees;
  }
}

/// Whether the rows search (see "Search side" above).  MATCHFLOW_AP_SEARCH
/// = rows / columns forces a side (for measurement and tests).
bool search_rows(const matching_input& in) {
  switch (matchflow::detail::env_choice("MATCHFLOW_AP_SEARCH", {"auto", "rows", "columns"})) {
    case 1: return true;
    case 2: return false;
    default: return !in.has_cols() && !too_tall_to_search_rows(in.m, in.n);
  }
}

/// The graph as the kernels see it: their "columns" are the searching side.
struct search_graph {
  vertex_t n_rows = 0, n_cols = 0;
  const offset_t* ptr = nullptr;  ///< the searching side's offsets
  const vertex_t* adj = nullptr;  ///< ... and neighbours
  vertex_t* rmatch = nullptr;     ///< other side -> searching side
  vertex_t* cmatch = nullptr;     ///< searching side -> other side
};

search_graph searched(const device_graph& d, bool rows) {
  if (rows) {
    return {d.n, d.m, d.row_ptr.data(), d.row_adj.data(), d.row4col.data(), d.col4row.data()};
  }
  return {d.m, d.n, d.col_ptr.data(), d.col_adj.data(), d.col4row.data(), d.row4col.data()};
}

/// The kernels' arguments over `g` and `buf`, which this clears on `s`
/// (predecessors to -1).
ap::ap_args make_args(const search_graph& g, ap_buffers& buf, bool wr, bool apfb, bool graft,
                      cudaStream_t s) {
  const vertex_t nr = g.n_rows, nc = g.n_cols;
  const std::size_t n_rows = static_cast<std::size_t>(nr), n_cols = static_cast<std::size_t>(nc);
  vertex_t* carve = buf.pool.data();
  auto take = [&carve](std::size_t n) { return std::exchange(carve, carve + n); };
  ap::ap_args args{};
  // First, as the pool's start is aligned for int4.
  args.touch = graft ? reinterpret_cast<int4*>(take(ap::touch_slots * n_cols)) : nullptr;
  args.n_rows = nr;
  args.n_cols = nc;
  args.cxadj = g.ptr;
  args.cadj = g.adj;
  args.rmatch = g.rmatch;
  args.cmatch = g.cmatch;
  args.predecessor = take(n_rows);
  args.ends = take(n_rows);
  args.bfs_array = take(n_cols);
  args.mate0 = take(n_cols);
  args.queue[0] = take(n_cols);
  args.queue[1] = take(n_cols);
  args.root = wr ? take(n_cols) : nullptr;
  args.ctl = buf.ctl.data();
  args.max_phases = static_cast<long long>(std::min(nr, nc)) + 2;
  args.shortest = !apfb;
  buf.ctl.fill_bytes(0, s);
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(args.predecessor, 0xff, n_rows * sizeof(vertex_t), s));
  if (graft) {  // met_none everywhere
    MATCHFLOW_CUDA_TRY(cudaMemsetAsync(args.touch, 0xff, n_cols * sizeof(int4), s));
  }
  return args;
}

/// The counts of a finished search into `stats`.
void record_search(const ap::ap_control& ctl, bool graft, matching_stats* stats) {
  stats->iterations += ctl.phases;
  stats->bfs_levels += ctl.bfs_levels;
  // Kernel executions inside the graph: the first INITBFSARRAY, per phase
  // phase_begin, ALTERNATE and FIXMATCHING+INITBFSARRAY (grafting: its two
  // kernels), one BFS per level.
  stats->kernel_launches += 1 + (graft ? 4 : 3) * ctl.phases + ctl.bfs_levels;
  // Columns never lose their match, so the matching grew by the number of
  // free columns that got matched (the last phase re-queues those left;
  // grafting counts them as it tears their trees down).
  stats->augmentations += graft ? ctl.augmented : ctl.first_free - ctl.next_tail;
}

/// Both forms of the entry point (host graph, or the caller's raw CSR).
status run_ap(const matching_input& in, gpu_start start, bool apfb, const matching_options& options,
              matching_stats* stats) {
  const vertex_t nr = in.m, nc = in.n;
  if (nr == 0 || nc == 0) {
    if (start != gpu_start::host_mates) empty_matching(in);
    stats->cardinality = 0;
    return status::ok;
  }
  const auto setup_start = clock_type::now();
  const bool wr = options.bfs_kernel != 0;
  const bool graft = grafting(options, apfb);
  const bool rows = search_rows(in);
  const graph_sides sides = rows ? graph_sides::rows : graph_sides::columns;
  // The buffers' sizes: per searching and per other vertex.
  const std::size_t n_search = static_cast<std::size_t>(rows ? nr : nc);
  const std::size_t n_other = static_cast<std::size_t>(rows ? nc : nr);
  use_device_with_memory(options.device, graph_bytes(in, start, sides) +
                                             ap_buffers::bytes(n_other, n_search, wr, graft));
  stats->seconds_per_launch = launch_seconds(options.device);
  const layout lay = resident_layout(options.device, options.thread_layout != 0);

  stream s = solve_stream(in);
  pooled_allocations pool(s, options.device);  // every buffer of the solve, freed on s
  stats->seconds_setup += seconds_since(setup_start);
  device_graph d;
  if (!prepare_graph(in, start, sides, d, s, stats)) {
    download_matching(d, in, s, stats);
    return status::ok;
  }

  phase_clock clock(s);
  ap_buffers buf(n_other, n_search, wr, graft);
  ap::ap_args args = make_args(searched(d, rows), buf, wr, apfb, graft, s);
  std::unique_ptr<ap_graph> graph =
      kept_ap_graphs::take(graph_shape(wr, graft, args, lay, options.device), args);
  stats->seconds_setup += clock.mark();
  graph->launch(s);
  ap::ap_control ctl{};
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&ctl, buf.ctl.data(), sizeof(ctl), cudaMemcpyDeviceToHost, s));
  stats->seconds_solve += clock.mark();
  kept_ap_graphs::give_back(std::move(graph));  // its launch is over
  download_matching(d, in, s, stats);
  record_search(ctl, graft, stats);
  if (ctl.error != 0) {
    return fail(status::cuda_error, std::string("gpu-ap") + (apfb ? "fb" : "sb") +
                                        ": safety cap on phases reached (internal error)");
  }
  return status::ok;
}

}  // namespace

status gpu_ap(const bipartite_view& g, gpu_start start, bool apfb, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept {
  return cuda_guarded(
      [&] { return run_ap(host_input(g, col4row, row4col), start, apfb, options, stats); });
}

status gpu_ap_raw(const raw_csr& g, gpu_start start, bool apfb, const matching_options& options,
                  std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) noexcept {
  return cuda_guarded([&] {
    use_device_with_memory(options.device, 0);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return run_ap(raw_input(g, col4row, row4col, s), start, apfb, options, stats);
  });
}

}  // namespace matchflow::cuda

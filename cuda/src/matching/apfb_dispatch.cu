// APFB / APsB host driver: maximum cardinality bipartite matching by GPU
// augmenting paths (paper 004, Algorithm 1; kernels in apfb_kernels.cuh).
//
// Algorithm 1 becomes one CUDA graph launched once per solve:
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
// Memory: CSC offsets and ids, rmatch, cmatch, predecessor, bfs_array,
// mate0, two column queues, the end-row list and (GPUBFS-WR) root; the CSR
// orientation is not used.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/launch.cuh"
#include "matchflow/cuda/entry.hpp"
#include "matching/apfb_kernels.cuh"

namespace matchflow::cuda {
namespace {

using clock_type = std::chrono::steady_clock;

/// Direction-optimizing BFS: a level runs bottom-up when its frontier times
/// this ratio reaches the number of unreached columns (0 = never).
constexpr int default_bottom_up_ratio = 2;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Owns a graph and its executable form.
class graph_owner {
 public:
  graph_owner() { MATCHFLOW_CUDA_TRY(cudaGraphCreate(&graph_, 0)); }
  ~graph_owner() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  graph_owner(const graph_owner&) = delete;
  graph_owner& operator=(const graph_owner&) = delete;
  cudaGraph_t graph() const { return graph_; }
  void instantiate() { MATCHFLOW_CUDA_TRY(cudaGraphInstantiate(&exec_, graph_, 0)); }
  void launch(cudaStream_t s) { MATCHFLOW_CUDA_TRY(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

/// Grid sizes of the two thread layouts.
struct layout {
  bool mt = false;
  std::int64_t resident_threads = 0;  ///< SMs x max threads per SM
  unsigned int blocks(std::int64_t n) const {
    if (!mt) return 256;  // CT: the paper's fixed 256 x 256 grid
    return blocks_for(std::max<std::int64_t>(1, std::min(n, resident_threads)));
  }
};

/// Appends a kernel node taking `args` to `g` after `dep` (if any).
cudaGraphNode_t add_kernel(cudaGraph_t g, cudaGraphNode_t dep, void* func, unsigned int blocks,
                           ap::ap_args* args) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(blocks > 0 ? blocks : 1);
  p.blockDim = dim3(blocks > 0 ? threads_per_block : 1);  // 0 blocks: one thread
  p.sharedMemBytes = 0;
  void* params[] = {args};
  p.kernelParams = params;
  cudaGraphNode_t node = nullptr;
  MATCHFLOW_CUDA_TRY(cudaGraphAddKernelNode(&node, g, dep ? &dep : nullptr, dep ? 1 : 0, &p));
  return node;
}

/// Appends a `while` node on `handle` after `dep`; returns its body graph.
cudaGraph_t add_while(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphConditionalHandle handle,
                      cudaGraphNode_t* node) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = handle;
  p.conditional.type = cudaGraphCondTypeWhile;
  p.conditional.size = 1;
  MATCHFLOW_CUDA_TRY(cudaGraphAddNode(node, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, &p));
  return p.conditional.phGraph_out[0];
}

template <bool WR>
void build_graph(graph_owner& owner, ap::ap_args& args, const layout& lay) {
  cudaGraph_t top = owner.graph();
  MATCHFLOW_CUDA_TRY(cudaGraphConditionalHandleCreate(&args.phase_loop, top, 1,
                                                      cudaGraphCondAssignDefault));
  // Kernel parameters are copied when a node is added, so both handles must
  // be in `args` before the first kernel node: create the phase loop's
  // body first, then the level loop's handle in it.
  cudaGraphNode_t phase_node = nullptr;
  cudaGraph_t phase_body = add_while(top, nullptr, args.phase_loop, &phase_node);
  MATCHFLOW_CUDA_TRY(cudaGraphConditionalHandleCreate(&args.level_loop, phase_body, 1,
                                                      cudaGraphCondAssignDefault));
  const unsigned int col_blocks = lay.blocks(args.n_cols);
  const unsigned int row_blocks = lay.blocks(args.n_rows);
  cudaGraphNode_t first = add_kernel(top, nullptr,
                                     reinterpret_cast<void*>(&ap::first_init_kernel<WR>),
                                     col_blocks, &args);
  MATCHFLOW_CUDA_TRY(cudaGraphAddDependencies(top, &first, &phase_node, nullptr, 1));
  cudaGraphNode_t begin = add_kernel(phase_body, nullptr,
                                     reinterpret_cast<void*>(&ap::phase_begin_kernel), 0, &args);
  cudaGraphNode_t level_node = nullptr;
  cudaGraph_t level_body = add_while(phase_body, begin, args.level_loop, &level_node);
  add_kernel(level_body, nullptr, reinterpret_cast<void*>(&ap::bfs_kernel<WR>), col_blocks,
             &args);
  void* alternate = (WR && args.shortest)
                        ? reinterpret_cast<void*>(&ap::alternate_kernel<true>)
                        : reinterpret_cast<void*>(&ap::alternate_kernel<false>);
  cudaGraphNode_t alt = add_kernel(phase_body, level_node, alternate, row_blocks, &args);
  add_kernel(phase_body, alt, reinterpret_cast<void*>(&ap::fix_reset_kernel<WR>), col_blocks,
             &args);
  owner.instantiate();
}

std::int64_t cardinality(const vertex_t* col4row, vertex_t n_rows) {
  std::int64_t k = 0;
  for (vertex_t r = 0; r < n_rows; ++r) k += col4row[r] >= 0;
  return k;
}

}  // namespace

status gpu_ap(const bipartite_view& g, bool apfb, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept {
  return cuda_guarded([&]() -> status {
    const vertex_t nr = g.n_rows(), nc = g.n_cols();
    if (nr == 0 || nc == 0) return status::ok;
    const bool wr = options.bfs_kernel != 0;
    const std::size_t nnz = static_cast<std::size_t>(g.cols.nnz());
    // TUNING (temporary): bottom-up switch ratio from the environment.
    int bottom_up_ratio = default_bottom_up_ratio;
    if (const char* env = std::getenv("MATCHFLOW_AP_BOTTOM_UP")) bottom_up_ratio = std::atoi(env);
    const bool bottom_up = bottom_up_ratio > 0;
    // CSC (+ CSR for bottom-up levels), then per column bfs_array, cmatch,
    // mate0, two queues (+ root), per row rmatch, predecessor, end rows.
    const std::size_t n_rows = static_cast<std::size_t>(nr), n_cols = static_cast<std::size_t>(nc);
    const std::size_t csc_bytes = (n_cols + 1) * sizeof(offset_t) + nnz * sizeof(vertex_t);
    const std::size_t csr_bytes = bottom_up ? (n_rows + 1) * sizeof(offset_t) + nnz * sizeof(vertex_t) : 0;
    const std::size_t bytes = csc_bytes + csr_bytes + (wr ? 6 : 5) * n_cols * sizeof(vertex_t) +
                              3 * n_rows * sizeof(vertex_t) + sizeof(ap::ap_control);
    use_device_with_memory(options.device, bytes);

    int sms = 0, threads_per_sm = 0;
    MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options.device));
    MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&threads_per_sm,
                                              cudaDevAttrMaxThreadsPerMultiProcessor,
                                              options.device));
    layout lay;
    lay.mt = options.thread_layout != 0;
    lay.resident_threads = static_cast<std::int64_t>(sms) * threads_per_sm;

    stream s;
    device_buffer<offset_t> d_cxadj(static_cast<std::size_t>(nc) + 1);
    device_buffer<vertex_t> d_cadj(nnz);
    device_buffer<offset_t> d_rxadj(bottom_up ? static_cast<std::size_t>(nr) + 1 : 0);
    device_buffer<vertex_t> d_radj(bottom_up ? nnz : 0);
    device_buffer<vertex_t> d_rmatch(nr), d_cmatch(nc), d_pred(nr), d_bfs(nc), d_mate0(nc);
    device_buffer<vertex_t> d_queue0(nc), d_queue1(nc), d_ends(nr);
    device_buffer<vertex_t> d_root(wr ? nc : 0);
    device_buffer<ap::ap_control> d_ctl(1);

    const auto t_in = clock_type::now();
    d_cxadj.copy_from_host(g.cols.ptr, static_cast<std::size_t>(nc) + 1, s);
    d_cadj.copy_from_host(g.cols.adj, nnz, s);
    if (bottom_up) {
      d_rxadj.copy_from_host(g.rows.ptr, static_cast<std::size_t>(nr) + 1, s);
      d_radj.copy_from_host(g.rows.adj, nnz, s);
    }
    d_rmatch.copy_from_host(col4row, nr, s);
    d_cmatch.copy_from_host(row4col, nc, s);
    s.synchronize();
    stats->seconds_transfer += seconds_since(t_in);
    const std::int64_t before = cardinality(col4row, nr);

    d_ctl.fill_bytes(0, s);
    d_pred.fill_bytes(0xff, s);  // -1: no predecessor yet

    ap::ap_args args{};
    args.n_rows = nr;
    args.n_cols = nc;
    args.cxadj = d_cxadj.data();
    args.cadj = d_cadj.data();
    args.rxadj = d_rxadj.data();
    args.radj = d_radj.data();
    args.bottom_up_ratio = bottom_up_ratio;
    args.rmatch = d_rmatch.data();
    args.cmatch = d_cmatch.data();
    args.predecessor = d_pred.data();
    args.bfs_array = d_bfs.data();
    args.root = d_root.data();
    args.mate0 = d_mate0.data();
    args.queue[0] = d_queue0.data();
    args.queue[1] = d_queue1.data();
    args.ends = d_ends.data();
    args.ctl = d_ctl.data();
    args.max_phases = static_cast<long long>(std::min(nr, nc)) + 2;
    args.shortest = !apfb;

    graph_owner graph;
    if (wr) {
      build_graph<true>(graph, args, lay);
    } else {
      build_graph<false>(graph, args, lay);
    }
    const auto t_run = clock_type::now();
    graph.launch(s);
    ap::ap_control ctl{};
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&ctl, d_ctl.data(), sizeof(ctl), cudaMemcpyDeviceToHost, s));
    s.synchronize();
    if (std::getenv("MATCHFLOW_AP_DEBUG")) {  // TUNING (temporary)
      std::fprintf(stderr, "gpu_ap graph %.5f s, phases %lld levels %lld bottom-up %lld\n",
                   seconds_since(t_run), ctl.phases, ctl.bfs_levels, ctl.bottom_up_levels);
    }

    const auto t_out = clock_type::now();
    d_rmatch.copy_to_host(col4row, nr, s);
    d_cmatch.copy_to_host(row4col, nc, s);
    s.synchronize();
    stats->seconds_transfer += seconds_since(t_out);

    stats->iterations += ctl.phases;
    stats->bfs_levels += ctl.bfs_levels;
    // Kernel executions inside the graph: the first INITBFSARRAY, per phase
    // phase_begin, ALTERNATE and FIXMATCHING+INITBFSARRAY, one BFS per level.
    stats->kernel_launches += 1 + 3 * ctl.phases + ctl.bfs_levels;
    stats->augmentations += cardinality(col4row, nr) - before;
    if (ctl.error != 0) {
      return fail(status::cuda_error,
                  std::string("gpu-ap") + (apfb ? "fb" : "sb") +
                      ": safety cap on phases reached (internal error)");
    }
    return status::ok;
  });
}

}  // namespace matchflow::cuda

// G-PR host driver: GPU push-relabel maximum cardinality bipartite matching.
//
// Paper 000 (Deveci, Kaya, Ucar, Catalyurek, ICPP 2013), section III:
// Algorithm 7 (main loop with active-column lists and shrinking), Algorithm 4
// (G-GR, level-synchronous BFS), GETITERGR = the adaptive strategy of
// section III-A (next global relabel after k * maxLevel iterations, k = 0.7
// by default, options.relabel_k otherwise).  Device code: gpr_kernels.cuh,
// which also lists the terms and the deviations in the kernels.
//
// Host-side deviations (all for speed or robustness; none changes what a
// kernel computes):
//  * Few host reads.  Algorithm 7 reads actExists after every iteration and
//    Algorithm 4 reads uAdded after every BFS level.  Here the host enqueues
//    BFS levels in batches (a level whose predecessor added nothing returns
//    at once, see gr_level_kernel) and reads the flags once per batch; it
//    reads actExists only every `act_check_period` iterations and at the
//    next global relabel.  Extra launches after termination do nothing.
//  * Shrink.  After every global relabel the list is fixed (INIT) and, when
//    |A_c| >= 512 as in the paper, compacted with cub::DeviceSelect::If.
//    The very first list (Algorithm 7 starts with all unmatched columns) is
//    built with the same compaction over all column ids, keeping only the
//    columns the first BFS reached.
//  * Termination check.  When no active column is left, the result is
//    certified before returning: a fresh global relabel (exact BFS from the
//    unmatched rows over the current matching) must reach no unmatched
//    column (Berge: then no augmenting path exists).  If it does reach one
//    (it never should), the list is rebuilt from all columns and the loop
//    goes on; so a race the analysis missed can cost time, never the answer.
//  * BFS form.  By default a level processes a queue of its frontier rows
//    (gr_frontier_kernel, atomicCAS/atomicAdd) instead of testing every row
//    (gr_level_kernel, the paper's atomic-free G-GR-KRNL): a level then
//    costs in proportion to its frontier.  Same labels either way.
//  * Short lists.  When |A_c| <= 1024 the iterations up to the next global
//    relabel run in one single-block launch (pr_tail_kernel: the same INIT
//    and PUSH code, with __syncthreads() for the kernel boundaries).
//    Towards the end of a solve only a few hundred columns stay active for
//    hundreds of iterations, and launch latency dominated them.
//  * Not done: running the iterations of longer lists in one cooperative
//    launch (INIT and PUSH separated by grid.sync()): the launches overlap
//    with the previous kernel's work, and the two grid barriers per
//    iteration cost about as much (NOTES.md, "The GPU matching's start and loop").
//  * The paper's structure stays reachable: matching_options::paper_structure
//    (Python: variant="paper") selects the scan BFS and one INIT + PUSH
//    launch pair per iteration, for reproducible comparisons.
//  * Labels are int32; infinity = min(m + n, INT32_MAX - 4).  Exact distances
//    are at most 2 min(m, n) + 1 < infinity, and a push raises a label to at
//    most infinity + 1, so nothing overflows.
//
// Graph upload, column orientation and initial matching: graph_upload.cu
// (shared with APFB/APsB; the CSC and the greedy start are built on the
// device).  Stats: seconds_solve is the device solve alone (after the
// initial matching, up to FIXMATCHING), synchronized at both ends.
//
// Memory: both orientations of the graph, mates, labels, iA, the two lists,
// the two BFS queues and CUB scratch; computed up front (lists at their
// largest, n) and checked by use_device_with_memory before anything is
// allocated.
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cub/device/device_select.cuh>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/launch.cuh"
#include "common/pinned.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matching/gpr_kernels.cuh"
#include "matching/graph_upload.cuh"

namespace matchflow::cuda {
namespace {

using gpr::control;
using gpr::label_t;
using clock_type = std::chrono::steady_clock;

constexpr double default_relabel_k = 0.7;  // best k of paper 000, Fig. 1
constexpr int shrink_threshold = 512;      // Algorithm 7, line 11
constexpr int act_check_period = 64;       // iterations between actExists reads
constexpr int level_batch_min = 4;         // BFS levels enqueued per flag read (at least)

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Everything one solve owns on the device besides the graph and mates
/// (device_graph, graph_upload.cuh).
struct gpr_state {
  vertex_t m, n;
  label_t infinity;
  device_buffer<label_t> psi_row, psi_col;
  device_buffer<int> ia;
  device_buffer<vertex_t> list_a, list_b;    // A_c and A_p (roles swap on compaction)
  device_buffer<vertex_t> queue_a, queue_b;  // frontier BFS row queues (m each)
  device_buffer<control> ctl;
  device_buffer<unsigned char> cub_temp;
};

class gpr_solver {
 public:
  gpr_solver(const matching_input& in, gpu_start start, const matching_options& options,
             matching_stats* stats)
      : in_(in), start_(start), options_(options), stats_(stats), stream_(solve_stream(in)) {}

  void run();

 private:
  std::size_t cub_temp_bytes(std::int64_t capacity) const;
  bool allocate_and_upload();
  void solve();
  void global_relabel();
  void launch_bfs_level(int level);
  void select_all_columns();
  void shrink();
  void read_control();
  void launch_init();
  void launch_push();
  void run_iterations(int iterations);
  void run_tail(int iterations);
  void download();

  const matching_input& in_;
  gpu_start start_;
  const matching_options& options_;
  matching_stats* stats_;

  stream stream_;
  pinned_value<control> host_ctl_;
  device_graph d_;
  gpr_state s_{};
  vertex_t* a_c_ = nullptr;  // current list (A_c)
  vertex_t* a_p_ = nullptr;  // its companion (A_p)
  int count_ = 0;            // |A_c|: slots in use
  int loop_ = 0;             // Algorithm 7's loop counter (iA stamps)
  int max_level_ = 0;        // maxLevel of the last global relabel
  int last_levels_ = level_batch_min;
  bool paper_bfs_ = false;  // G-GR-KRNL as in the paper (scan all rows per level)
  bool use_tail_ = true;    // short lists: many iterations per launch
  unsigned frontier_blocks_ = 1;
};

std::size_t gpr_solver::cub_temp_bytes(std::int64_t capacity) const {
  std::size_t all_bytes = 0, list_bytes = 0;
  const gpr::active_column pred{nullptr, nullptr, nullptr, 0};
  MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(
      nullptr, all_bytes, thrust::counting_iterator<vertex_t>(0), static_cast<vertex_t*>(nullptr),
      static_cast<int*>(nullptr), in_.n, pred));
  MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(
      nullptr, list_bytes, static_cast<const vertex_t*>(nullptr), static_cast<vertex_t*>(nullptr),
      static_cast<int*>(nullptr), capacity, pred));
  std::size_t row_bytes = 0;
  MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(
      nullptr, row_bytes, thrust::counting_iterator<vertex_t>(0), static_cast<vertex_t*>(nullptr),
      static_cast<int*>(nullptr), in_.m, gpr::unmatched_row{nullptr}));
  return std::max<std::size_t>({all_bytes, list_bytes, row_bytes, 1});
}

/// Uploads the graph and the initial matching (graph_upload.cu), then, when
/// that matching is not already maximum, allocates the solve's state.
/// Returns false when there is nothing to solve.
bool gpr_solver::allocate_and_upload() {
  const auto setup_start = clock_type::now();
  const std::int64_t m = in_.m, n = in_.n;
  use_device_with_memory(options_.device, 0);  // selects the device for the CUB query
  stats_->seconds_per_launch = launch_seconds(options_.device);
  // Lists hold the unmatched columns: at most n before the start is known.
  const std::size_t temp = cub_temp_bytes(std::max<std::int64_t>(n, 1));
  const std::size_t bytes = graph_bytes(in_, start_, graph_sides::both) +
                            sizeof(label_t) * std::size_t(m + n) +  // labels
                            sizeof(int) * std::size_t(n) +          // iA
                            sizeof(vertex_t) * std::size_t(2 * n) + sizeof(control) +
                            (paper_bfs_ ? 0 : sizeof(vertex_t) * std::size_t(2 * m)) + temp;
  use_device_with_memory(options_.device, bytes);
  stats_->seconds_setup += seconds_since(setup_start);

  if (!prepare_graph(in_, start_, graph_sides::both, d_, stream_, stats_)) {
    return false;
  }

  const auto alloc_start = clock_type::now();
  const std::int64_t capacity = std::max<std::int64_t>(n - d_.init_cardinality, 1);
  s_.m = in_.m;
  s_.n = in_.n;
  s_.infinity = label_t(std::min<std::int64_t>(m + n, INT32_MAX - 4));
  s_.psi_row = device_buffer<label_t>(std::size_t(m));
  s_.psi_col = device_buffer<label_t>(std::size_t(n));
  s_.ia = device_buffer<int>(std::size_t(n));
  s_.list_a = device_buffer<vertex_t>(std::size_t(capacity));
  s_.list_b = device_buffer<vertex_t>(std::size_t(capacity));
  if (!paper_bfs_) {
    s_.queue_a = device_buffer<vertex_t>(std::size_t(m));
    s_.queue_b = device_buffer<vertex_t>(std::size_t(m));
    int sms = 1;
    MATCHFLOW_CUDA_TRY(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options_.device));
    frontier_blocks_ = std::min<unsigned>(blocks_for(m), unsigned(sms) * 8);
  }
  s_.ctl = device_buffer<control>(1);
  s_.cub_temp = device_buffer<unsigned char>(cub_temp_bytes(capacity));
  a_c_ = s_.list_a.data();
  a_p_ = s_.list_b.data();
  s_.ia.fill_bytes(0xff, stream_);  // iA = -1: no column stamped yet
  s_.ctl.fill_bytes(0, stream_);
  stream_.synchronize();
  stats_->seconds_setup += seconds_since(alloc_start);
  return true;
}

void gpr_solver::read_control() { host_ctl_.read_back(s_.ctl.data(), stream_); }

/// One BFS level (G-GR-KRNL) of either form.
void gpr_solver::launch_bfs_level(int level) {
  if (paper_bfs_) {
    gpr::gr_level_kernel<<<blocks_for(s_.m), threads_per_block, 0, stream_>>>(
        s_.m, d_.row_ptr.data(), d_.row_adj.data(), d_.col4row.data(), d_.row4col.data(),
        s_.psi_row.data(), s_.psi_col.data(), s_.infinity, level, s_.ctl.data());
  } else {
    const bool even = (level / 2) % 2 == 0;
    gpr::gr_frontier_kernel<<<frontier_blocks_, threads_per_block, 0, stream_>>>(
        d_.row_ptr.data(), d_.row_adj.data(), d_.col4row.data(), d_.row4col.data(),
        s_.psi_row.data(), s_.psi_col.data(), s_.infinity, level,
        even ? s_.queue_a.data() : s_.queue_b.data(), even ? s_.queue_b.data() : s_.queue_a.data(),
        s_.ctl.data());
  }
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
}

/// G-GR (Algorithm 4): INITRELABEL, then G-GR-KRNL level by level, enqueued
/// in batches; leaves maxLevel in max_level_ (and the control block read).
void gpr_solver::global_relabel() {
  const std::int64_t width = std::max<std::int64_t>(s_.m, s_.n);
  gpr::init_relabel_kernel<<<blocks_for(width), threads_per_block, 0, stream_>>>(
      s_.m, s_.n, d_.col4row.data(), s_.psi_row.data(), s_.psi_col.data(), s_.infinity,
      s_.ctl.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
  if (!paper_bfs_) {  // level-0 queue: the unmatched rows
    std::size_t temp = s_.cub_temp.size();
    MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(
        s_.cub_temp.data(), temp, thrust::counting_iterator<vertex_t>(0), s_.queue_a.data(),
        &s_.ctl.data()->queue_size[0], s_.m, gpr::unmatched_row{d_.col4row.data()}, stream_));
    stats_->kernel_launches += 2;
  }
  int level = 0;
  int batch = std::max(level_batch_min, last_levels_ + 1);
  for (;;) {
    for (int b = 0; b < batch; ++b, level += 2) launch_bfs_level(level);
    read_control();
    // Done when the level that would run next has nothing to do.
    const control& c = *host_ctl_.get();
    const bool more = paper_bfs_ ? c.level_added[((level - 2) / 2) % gpr::flag_ring] != 0
                                 : c.queue_size[(level / 2) % 3] != 0;
    if (!more) break;
    batch = 2 * level_batch_min;
  }
  max_level_ = host_ctl_.get()->max_level;
  last_levels_ = max_level_ / 2;
  stats_->bfs_levels += last_levels_;
  ++stats_->global_relabels;
}

/// A_c = every column that is active and reached by the last BFS (the
/// initial list of Algorithm 7, and the re-check before returning).
void gpr_solver::select_all_columns() {
  std::size_t temp = s_.cub_temp.size();
  const gpr::active_column pred{d_.row4col.data(), d_.col4row.data(), s_.psi_col.data(),
                                s_.infinity};
  MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(s_.cub_temp.data(), temp,
                                           thrust::counting_iterator<vertex_t>(0), a_c_,
                                           &s_.ctl.data()->num_active, s_.n, pred, stream_));
  stats_->kernel_launches += 2;
  read_control();
  count_ = host_ctl_.get()->num_active;
}

/// G-PR-SHRKRNL: fix the list (INIT), then compact it when |A_c| >= 512.
void gpr_solver::shrink() {
  launch_init();
  if (count_ < shrink_threshold) {  // too short to gain from compaction
    read_control();
    if (host_ctl_.get()->act_exists[loop_ & 1] == 0) count_ = 0;
    return;
  }
  std::size_t temp = s_.cub_temp.size();
  const gpr::active_in_list pred{d_.row4col.data(), d_.col4row.data(), s_.psi_col.data(),
                                 s_.infinity};
  MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(s_.cub_temp.data(), temp, a_c_, a_p_,
                                           &s_.ctl.data()->num_active, count_, pred, stream_));
  stats_->kernel_launches += 2;
  std::swap(a_c_, a_p_);
  read_control();
  count_ = host_ctl_.get()->num_active;
}

void gpr_solver::launch_init() {
  gpr::pr_init_kernel<<<blocks_for(count_), threads_per_block, 0, stream_>>>(
      count_, a_c_, a_p_, d_.col4row.data(), d_.row4col.data(), s_.ia.data(), loop_, s_.ctl.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
}

void gpr_solver::launch_push() {
  gpr::pr_push_kernel<<<blocks_for(count_), threads_per_block, 0, stream_>>>(
      count_, a_c_, a_p_, d_.col_ptr.data(), d_.col_adj.data(), d_.col4row.data(),
      d_.row4col.data(), s_.psi_row.data(), s_.psi_col.data(), s_.ia.data(), loop_, s_.infinity);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
}

/// Up to `iterations` iterations of lines 16-20, one launch pair each;
/// actExists is read every act_check_period iterations.
void gpr_solver::run_iterations(int iterations) {
  for (int it = 0; it < iterations; ++it) {
    launch_init();  // lines 16-17 (idempotent right after a shrink)
    launch_push();  // lines 18-20
    ++loop_;
    ++stats_->iterations;
    if ((it + 1) % act_check_period == 0 && it + 1 < iterations) {
      read_control();
      if (host_ctl_.get()->act_exists[(loop_ - 1) & 1] == 0) return;
    }
  }
}

/// `iterations` iterations of lines 16-20 in one launch (short lists).
void gpr_solver::run_tail(int iterations) {
  gpr::pr_tail_kernel<<<1, gpr::tail_block, 0, stream_>>>(
      count_, a_c_, a_p_, d_.col_ptr.data(), d_.col_adj.data(), d_.col4row.data(),
      d_.row4col.data(), s_.psi_row.data(), s_.psi_col.data(), s_.ia.data(), loop_, iterations,
      s_.infinity, s_.ctl.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
  loop_ += iterations;  // stamps stay unique even if the kernel stopped early
  read_control();
  stats_->iterations += host_ctl_.get()->tail_iterations;
}

/// FIXMATCHING (line 23); the last kernel of the solve.
void gpr_solver::download() {
  gpr::fix_matching_kernel<<<blocks_for(s_.n), threads_per_block, 0, stream_>>>(
      s_.n, d_.col4row.data(), d_.row4col.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++stats_->kernel_launches;
}

/// Algorithm 7.  `list_valid` false means A_c must be rebuilt from all
/// columns after a fresh global relabel; that rebuild finding nothing is the
/// (certified) end.
void gpr_solver::run() {
  if (options_.paper_structure) {  // see the header
    paper_bfs_ = true;
    use_tail_ = false;
  }
  pooled_allocations pool(stream_, options_.device);  // every buffer of the solve
  if (allocate_and_upload()) {
    phase_clock clock(stream_);
    solve();
    stats_->seconds_solve += clock.mark();
  }
  download_matching(d_, in_, stream_, stats_);
}

void gpr_solver::solve() {
  const double k = options_.relabel_k > 0 ? options_.relabel_k : default_relabel_k;
  // Guard against a runaway loop (a bug must not hang the caller): far above
  // anything push-relabel needs, since every useful iteration raises a label.
  const std::int64_t loop_limit =
      std::min<std::int64_t>(INT32_MAX - 2, 64 * (std::int64_t(s_.m) + s_.n) + 1000000);
  bool list_valid = false;
  bool need_relabel = true;
  for (;;) {
    if (need_relabel) {
      global_relabel();  // Algorithm 7, lines 6-9
      // The control block read by the relabel also holds actExists of the
      // last iteration (no kernel since has touched it): an empty list goes
      // to the rebuild, which certifies the end.
      if (loop_ > 0 && host_ctl_.get()->act_exists[(loop_ - 1) & 1] == 0) list_valid = false;
    }
    if (!list_valid) {
      select_all_columns();
      if (count_ == 0) break;  // exact labels reach no unmatched column: maximum
    } else {
      shrink();           // lines 11-14
      if (count_ == 0) {  // labels are fresh: re-check over all columns
        list_valid = false;
        need_relabel = false;
        continue;
      }
    }
    list_valid = true;
    need_relabel = true;
    // GETITERGR (section III-A): the next global relabel after k * maxLevel
    // iterations.
    const int period = std::max(1, int(std::ceil(k * double(max_level_))));
    if (count_ <= gpr::tail_block && use_tail_) {
      run_tail(period);
    } else {
      run_iterations(period);
    }
    if (loop_ > loop_limit) {
      throw cuda_failure(cudaErrorUnknown, "gpu-pr did not converge (iteration limit)");
    }
  }
  download();  // FIXMATCHING (line 23)
}

/// Both forms of the entry point: a graph with no rows or no columns has
/// the empty matching (a raw CSR is still checked).
status run_gpr(const matching_input& in, gpu_start start, const matching_options& options,
               matching_stats* stats) {
  if (in.m == 0 || in.n == 0) {
    if (start != gpu_start::host_mates) empty_matching(in);
    stats->cardinality = 0;
    return status::ok;
  }
  gpr_solver solver(in, start, options, stats);
  solver.run();
  return status::ok;
}

}  // namespace

status gpu_pr(const bipartite_view& g, gpu_start start, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept {
  return cuda_guarded(
      [&] { return run_gpr(host_input(g, col4row, row4col), start, options, stats); });
}

status gpu_pr_raw(const raw_csr& g, gpu_start start, const matching_options& options,
                  std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) noexcept {
  return cuda_guarded([&] {
    use_device_with_memory(options.device, 0);
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return run_gpr(raw_input(g, col4row, row4col, s), start, options, stats);
  });
}

}  // namespace matchflow::cuda

// ECL-MaxFlow host driver: GPU push-relabel maximum flow.
//
// Paper 002 (VanAusdal, Burtscher), section IV: Algorithm 4 (two phases of
// push-relabel cycles with a global relabel every GR_FREQ cycles, GR_FREQ =
// max(100, |V|^2 / (1000 |E|))) and Algorithm 6 (the global relabel as a
// level-synchronous BFS).  Device code, terms and the concurrency contract:
// push_relabel_kernels.cuh.
//
// Setup.  The input CSR is uploaded once and is the forward graph; the
// reverse CSR (section III-B) is built on the device: in-degree histogram,
// cub::DeviceScan on the solve's stream, then an atomic scatter.
//
// Host-side deviations (speed or robustness; none changes what a kernel
// computes):
//  * Certified phase ends.  A phase ends only when a fresh exact global
//    relabel followed by a scan of all vertices finds no active vertex
//    (collect_active_kernel); otherwise the cycles go on.  Races that the
//    lock-free analysis misses can then cost time, never the answer.  In
//    phase 1 that last BFS is also the reverse residual BFS from t that gives
//    the minimum cut (source_side = not reached), and if a BFS ever reaches
//    s, s's residual arcs are saturated again before the cycles resume.
//  * Few host round trips (options.paper_variant = false, the default).
//    The paper reads the worklist size after every cycle and every BFS level
//    to size the next launch.  Here kernels take the size from device
//    memory, so the loops move to the device:
//    - a global relabel is one cooperative launch (relabel_persistent_kernel:
//      every level, grid.sync() between levels) and one read;
//    - cycles on a list of more than 64 vertices run in one cooperative
//      launch (push_relabel_persistent_kernel) until the next global relabel
//      is due or the list gets short; lists of at most 64 vertices run their
//      cycles in one single-block launch (push_relabel_tail_kernel: 32
//      warps, and __syncthreads() is cheaper than grid.sync()).  Late in a
//      phase a few vertices stay active for many cycles.  (With 2048 there,
//      a fit over a relabel-frequency sweep on the 1M grid gave about 60 us
//      per cycle: up to 64 vertices per warp, one after another.)  The
//      cooperative kernel hands over only below 32 vertices, so the two do
//      not alternate every cycle near the threshold.  On a dense graph
//      (spans of default_hub_arcs on average) every list stays on the grid.
//      One read of the control block per launch.
//    The persistent grids hold as many blocks as can be co-resident (at most
//    4 of 512 threads per SM: fewer blocks make grid.sync() cheaper), and
//    each block reads the list size once per level / cycle.  Without
//    cooperative launch support the host enqueues cycles and levels in
//    growing batches (4, 8, ... 64) on a fixed grid and reads the sizes once
//    per batch; a launch past the end of the list only clears a counter.
//    Nothing is allocated after setup.
//  * options.paper_variant = true keeps the paper's loop: one launch of
//    exactly one warp per worklist entry per cycle and per BFS level, the
//    size read back after each.
//  * options.relabel_freq > 0 replaces the paper's factor 1/1000 in GR_FREQ
//    (the floor of 100 cycles stays).
//  * Tuned variant: after GR_FREQ cycles the global relabel is skipped
//    unless the cycles lifted at least n / 8 labels since the last one, or
//    lifted at least once every two cycles for 4 times as long as the last
//    relabel took (relabel_due()).
//  * Tuned variant: GR_FREQ is at most 256 cycles (tuned_freq_cap()).
//  * Phase 2 is skipped when !options.return_flow: value and cut are known
//    after phase 1.
//
// With the result's matrix buffers given, SciPy's flow matrix is built on the
// device after phase 2 (flow_matrix.cu) and copied back instead of the arc
// flows.
//
// Stats: iterations = cycles that found a non-empty worklist; pushes and
// relabels (lifts) summed on the device; kernel_launches counts every launch
// including CUB's.  seconds_phase1 includes the cut; transfers are timed
// apart (phase_clock synchronizes at each mark).
//
// Memory (checked by use_device_with_memory before anything is allocated):
// forward CSR + caps + flow (20 bytes per arc), reverse CSR (12 per arc),
// 2 offsets arrays, excess, labels, timestamps, two lists, the cut, CUB
// scratch.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cub/device/device_scan.cuh>
#include <tuple>
#include <utility>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "common/phase_clock.cuh"
#include "common/pinned.cuh"
#include "common/prefault.cuh"
#include "common/reverse_csr.cuh"
#include "common/widen.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/detail/environment.hpp"
#include "matchflow/timing.hpp"
#include "maxflow/flow_matrix.cuh"
#include "maxflow/push_relabel_kernels.cuh"

namespace matchflow::cuda {
namespace {

using ecl::control;
using ecl::flow_t;
using ecl::label_t;

constexpr double paper_freq_factor = 1.0 / 1000.0;  // Algorithm 4, line 1
constexpr int min_relabel_freq = 100;               // Algorithm 4, line 1
constexpr int first_batch = 4;                      // cycles / levels per size read
constexpr int max_batch = 64;
constexpr int blocks_per_sm = 8;        // 2048 resident threads per SM
constexpr int cycle_limit = 1 << 30;    // stamps stay positive int32
constexpr int lift_share = 8;           // tuned: see relabel_due()
constexpr double lift_stop_rent = 2;    // tuned: see lift_stop()
constexpr double relabel_rent = 4;      // tuned: see relabel_due()
constexpr int tuned_relabel_cap = 256;  // tuned: see tuned_freq_cap()
constexpr int no_freq_cap = 1 << 24;    // the paper variant: GR_FREQ as its formula gives
constexpr label_t phase2_infinity = INT32_MAX - 2;  // phase 2: "cannot reach s"

/// The tuned cycles' discharge_rules (discharge.cuh); the spans that take
/// each form can be moved so that tests reach every form on small graphs:
/// MATCHFLOW_GPU_PR_HUB_ARCS, MATCHFLOW_GPU_PR_SHORT_ARCS (0: none, at most
/// short_span_arcs).
ecl::discharge_rules tuned_rules() {
  using matchflow::detail::env_number;
  const double hubs = env_number("MATCHFLOW_GPU_PR_HUB_ARCS", ecl::default_hub_arcs, 1);
  const double short_arcs = env_number("MATCHFLOW_GPU_PR_SHORT_ARCS", ecl::short_span_arcs, 0);
  return ecl::discharge_rules{offset_t(std::min(hubs, double(ecl::no_hubs))),
                              offset_t(std::min(short_arcs, double(ecl::short_span_arcs)))};
}

/// The most cycles between relabel checks: the paper's GR_FREQ (|V|^2 /
/// 1000 |E|) grows with |V|, and on large images the last of those cycles
/// only move excess that can no longer reach t until the relabel lifts it out
/// (NOTES.md, "gpu-pr's constants").  MATCHFLOW_GPU_PR_RELABEL_CAP moves it.
int tuned_freq_cap() {
  const double cap = matchflow::detail::env_number("MATCHFLOW_GPU_PR_RELABEL_CAP",
                                                   tuned_relabel_cap, min_relabel_freq);
  return int(std::min(cap, double(no_freq_cap)));
}

/// How many times the last global relabel's time the cycles since may take,
/// while lifting, before the next relabel is due (relabel_due());
/// MATCHFLOW_GPU_PR_RELABEL_RENT moves it, 0 turns the rule off.
double relabel_rent_factor() {
  return matchflow::detail::env_number("MATCHFLOW_GPU_PR_RELABEL_RENT", relabel_rent, 0);
}

/// relabel_due()'s lift rule: a relabel once the cycles lifted n / this;
/// MATCHFLOW_GPU_PR_LIFT_SHARE moves it (A/B only: no share won on every
/// family, NOTES.md, "gpu-pr's constants").
double lift_share_factor() {
  return matchflow::detail::env_number("MATCHFLOW_GPU_PR_LIFT_SHARE", lift_share, 0.001);
}

/// How many times the last global relabel's time the cycles since must have
/// run before a multi-cycle kernel stops on the lift rule (lift_stop());
/// MATCHFLOW_GPU_PR_LIFT_STOP moves it (A/B only; 1e9: no such stop).
double lift_stop_factor() {
  return matchflow::detail::env_number("MATCHFLOW_GPU_PR_LIFT_STOP", lift_stop_rent, 0);
}

class ecl_solver {
 public:
  ecl_solver(const flow_network& net, const flow_options& options, flow_result* result,
             flow_stats* stats)
      : net_(net),
        options_(options),
        result_(result),
        stats_(stats),
        n_(net.n),
        m_(net.n_arcs()),
        paper_(options.paper_variant) {}

  void run();

 private:
  void allocate();
  void upload_network();
  void build_reverse();
  void solve_phase(bool phase1);
  void global_relabel(bool phase1);
  void relabel_levels(bool phase1, int bfs_id, int first, int* reached);
  int collect_active(bool phase1);
  void run_cycles(bool phase1, int limit, int count);
  bool relabel_due() const;
  unsigned long long lift_budget() const;
  ecl::lift_stop lift_stop() const;
  bool flow_matrix();
  std::vector<host_range> matrix_ranges() const;
  void launch_cycle(bool phase1, unsigned blocks);
  int launch_multi_cycle(bool phase1, int cycles, bool whole_grid);
  void setup_cooperative(int sms);
  void reset_lists();
  void read_control();
  int current_count() const { return host_ctl_.get()->count[ring_]; }
  ecl::list_view lists();
  void advance(int k);
  void count_launch(int k = 1) { stats_->kernel_launches += k; }
  label_t infinity(bool phase1) const { return phase1 ? label_t(n_) : phase2_infinity; }

  const flow_network& net_;
  const flow_options& options_;
  flow_result* result_;
  flow_stats* stats_;
  const std::int64_t n_, m_;
  const bool paper_;

  stream stream_;
  pinned_value<control> host_ctl_;
  device_buffer<offset_t> ptr_, rptr_, rarc_;
  device_buffer<vertex_t> heads_, rtail_;
  device_buffer<flow_t> caps_, flow_, excess_;
  device_buffer<label_t> h_;
  device_buffer<int> time_;
  device_buffer<vertex_t> list0_, list1_;
  device_buffer<unsigned long long> cursor_;
  device_buffer<std::uint8_t> side_;
  device_buffer<control> ctl_;
  device_buffer<unsigned char> scan_temp_;
  ecl::graph_view g_{};

  int parity_ = 0;  // which list buffer is the current worklist
  int ring_ = 0;    // which counter holds its size
  int cycle_ = 1;   // PR stamp of the next cycle (positive, increasing)
  int bfs_ = 0;     // global relabels so far (BFS id = -(bfs_ + 1))
  int relabel_freq_ = min_relabel_freq;
  unsigned long long lifts_at_relabel_ = 0;  // the control block's lift count at the last relabel
  int cycle_at_relabel_ = 1;                 // cycle_ then
  double relabel_seconds_ = 0;               // how long that relabel took
  matchflow::detail::clock_type::time_point relabelled_at_{};  // when it ended
  double rent_ = relabel_rent;
  double lift_share_ = lift_share;
  double lift_stop_rent_ = -1;  // < 0: the kernels do not stop on lifts (lift_stop())
  unsigned fixed_blocks_ = 1;
  ecl::discharge_rules rules_{ecl::no_hubs, 0};  // the paper's warp per vertex (discharge.cuh)
  bool cooperative_ = false;  // persistent kernels (tuned loop, when the device allows)
  bool tail_ = true;          // short lists to push_relabel_tail_kernel (see allocate())
  unsigned bfs_blocks_ = 1;   // their grids: as many blocks as can be co-resident
  unsigned pr_blocks_ = 1;
};

/// Launches `kernel` cooperatively (grid.sync() inside) with `args`
/// converted to its parameter types.
template <class... Params, class... Args>
void launch_cooperative(void (*kernel)(Params...), unsigned blocks, cudaStream_t s,
                        Args&&... args) {
  std::tuple<Params...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... v) {
        void* ptrs[] = {static_cast<void*>(&v)...};
        MATCHFLOW_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                                       dim3(blocks), dim3(ecl::persistent_block),
                                                       ptrs, 0, s));
      },
      values);
}

/// Grid of a persistent kernel: co-resident blocks of persistent_block
/// threads (at most 2048 threads per SM), and no more warps than vertices.
template <class Kernel>
unsigned resident_blocks(Kernel kernel, int sms, std::int64_t n) {
  int per_sm = 0;
  MATCHFLOW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, reinterpret_cast<const void*>(kernel), ecl::persistent_block, 0));
  const int cap = blocks_per_sm * threads_per_block / ecl::persistent_block;
  const std::int64_t blocks = std::int64_t(std::min(per_sm, cap)) * sms;
  return unsigned(std::max<std::int64_t>(
      1, std::min<std::int64_t>(blocks, blocks_for(n * warp_size, ecl::persistent_block))));
}

void ecl_solver::allocate() {
  use_device_with_memory(options_.device, 0);  // selects the device for the CUB query
  const std::size_t temp = reverse_csr_temp_bytes(n_);
  const std::size_t n = std::size_t(n_), m = std::size_t(m_);
  const std::size_t bytes =
      m * (sizeof(vertex_t) * 2 + sizeof(flow_t) * 2 + sizeof(offset_t)) +
      (n + 1) * (sizeof(offset_t) * 2 + sizeof(unsigned long long)) +
      n * (sizeof(flow_t) + sizeof(label_t) + sizeof(int) + 2 * sizeof(vertex_t) + 1) +
      sizeof(control) + temp;
  use_device_with_memory(options_.device, bytes);
  ptr_ = device_buffer<offset_t>(n + 1);
  rptr_ = device_buffer<offset_t>(n + 1);
  heads_ = device_buffer<vertex_t>(m);
  caps_ = device_buffer<flow_t>(m);
  flow_ = device_buffer<flow_t>(m);
  rtail_ = device_buffer<vertex_t>(m);
  rarc_ = device_buffer<offset_t>(m);
  cursor_ = device_buffer<unsigned long long>(n + 1);
  excess_ = device_buffer<flow_t>(n);
  h_ = device_buffer<label_t>(n);
  time_ = device_buffer<int>(n);
  list0_ = device_buffer<vertex_t>(n);
  list1_ = device_buffer<vertex_t>(n);
  side_ = device_buffer<std::uint8_t>(n);
  ctl_ = device_buffer<control>(1);
  scan_temp_ = device_buffer<unsigned char>(temp);
  int sms = 1;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options_.device));
  fixed_blocks_ = std::min<unsigned>(blocks_for(n_ * warp_size), unsigned(sms * blocks_per_sm));
  if (!paper_) {
    setup_cooperative(sms);
    rules_ = tuned_rules();
    // A dense graph's vertices are hubs, which one block would discharge one
    // after another: its short lists stay on the whole grid, a block each.
    tail_ = 2 * m_ < ecl::default_hub_arcs * n_;
    rent_ = relabel_rent_factor();
    lift_share_ = lift_share_factor();
    lift_stop_rent_ = lift_stop_factor();
  }
  const double factor = options_.relabel_freq > 0 ? options_.relabel_freq : paper_freq_factor;
  const double freq = factor * double(n_) * double(n_) / double(std::max<std::int64_t>(m_, 1));
  const int cap = paper_ ? no_freq_cap : tuned_freq_cap();  // the paper's GR_FREQ uncapped
  relabel_freq_ = int(std::clamp(freq, double(min_relabel_freq), double(cap)));
  g_ = ecl::graph_view{vertex_t(n_),   net_.source,  net_.sink,     ptr_.data(),  heads_.data(),
                       caps_.data(),   rptr_.data(), rtail_.data(), rarc_.data(), flow_.data(),
                       excess_.data(), h_.data(),    time_.data()};
}

void ecl_solver::setup_cooperative(int sms) {
  int supported = 0;
  MATCHFLOW_CUDA_TRY(
      cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, options_.device));
  if (!supported) return;
  bfs_blocks_ = resident_blocks(ecl::relabel_persistent_kernel, sms, n_);
  pr_blocks_ = resident_blocks(ecl::push_relabel_persistent_kernel, sms, n_);
  cooperative_ = true;
}

/// Reverse CSR: histogram of heads, exclusive scan, scatter (section III-B).
void ecl_solver::build_reverse() {
  count_launch(build_reverse_csr(n_, m_, ptr_.data(), heads_.data(), rptr_.data(), rtail_.data(),
                                 rarc_.data(), cursor_.data(), scan_temp_.data(), scan_temp_.size(),
                                 stream_));
  flow_.fill_bytes(0, stream_);
  excess_.fill_bytes(0, stream_);
  time_.fill_bytes(0, stream_);
  ctl_.fill_bytes(0, stream_);
}

void ecl_solver::read_control() { host_ctl_.read_back(ctl_.data(), stream_); }

/// All three counters to 0; the current list is list0 / count[0].
void ecl_solver::reset_lists() {
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(ctl_.data()->count, 0, sizeof(int) * 3, stream_));
  parity_ = 0;
  ring_ = 0;
}

ecl::list_view ecl_solver::lists() {
  return ecl::ring_view(list0_.data(), list1_.data(), ctl_.data()->count, parity_, ring_);
}

void ecl_solver::advance(int k) {
  parity_ = (parity_ + k) & 1;
  ring_ = (ring_ + k) % 3;
}

/// global_relabeling_loop (Algorithm 6): BFS from t (phase 1) or s (phase 2).
void ecl_solver::global_relabel(bool phase1) {
  reset_lists();
  const int bfs_id = -(++bfs_);
  int* reached = &ctl_.data()->source_reached;
  ecl::relabel_init_kernel<<<blocks_for(n_), threads_per_block, 0, stream_>>>(
      g_, phase1 ? net_.sink : net_.source, infinity(phase1), bfs_id, list0_.data(),
      &ctl_.data()->count[0], &ctl_.data()->count[1], reached);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  count_launch();
  int first = 1;  // the first level the loops below run
  if (!paper_) {  // level 1: the root's arcs over the whole grid
    ecl::relabel_root_kernel<<<fixed_blocks_, threads_per_block, 0, stream_>>>(g_, lists(), phase1,
                                                                               bfs_id, reached);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    count_launch();
    advance(1);
    ++stats_->bfs_levels;
    first = 2;
  }
  if (cooperative_) {  // all levels in one launch
    int* levels = &ctl_.data()->bfs_levels;
    launch_cooperative(ecl::relabel_persistent_kernel, bfs_blocks_, stream_, g_, list0_.data(),
                       list1_.data(), ctl_.data()->count, phase1, bfs_id, first, reached, levels);
    count_launch();
    read_control();
    stats_->bfs_levels += host_ctl_.get()->bfs_levels - (first - 1);
  } else {
    relabel_levels(phase1, bfs_id, first, reached);
  }
  ++stats_->global_relabels;
  if (phase1 && host_ctl_.get()->source_reached) {  // see the header
    ecl::saturate_source_kernel<<<1, threads_per_block, 0, stream_>>>(g_);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    count_launch();
  }
}

/// Algorithm 6, lines 12-17 from the host: one launch per level, the size
/// read after each (paper) or after batches of levels.
void ecl_solver::relabel_levels(bool phase1, int bfs_id, int first, int* reached) {
  int level = first - 1;
  int batch = paper_ ? 1 : first_batch;
  int size = 1;
  for (;;) {
    for (int b = 0; b < batch; ++b) {
      const unsigned blocks = paper_ ? blocks_for(std::int64_t(size) * warp_size) : fixed_blocks_;
      ecl::relabel_level_kernel<<<blocks, threads_per_block, 0, stream_>>>(
          g_, lists(), phase1, ++level, bfs_id, reached);
      ++stats_->bfs_levels;  // launches past the last level included
      MATCHFLOW_CUDA_CHECK_LAUNCH();
      count_launch();
      advance(1);
    }
    read_control();
    size = current_count();
    if (size == 0) break;
    if (!paper_) batch = std::min(2 * batch, max_batch);
  }
}

/// The worklist from scratch: every active vertex (after a global relabel).
int ecl_solver::collect_active(bool phase1) {
  reset_lists();
  ecl::collect_active_kernel<<<blocks_for(n_), threads_per_block, 0, stream_>>>(
      g_, infinity(phase1), list0_.data(), &ctl_.data()->count[0]);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  count_launch();
  read_control();
  return current_count();
}

void ecl_solver::launch_cycle(bool phase1, unsigned blocks) {
  ecl::push_relabel_kernel<<<blocks, threads_per_block, 0, stream_>>>(
      g_, lists(), phase1, infinity(phase1), cycle_++, rules_, ctl_.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  count_launch();
  advance(1);
}

/// Algorithm 4, lines 6-14 up to the next global relabel: at most `limit`
/// cycles, fewer when the worklist (of size `count` now) empties.
void ecl_solver::run_cycles(bool phase1, int limit, int count) {
  int done = 0;
  if (paper_) {
    while (done < limit && count > 0) {
      launch_cycle(phase1, blocks_for(std::int64_t(count) * warp_size));
      ++done;
      read_control();
      count = current_count();
    }
    return;
  }
  int batch = first_batch;
  while (done < limit && count > 0) {
    if (count <= ecl::tail_max_list || cooperative_) {
      const bool whole_grid = count > ecl::tail_max_list || (cooperative_ && !tail_);
      const int ran = launch_multi_cycle(phase1, limit - done, whole_grid);
      done += ran;
      count = current_count();
      const ecl::lift_stop stop = lift_stop();
      if (stop.budget == 0 && stop.after_ns == 0) return;  // what stopped the kernel
      if (ran > 0) continue;
    }
    const int k = std::min(batch, limit - done);  // no cooperative launch: batches
    for (int i = 0; i < k; ++i) launch_cycle(phase1, fixed_blocks_);
    done += k;
    batch = std::min(2 * batch, max_batch);
    read_control();
    count = current_count();
  }
}

/// Up to `cycles` cycles in one launch: the whole grid (cooperative) while
/// the list is longer than tail_max_list (or always, without tail_), else
/// one block.  Returns the cycles run (and has read the control block).
int ecl_solver::launch_multi_cycle(bool phase1, int cycles, bool whole_grid) {
  const ecl::lift_stop stop = lift_stop();
  if (whole_grid) {
    if (stop.budget != ecl::no_lift_budget) {
      MATCHFLOW_CUDA_TRY(
          cudaMemsetAsync(ctl_.data()->cycle_lifts, 0, sizeof(ctl_.data()->cycle_lifts), stream_));
    }
    launch_cooperative(ecl::push_relabel_persistent_kernel, pr_blocks_, stream_, g_, list0_.data(),
                       list1_.data(), parity_, ctl_.data()->count, ring_, phase1, infinity(phase1),
                       cycle_, cycles, tail_ ? ecl::tail_max_list / 2 : 0, stop, rules_,
                       ctl_.data());
  } else {
    ecl::push_relabel_tail_kernel<<<1, ecl::tail_block, 0, stream_>>>(
        g_, list0_.data(), list1_.data(), parity_, ctl_.data()->count, ring_, phase1,
        infinity(phase1), cycle_, cycles, stop, rules_, ctl_.data());
    MATCHFLOW_CUDA_CHECK_LAUNCH();
  }
  count_launch();
  read_control();
  const int ran = host_ctl_.get()->tail_cycles;
  cycle_ += ran;
  advance(ran);
  return ran;
}

/// One phase of Algorithm 4 (lines 4-14 or 15-25), ended only by an exact
/// relabel that leaves no active vertex (see the header).
void ecl_solver::solve_phase(bool phase1) {
  int count = 0;
  bool relabel = true;
  for (;;) {
    if (relabel || count == 0) {
      const auto start = matchflow::detail::clock_type::now();
      global_relabel(phase1);
      count = collect_active(phase1);
      relabel_seconds_ = matchflow::detail::seconds_since(start);
      stats_->seconds_global_relabel += relabel_seconds_;
      if (count == 0) break;
      lifts_at_relabel_ = host_ctl_.get()->lifts;
      cycle_at_relabel_ = cycle_;
      relabelled_at_ = matchflow::detail::clock_type::now();
    }
    run_cycles(phase1, relabel_freq_, count);
    count = current_count();
    relabel = paper_ || relabel_due();
    if (cycle_ > cycle_limit) {
      throw cuda_failure(cudaErrorUnknown, "gpu-pr did not converge (cycle limit)");
    }
  }
  stats_->iterations = host_ctl_.get()->busy_cycles;
  stats_->pushes = std::int64_t(host_ctl_.get()->pushes);
  stats_->relabels = std::int64_t(host_ctl_.get()->lifts);
}

/// Tuned variant: a global relabel is due after GR_FREQ cycles only if the
/// cycles since the last one lifted at least n / lift_share labels, or
/// lifted at least once every two cycles for rent_ times as long as that
/// relabel took (results/h200/gpu-pr-relabel-rent.txt).
/// The paper relabels every GR_FREQ cycles whatever happened; on a long path
/// (SciPy's 100,000-vertex regression test) the labels stay exact, the
/// excess moves one arc per cycle, and each of the ~n / GR_FREQ relabels
/// is an n-level BFS: quadratic work.  Counting lifts is hi_pr's idea
/// (global updates after work proportional to n), measured in lifts.  The
/// second rule is a rent-or-buy bound: a few vertices that cannot reach the
/// root lift each other about once a cycle and would take n / lift_share
/// cycles (1.6 s instead of 0.05 on the 2048^2 segmentation; NOTES.md,
/// "gpu-pr's constants"); the path's cycles do not lift.
bool ecl_solver::relabel_due() const {
  const auto lifts = host_ctl_.get()->lifts - lifts_at_relabel_;
  if (double(lifts) * lift_share_ >= double(n_)) return true;
  const auto cycles = static_cast<decltype(lifts)>(cycle_ - cycle_at_relabel_);
  return rent_ > 0 && 2 * lifts >= cycles &&
         matchflow::detail::seconds_since(relabelled_at_) >= rent_ * relabel_seconds_;
}

/// The lifts left before relabel_due()'s lift rule holds (0: it holds);
/// no_lift_budget when the kernels do not stop on it.
unsigned long long ecl_solver::lift_budget() const {
  if (lift_stop_rent_ < 0) return ecl::no_lift_budget;
  const double need = std::ceil(double(n_) / lift_share_);
  const double since = double(host_ctl_.get()->lifts - lifts_at_relabel_);
  return since >= need ? 0 : static_cast<unsigned long long>(need - since);
}

/// When a multi-cycle launch stops early: once relabel_due()'s lift rule
/// holds and the cycles since the last relabel have run lift_stop_rent_
/// times as long as it took (rent or buy, as the rent rule).  Checked only
/// between GR_FREQ batches, a rule met early wasted the rest of the batch
/// where a relabel is cheap against the cycles (R-MAT, images, matching as
/// flow); stopping at once cost more relabels where it is dear (Washington,
/// GENRMF long: results/h200/gpu-pr-lift-stop.txt).
ecl::lift_stop ecl_solver::lift_stop() const {
  const double wait =
      lift_stop_rent_ * relabel_seconds_ - matchflow::detail::seconds_since(relabelled_at_);
  return ecl::lift_stop{lift_budget(), static_cast<long long>(std::clamp(wait, 0.0, 1e6) * 1e9)};
}

void ecl_solver::run() {
  phase_clock clock(stream_);
  pooled_allocations pool(stream_, options_.device);  // every buffer of the solve, freed on it
  allocate();
  stats_->seconds_setup += clock.mark();
  upload_network();
  stats_->seconds_transfer += clock.mark();
  build_reverse();
  stats_->seconds_setup += clock.mark();
  host_prefault paging_in(matrix_ranges());

  ecl::saturate_source_kernel<<<1, threads_per_block, 0, stream_>>>(g_);  // line 3
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  count_launch();
  solve_phase(true);
  ecl::min_cut_kernel<<<blocks_for(n_), threads_per_block, 0, stream_>>>(
      vertex_t(n_), h_.data(), infinity(true), side_.data());
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  count_launch();
  stats_->seconds_phase1 += clock.mark();

  if (options_.return_flow && m_ > 0) {
    solve_phase(false);
    stats_->seconds_phase2 += clock.mark();
  }

  paging_in.finish();
  flow_t value = 0;
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&value, excess_.data() + net_.sink, sizeof(flow_t),
                                     cudaMemcpyDeviceToHost, stream_));
  side_.copy_to_host(result_->source_side, std::size_t(n_), stream_);
  if (options_.return_flow && !flow_matrix() && result_->arc_flow != nullptr) {
    staged_download(result_->arc_flow, flow_.data(), sizeof(flow_t) * std::size_t(m_), stream_);
  }
  stats_->seconds_transfer += clock.mark();
  result_->value = value;
}

/// The network into ptr_, heads_ and caps_ in one staged pass (host_copy.cuh),
/// the capacities as int32 when every one fits (int32 is SciPy's own
/// capacity type): a third fewer bytes over the host link on most networks
/// (NOTES.md, "Host copies").  They land in flow_, which build_reverse()
/// zeroes after, and are widened on the device.  Capacities given as int32
/// (net_.caps32) go as they are; int64 ones are narrowed while staged.
void ecl_solver::upload_network() {
  const std::size_t m = std::size_t(m_);
  const copy_part ptr{ptr_.data(), net_.ptr, sizeof(offset_t) * std::size_t(n_ + 1)};
  const copy_part heads{heads_.data(), net_.heads, sizeof(vertex_t) * m};
  auto* narrow = reinterpret_cast<std::int32_t*>(flow_.data());
  const bool sent32 =
      net_.caps32 != nullptr
          ? upload_parts({ptr, heads, copy_part{narrow, net_.caps32, sizeof(std::int32_t) * m}},
                         stream_)
          : upload_parts({ptr, heads, copy_part{narrow, net_.caps, sizeof(std::int32_t) * m, true}},
                         stream_);
  if (sent32) {
    widen_kernel<<<blocks_for(m_), threads_per_block, 0, stream_>>>(narrow, caps_.data(), m);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    count_launch();
    stats_->capacity_bytes = sizeof(std::int32_t);
    return;
  }
  upload_parts({ptr, heads, copy_part{caps_.data(), net_.caps, sizeof(flow_t) * m}}, stream_);
  stats_->capacity_bytes = sizeof(flow_t);
}

/// The host arrays flow_matrix() will fill, up to their 2 m entries: indptr,
/// then indices and data a slice of entries at a time, so that what the
/// phases leave time to page in (prefault.cuh) is the leading entries of
/// both.  None when no matrix was asked for.
std::vector<host_range> ecl_solver::matrix_ranges() const {
  std::vector<host_range> ranges;
  if (result_->matrix_indptr == nullptr || !options_.return_flow) return ranges;
  ranges.push_back({result_->matrix_indptr, sizeof(offset_t) * std::size_t(n_ + 1)});
  constexpr std::size_t slice = std::size_t(1) << 20;  // entries
  const std::size_t entries = 2 * std::size_t(m_);
  for (std::size_t first = 0; first < entries; first += slice) {
    const std::size_t count = std::min(slice, entries - first);
    ranges.push_back({result_->matrix_indices + first, sizeof(vertex_t) * count});
    ranges.push_back({result_->matrix_data + first, sizeof(capacity_t) * count});
  }
  return ranges;
}

/// SciPy's flow matrix on the device, when the caller asked for it and it
/// fits (flow_matrix.cu); false: the caller's arc flows are needed instead.
bool ecl_solver::flow_matrix() {
  if (result_->matrix_indptr == nullptr) return false;
  const device_flow f{n_, m_, heads_.data(), rtail_.data(), rarc_.data(), flow_.data()};
  offset_t nnz = 0;
  if (!device_flow_matrix(f, stream_, result_->matrix_indptr, result_->matrix_indices,
                          result_->matrix_data, &nnz, &stats_->kernel_launches)) {
    return false;
  }
  result_->matrix_nnz = nnz;
  return true;
}

}  // namespace

status gpu_maxflow(const flow_network& net, const flow_options& options, flow_result* result,
                   flow_stats* stats) noexcept {
  return cuda_guarded([&] {
    ecl_solver solver(net, options, result, stats);
    solver.run();
    return status::ok;
  });
}

}  // namespace matchflow::cuda

// Host side of gpu-auction (device code and the algorithm:
// auction_kernels.cuh).
//
// One stream: upload the costs in the caller's type (int64 as int32 when
// they fit: lsap/cost_upload.cuh), one cooperative launch for the auction
// and the augmenting row reduction, one single-block launch for the
// searches of the rows left, then copy back the assignment and the float64
// duals, converted to the caller's dual type.  Every call and launch is
// checked; buffers are RAII; the memory need is checked before any
// allocation.
//
// Schedule (theta, final eps, caps, phase end): the defaults below, from a
// sweep (benchmarks/NOTES.md, "gpu-auction").  MATCHFLOW_GPU_AUCTION=
// "theta,final_divisor,phase_bids,arr_rounds[,phase_free]" overrides them,
// for benchmarking the schedule only.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "lsap/auction_kernels.cuh"
#include "lsap/cost_upload.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/detail/environment.hpp"
#include "matchflow/timing.hpp"

namespace matchflow::cuda {
namespace {

using namespace auction;
using wall_clock = matchflow::detail::clock_type;
using matchflow::detail::seconds_since;

/// Integers are exact in float64 while every dual and path sum stays below
/// 2^53: max(n_rows, n_cols, 8) * max|c| <= 2^50, as in the CPU shortest path.
bool exact_in_float64(std::uint64_t max_abs, std::int64_t n_rows, std::int64_t n_cols) {
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>({n_rows, n_cols, 8}));
  return max_abs <= (std::uint64_t{1} << 50) / n;
}

/// Who solves int64 costs of max |c| = max_abs (int32 ones always fit: at
/// most max_finish_columns columns).
enum class int_route { auction, tree, overflow };

int_route route_int64(std::uint64_t max_abs, std::int64_t n_rows, std::int64_t n_cols) {
  if (!matchflow::detail::int_costs_fit(max_abs, n_rows, n_cols)) return int_route::overflow;
  // Exact in int64 but not in float64: the tree Hungarian solves these in int64.
  return exact_in_float64(max_abs, n_rows, n_cols) ? int_route::auction : int_route::tree;
}

schedule default_schedule() {
  // theta 3, final eps C / n^2, phases ending at 16 free rows (coarser
  // prices make the searches long; fewer free rows bounce along eviction
  // chains one bid at a time).  Caps: 1024 bids a row only stops a runaway
  // price war, and eps = 0 rounds only help while they make progress
  // (benchmarks/NOTES.md, "gpu-auction").
  schedule s{3.0, 1.0, 1024, 64, 16};
  if (const char* env = matchflow::detail::env_text("MATCHFLOW_GPU_AUCTION")) {
    schedule t = s;
    const int got = std::sscanf(env, "%lf,%lf,%d,%d,%d", &t.theta, &t.final_divisor, &t.phase_bids,
                                &t.arr_rounds, &t.phase_free);
    if (got >= 4 && t.theta > 1 && t.final_divisor > 0 && t.phase_bids > 0 && t.arr_rounds >= 0 &&
        t.phase_free >= 0)
      s = t;
  }
  return s;
}

/// Device arrays of one solve.
template <class S>
struct buffers {
  device_buffer<double> u, v, bid_v;
  device_buffer<int> col4row, row4col, bid_col, lists, path;
  device_buffer<unsigned long long> key;
  device_buffer<control> ctl;

  buffers(std::int64_t n_rows, std::int64_t n_cols)
      : u(n_rows),
        v(n_cols),
        bid_v(n_rows),
        col4row(n_rows),
        row4col(n_cols),
        bid_col(n_rows),
        lists(3 * n_rows),
        path(n_cols),
        key(n_cols),
        ctl(1) {}

  static std::size_t bytes(std::int64_t n_rows, std::int64_t n_cols) {
    return static_cast<std::size_t>(n_rows) * (2 * sizeof(double) + 5 * sizeof(int)) +
           static_cast<std::size_t>(n_cols) *
               (2 * sizeof(double) + 2 * sizeof(int) + sizeof(unsigned long long) + 1) +
           sizeof(control);
  }

  params<S> view(const S* cost, int n_rows, int n_cols, bool integer) {
    params<S> p{};
    p.cost = cost;
    p.n_rows = n_rows;
    p.n_cols = n_cols;
    p.integer = integer;
    p.sched = default_schedule();
    p.u = u.data();
    p.v = v.data();
    p.col4row = col4row.data();
    p.row4col = row4col.data();
    p.bid_col = bid_col.data();
    p.bid_v = bid_v.data();
    p.key = key.data();
    for (int k = 0; k < 3; ++k) p.list[k] = lists.data() + static_cast<std::int64_t>(k) * n_rows;
    p.path = path.data();
    p.ctl = ctl.data();
    return p;
  }
};

/// The final searches' block holds at most this many columns in registers.
constexpr std::int64_t max_finish_columns =
    std::int64_t(finish_threads) * batched::max_columns_per_thread;
static_assert((std::int64_t{1} << 31) * max_finish_columns <= (std::int64_t{1} << 50),
              "int32 costs are exact in float64 (exact_in_float64) at any allowed width");

/// finish_kernel with the fewest columns per thread that covers n_cols.
template <class S>
void launch_finish(const params<S>& p, cudaStream_t s) {
  const int per_thread = (p.n_cols + finish_threads - 1) / finish_threads;
  if (per_thread <= 1) {
    finish_kernel<S, 1><<<1, finish_threads, 0, s>>>(p);
  } else if (per_thread <= 2) {
    finish_kernel<S, 2><<<1, finish_threads, 0, s>>>(p);
  } else if (per_thread <= 4) {
    finish_kernel<S, 4><<<1, finish_threads, 0, s>>>(p);
  } else if (per_thread <= 8) {
    finish_kernel<S, 8><<<1, finish_threads, 0, s>>>(p);
  } else {
    finish_kernel<S, batched::max_columns_per_thread><<<1, finish_threads, 0, s>>>(p);
  }
  MATCHFLOW_CUDA_CHECK_LAUNCH();
}

/// Runs both kernels on costs already on the device (stored type S) and
/// copies the results back; float64 duals into du, dv.
template <class S>
status run(const S* d_cost, std::int64_t n_rows, std::int64_t n_cols, bool integer, int device,
           buffers<S>& b, cudaStream_t strm, std::int64_t* col4row, std::vector<double>& du,
           std::vector<double>& dv, lsap_stats& st) {
  int sms = 0, occupancy = 0, coop = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  MATCHFLOW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, auction_kernel<S>,
                                                                   solve_threads, 0));
  if (!coop || occupancy < 1)
    return fail(status::cuda_error, "gpu-auction needs a device with cooperative launch");
  // One block per SM: grid.sync(), twice per round, costs more with more
  // blocks, and 16 warps per SM already exceed the free rows of most rounds.
  const int blocks = sms;
  params<S> p = b.view(d_cost, static_cast<int>(n_rows), static_cast<int>(n_cols), integer);

  auto t0 = wall_clock::now();
  b.ctl.fill_bytes(0, strm);
  void* args[] = {&p};
  MATCHFLOW_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(auction_kernel<S>), blocks,
                                                 solve_threads, args, 0, strm));
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
  st.seconds_init = seconds_since(t0);

  t0 = wall_clock::now();
  launch_finish(p, strm);
  control c{};
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&c, p.ctl, sizeof(c), cudaMemcpyDeviceToHost, strm));
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
  st.seconds_solve = seconds_since(t0);
  st.kernel_launches = 2;
  if (c.error) return fail(status::infeasible, "cost matrix is infeasible");
  st.iterations = st.augmenting_paths = c.searches;
  st.auction_phases = c.phases;
  st.auction_rounds = c.rounds;
  st.auction_bids = c.bids;

  t0 = wall_clock::now();
  std::vector<int> assigned(static_cast<std::size_t>(n_rows));
  du.resize(static_cast<std::size_t>(n_rows));
  dv.resize(static_cast<std::size_t>(n_cols));
  b.col4row.copy_to_host(assigned.data(), assigned.size(), strm);
  b.u.copy_to_host(du.data(), du.size(), strm);
  b.v.copy_to_host(dv.data(), dv.size(), strm);
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
  st.seconds_transfer += seconds_since(t0);
  for (std::int64_t i = 0; i < n_rows; ++i) col4row[i] = assigned[static_cast<std::size_t>(i)];
  if (st.paths_per_iteration) std::fill_n(st.paths_per_iteration, st.iterations, std::int64_t{1});
  return status::ok;
}

/// The float64 duals in the caller's dual type U (integers: every value is
/// an exact integer in float64), and the stats.
template <class U>
status deliver(const std::vector<double>& du, const std::vector<double>& dv, std::int64_t n_rows,
               std::int64_t n_cols, const lsap_stats& st, U* u, U* v, lsap_stats* stats) {
  for (std::int64_t i = 0; i < n_rows; ++i) u[i] = static_cast<U>(du[static_cast<std::size_t>(i)]);
  for (std::int64_t j = 0; j < n_cols; ++j) v[j] = static_cast<U>(dv[static_cast<std::size_t>(j)]);
  *stats = st;
  return status::ok;
}

/// Costs in the caller's GPU memory (lsap_options::cost_on_device): read
/// where they are, on the caller's stream, with no copy (the auction only
/// reads them).  int64 problems come with their max |c| in
/// options.cost_max_abs, as int32 values where options.cost_int32.
template <class In, class U>
status solve_in_place(const In* cost, std::int64_t n_rows, std::int64_t n_cols,
                      const lsap_options& options, std::int64_t* col4row, U* u, U* v,
                      lsap_stats* stats) {
  lsap_stats st{};
  st.paths_per_iteration = stats->paths_per_iteration;
  use_device_with_memory(options.device, buffers<In>::bytes(n_rows, n_cols));
  stream strm(reinterpret_cast<cudaStream_t>(options.stream), true);
  std::vector<double> du, dv;
  status result;
  if constexpr (std::is_floating_point_v<In>) {
    buffers<In> b(n_rows, n_cols);
    result = run(cost, n_rows, n_cols, false, options.device, b, strm, col4row, du, dv, st);
  } else {
    const bool narrow = std::is_same_v<In, std::int32_t> || options.cost_int32;
    if constexpr (std::is_same_v<In, std::int64_t>) {
      const int_route route = route_int64(options.cost_max_abs, n_rows, n_cols);
      if (route == int_route::overflow)
        return fail(status::overflow, matchflow::detail::int_overflow_message);
      if (route == int_route::tree)
        return gpu_hungarian(cost, n_rows, n_cols, true, options, col4row, u, v, stats);
    }
    st.narrow_costs = narrow ? sizeof(std::int32_t) : 0;
    if (narrow) {
      buffers<std::int32_t> b(n_rows, n_cols);
      result = run(reinterpret_cast<const std::int32_t*>(cost), n_rows, n_cols, true,
                   options.device, b, strm, col4row, du, dv, st);
    } else {
      buffers<In> b(n_rows, n_cols);
      result = run(cost, n_rows, n_cols, true, options.device, b, strm, col4row, du, dv, st);
    }
  }
  if (result != status::ok) return result;
  return deliver(du, dv, n_rows, n_cols, st, u, v, stats);
}

/// In: the caller's cost type; U: the duals' type (In for floats, int64 for integers).
template <class In, class U>
status solve(const In* cost, std::int64_t n_rows, std::int64_t n_cols, const lsap_options& options,
             std::int64_t* col4row, U* u, U* v, lsap_stats* stats) {
  constexpr bool integer = std::is_integral_v<In>;
  lsap_stats st{};
  st.paths_per_iteration = stats->paths_per_iteration;
  if (n_rows == 0) {
    std::fill_n(v, n_cols, U{0});
    *stats = st;
    return status::ok;
  }
  if (n_cols > max_finish_columns) {  // the final searches hold columns in registers
    return fail(
        status::invalid_input,
        "gpu-auction: more than " + std::to_string(max_finish_columns) + " columns (use gpu-tree)");
  }
  MATCHFLOW_CUDA_TRY(cudaSetDevice(options.device));
  const auto n_items = static_cast<std::size_t>(n_rows * n_cols);
  if (options.cost_on_device)
    return solve_in_place(cost, n_rows, n_cols, options, col4row, u, v, stats);
  use_device_with_memory(options.device, n_items * sizeof(In) + buffers<In>::bytes(n_rows, n_cols));
  stream strm;
  device_buffer<In> d_cost(n_items);

  auto t0 = wall_clock::now();
  bool narrow = false;
  if constexpr (std::is_same_v<In, std::int64_t>) {
    std::uint64_t max_abs = 0;
    // int32 at the narrowest: the auction's kernels read T or int32
    narrow = upload_int_costs(d_cost.data(), cost, n_items, &max_abs, strm, sizeof(std::int32_t)) ==
             sizeof(std::int32_t);
    const int_route route = route_int64(max_abs, n_rows, n_cols);
    if (route == int_route::overflow)
      return fail(status::overflow, matchflow::detail::int_overflow_message);
    if (route == int_route::tree) {
      d_cost = device_buffer<In>();
      return gpu_hungarian(cost, n_rows, n_cols, true, options, col4row, u, v, stats);
    }
  } else {
    upload_costs(d_cost.data(), cost, n_items, strm);
  }
  st.seconds_transfer = seconds_since(t0);
  st.narrow_costs = (narrow || std::is_same_v<In, std::int32_t>) ? sizeof(std::int32_t) : 0;

  std::vector<double> du, dv;
  status result;
  if (narrow) {
    buffers<std::int32_t> b(n_rows, n_cols);
    result = run(reinterpret_cast<const std::int32_t*>(d_cost.data()), n_rows, n_cols, true,
                 options.device, b, strm, col4row, du, dv, st);
  } else {
    buffers<In> b(n_rows, n_cols);
    result =
        run(d_cost.data(), n_rows, n_cols, integer, options.device, b, strm, col4row, du, dv, st);
  }
  if (result != status::ok) return result;
  return deliver(du, dv, n_rows, n_cols, st, u, v, stats);
}

}  // namespace

template <class In, class U>
status gpu_auction(const In* cost, std::int64_t n_rows, std::int64_t n_cols,
                   const lsap_options& options, std::int64_t* col4row, U* u, U* v,
                   lsap_stats* stats) noexcept {
  return cuda_guarded([&] { return solve(cost, n_rows, n_cols, options, col4row, u, v, stats); });
}

MATCHFLOW_GPU_AUCTION_TYPES(MATCHFLOW_INSTANTIATE_GPU_AUCTION)

}  // namespace matchflow::cuda

// Host side of the GPU Hungarian algorithms (paper 001, Date & Nagi 2016):
// CU-TREE (`tree` = true) and CU-CLASS.  Device code and the list of
// deviations from the paper: hungarian_kernels.cuh.
//
// CU-TREE: initial reduction (Alg. 1, two launches), then ONE cooperative
// launch runs the whole solve (forward pass, dual updates, reverse and
// augmentation passes, optimality checks) with grid.sync() between steps.
// The paper drives every step from the host; on a Hopper GPU the launches and
// the per-level device->host flag copies cost more than the work, hence this.
//
// CU-CLASS: host-driven as in the paper: zero-slack CSR built by count
// kernel + CUB exclusive scan + scatter kernel, rebuilt only after a dual
// update; forward-pass levels compacted with CUB DeviceSelect; one small
// device->host copy per level decides the control flow.
//
// Cost upload: staged through kept pinned chunks (two of 16 MiB) filled by
// a pool of host threads and the caller (a pageable cudaMemcpy runs at one
// CPU thread's copy speed: NOTES.md, "Host copies").  Integer costs are narrowed to int16 or int32
// on the way when they fit (a quarter or half of the bytes to copy and to
// read on the device; duals stay int64), and their range is found in the
// same pass for the exact-int64 overflow check (cost_upload.cuh).
//
// Augmenting paths per iteration: CU-TREE adds each iteration's count into
// a device array (capacity n_rows), copied back once at the end; CU-CLASS
// reads each count back anyway (its host-driven control flow), so the host
// keeps the list.
// Launches per solve: CU-TREE 3 whatever n; CU-CLASS grows with the BFS
// levels and dual updates (35385 for n = 20000, costs in [0, 10n]).
//
// All work runs on one stream; every call and launch is checked; buffers
// are RAII, from the stream-ordered pool; the memory need is computed and
// checked before any allocation.
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "lsap/cost_upload.cuh"
#include "lsap/hungarian_kernels.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/timing.hpp"

namespace matchflow::cuda {
namespace {

using namespace hungarian;
using wall_clock = matchflow::detail::clock_type;
using matchflow::detail::seconds_since;

/// Device arrays of one solve (sizes in the constructor).
template <class T>
struct buffers {
  device_buffer<T> cost, u, v, slack, part_val, row_min, theta;
  device_buffer<int> ar, ac, pr, pc, sr, sc, vr, vc, rev, rvis, aug, act;
  device_buffer<int> frontier, roots, part_row;
  device_buffer<long long> paths;
  device_buffer<control> ctl;

  /// chunks: capacity of part_val / part_row in rows of n_cols.
  buffers(std::int64_t n_rows, std::int64_t n_cols, std::int64_t chunks, bool tree)
      : cost(static_cast<std::size_t>(n_rows * n_cols)),
        u(n_rows),
        v(n_cols),
        slack(n_cols),
        part_val(tree ? chunks * n_cols : 0),
        row_min(tree ? 0 : n_rows),
        theta(1),
        ar(n_rows),
        ac(n_cols),
        pr(n_rows),
        pc(n_cols),
        sr(n_rows),
        sc(n_cols),
        vr(n_rows),
        vc(n_cols),
        rev(n_cols),
        rvis(n_rows),
        aug(n_rows),
        act(n_rows),
        frontier(3 * n_rows),
        roots(2 * n_rows),
        part_row(tree ? chunks * n_cols : 0),
        paths(tree ? n_rows : 0),
        ctl(1) {}

  static std::size_t bytes(std::int64_t n_rows, std::int64_t n_cols, std::int64_t chunks,
                           bool tree) {
    const std::size_t t = sizeof(T), i = sizeof(int);
    std::size_t b = static_cast<std::size_t>(n_rows * n_cols) * t;
    b += static_cast<std::size_t>(n_rows) *
         (t + (tree ? 0 : t) + 9 * i + 3 * i + 2 * i + (tree ? sizeof(long long) : 0));
    b += static_cast<std::size_t>(n_cols) * (2 * t + 6 * i);
    if (tree) b += static_cast<std::size_t>(chunks * n_cols) * (t + i);
    return b + sizeof(control) + t;
  }

  state<T> view(int n_rows, int n_cols, int k_max) {
    state<T> s{};
    s.cost = cost_ref<T>{cost.data(), nullptr, nullptr};
    s.n_rows = n_rows;
    s.n_cols = n_cols;
    s.u = u.data();
    s.v = v.data();
    s.slack = slack.data();
    s.ar = ar.data();
    s.ac = ac.data();
    s.pr = pr.data();
    s.pc = pc.data();
    s.sr = sr.data();
    s.sc = sc.data();
    s.vr = vr.data();
    s.vc = vc.data();
    s.rev = rev.data();
    s.rvis = rvis.data();
    s.aug = aug.data();
    for (int k = 0; k < 3; ++k)
      s.frontier[k] = frontier.data() + static_cast<std::int64_t>(k) * n_rows;
    for (int k = 0; k < 2; ++k) s.roots[k] = roots.data() + static_cast<std::int64_t>(k) * n_rows;
    s.part_val = part_val.data();
    s.part_row = part_row.data();
    s.k_max = k_max;
    s.paths = paths.data();
    s.ctl = ctl.data();
    return s;
  }
};

/// Algorithm 1 plus the reset of every array: assignments -1, stamps 0.
template <class T>
void initial_reduction(buffers<T>& b, const state<T>& s, cudaStream_t stream, lsap_stats& st) {
  control c{};
  for (auto& k : c.theta_key) k = key_inf<T>();
  c.max_abs_key = 0;
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(b.ctl.data(), &c, sizeof(c), cudaMemcpyHostToDevice, stream));
  for (auto* a : {&b.ar, &b.ac, &b.pr, &b.pc, &b.sr, &b.sc}) a->fill_bytes(0xFF, stream);
  for (auto* a : {&b.vr, &b.vc, &b.rev, &b.rvis, &b.aug, &b.act}) a->fill_bytes(0, stream);
  b.paths.fill_bytes(0, stream);
  row_reduce_kernel<T>
      <<<blocks_for(static_cast<std::int64_t>(s.n_rows) * 32), threads_per_block, 0, stream>>>(
          s.cost, s.n_rows, s.n_cols, s.u, &s.ctl->max_abs_key);
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++st.kernel_launches;
  if (s.n_rows == s.n_cols) {
    col_reduce_kernel<T><<<blocks_for(s.n_cols, 32), dim3(32, 32), 0, stream>>>(s.cost, s.n_rows,
                                                                                s.n_cols, s.u, s.v);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    ++st.kernel_launches;
  } else {
    b.v.fill_bytes(0, stream);  // rectangular: v = 0 keeps v <= 0 and v = 0 off the matching
  }
}

// ------------------------------------------------------------------ CU-TREE

template <class T>
void solve_tree(buffers<T>& b, state<T> s, int blocks, cudaStream_t stream, lsap_stats& st) {
  void* args[] = {&s};
  MATCHFLOW_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(tree_solve_kernel<T>),
                                                 blocks, solve_threads, args, 0, stream));
  MATCHFLOW_CUDA_CHECK_LAUNCH();
  ++st.kernel_launches;
}

// ----------------------------------------------------------------- CU-CLASS

/// Scratch of the classical variant: CSR, compaction lists, CUB temp.
struct classic_scratch {
  device_buffer<long long> ptr;  // n_rows + 1 (degrees, then offsets)
  device_buffer<int> z;          // zero-slack column lists, grown on demand
  device_buffer<int> list_a, list_b, next_roots, frev;
  device_buffer<unsigned char> temp;
  std::size_t temp_bytes = 0;
};

template <class T>
class classic_solver {
 public:
  classic_solver(buffers<T>& b, state<T> s, int device, cudaStream_t stream, lsap_stats& st)
      : b_(b), s_(s), device_(device), stream_(stream), st_(st) {}

  /// Returns false when a dual update found no finite step (infeasible input).
  bool run() {
    allocate();
    int it = 1;
    int nroots = select(thrust::counting_iterator<int>(0), x_.list_a.data(), s_.n_rows,
                        stamp_equals{s_.ar, none});
    std::swap(x_.list_a, x_.next_roots);  // next_roots holds this iteration's roots
    bool need_csr = true;
    int level = 0;
    while (nroots > 0) {
      ++st_.iterations;
      launch_mark(x_.next_roots.data(), nroots, it, true);
      int* fr = x_.next_roots.data();
      int nf = nroots;
      control c{};
      while (true) {
        if (need_csr) compress();
        need_csr = false;
        while (nf > 0) {  // forward pass (Alg. 3), one BFS level per round
          ++level;
          classic_expand_kernel<T><<<blocks_for(nf), threads_per_block, 0, stream_>>>(
              s_, x_.ptr.data(), x_.z.data(), fr, &s_.ctl->fcount[1], it, level, b_.act.data());
          MATCHFLOW_CUDA_CHECK_LAUNCH();
          ++st_.kernel_launches;
          int* out = fr == x_.list_a.data() ? x_.list_b.data() : x_.list_a.data();
          nf = select(thrust::counting_iterator<int>(0), out, s_.n_rows,
                      stamp_equals{b_.act.data(), level});
          launch_mark(out, nf, it, false);
          fr = out;
        }
        c = read_control();
        if (c.rev_found == it) break;
        dual_update(it);
        need_csr = true;
        fr = x_.list_a.data();
        nf = select(thrust::counting_iterator<int>(0), fr, s_.n_rows, stamp_equals{s_.vr, it});
        if (read_control().error) return false;
      }
      nroots = augment(it, nroots);
      ++it;
    }
    return true;
  }

 private:
  void allocate() {
    const std::int64_t n = std::max(s_.n_rows, s_.n_cols);
    x_.ptr = device_buffer<long long>(s_.n_rows + 1);
    x_.list_a = device_buffer<int>(n);
    x_.list_b = device_buffer<int>(n);
    x_.next_roots = device_buffer<int>(s_.n_rows);
    x_.frev = device_buffer<int>(s_.n_cols);
    std::size_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
    MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(
        nullptr, t1, thrust::counting_iterator<int>(0), x_.list_a.data(), &s_.ctl->fcount[1],
        static_cast<int>(n), stamp_equals{nullptr, 0}, stream_));
    MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(nullptr, t2, x_.list_a.data(), x_.list_b.data(),
                                             &s_.ctl->fcount[1], s_.n_rows,
                                             root_without_path{nullptr, 0}, stream_));
    MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t3, x_.ptr.data(), x_.ptr.data(),
                                                     s_.n_rows + 1, stream_));
    MATCHFLOW_CUDA_TRY(cub::DeviceReduce::Min(nullptr, t4, b_.row_min.data(), b_.theta.data(),
                                              s_.n_rows, stream_));
    x_.temp_bytes = std::max({t1, t2, t3, t4, std::size_t(16)});
    x_.temp = device_buffer<unsigned char>(x_.temp_bytes);
  }

  /// CUB compaction; returns the number selected (read back: a host sync).
  template <class In, class Pred>
  int select(In in, int* out, int n, Pred pred) {
    std::size_t bytes = x_.temp_bytes;
    MATCHFLOW_CUDA_TRY(cub::DeviceSelect::If(x_.temp.data(), bytes, in, out, &s_.ctl->fcount[1], n,
                                             pred, stream_));
    ++st_.kernel_launches;
    int count = 0;
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(&count, &s_.ctl->fcount[1], sizeof(int), cudaMemcpyDeviceToHost, stream_));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    return count;
  }

  control read_control() {
    control c{};
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&c, s_.ctl, sizeof(c), cudaMemcpyDeviceToHost, stream_));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    return c;
  }

  void launch_mark(const int* rows, int count, int it, bool root) {
    if (count == 0) return;
    // the count lives at ctl->fcount[1] (written by the last select)
    mark_rows_kernel<<<blocks_for(count), threads_per_block, 0, stream_>>>(rows, &s_.ctl->fcount[1],
                                                                           it, s_.vr, s_.pr, root);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    ++st_.kernel_launches;
  }

  /// Zero-slack CSR (Section 3.3): count, CUB exclusive scan, scatter.
  void compress() {
    const unsigned grid = blocks_for(static_cast<std::int64_t>(s_.n_rows) * 32);
    x_.ptr.fill_bytes(0, stream_);
    classic_count_kernel<T><<<grid, threads_per_block, 0, stream_>>>(s_, tol_, x_.ptr.data());
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    std::size_t bytes = x_.temp_bytes;
    MATCHFLOW_CUDA_TRY(cub::DeviceScan::ExclusiveSum(x_.temp.data(), bytes, x_.ptr.data(),
                                                     x_.ptr.data(), s_.n_rows + 1, stream_));
    long long m = 0;
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(&m, x_.ptr.data() + s_.n_rows, sizeof(m), cudaMemcpyDeviceToHost, stream_));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    if (static_cast<std::size_t>(m) > x_.z.size()) {
      const std::size_t cap = std::max<std::size_t>(m, 2 * x_.z.size());
      x_.z = device_buffer<int>();
      use_device_with_memory(device_, cap * sizeof(int));
      x_.z = device_buffer<int>(cap);
    }
    classic_scatter_kernel<T>
        <<<grid, threads_per_block, 0, stream_>>>(s_, tol_, x_.ptr.data(), x_.z.data());
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    st_.kernel_launches += 3;
  }

  /// Algorithms 7 and 8.
  void dual_update(int it) {
    classic_min_slack_kernel<T>
        <<<blocks_for(static_cast<std::int64_t>(s_.n_rows) * 32), threads_per_block, 0, stream_>>>(
            s_, it, b_.row_min.data());
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    std::size_t bytes = x_.temp_bytes;
    MATCHFLOW_CUDA_TRY(cub::DeviceReduce::Min(x_.temp.data(), bytes, b_.row_min.data(),
                                              b_.theta.data(), s_.n_rows, stream_));
    classic_dual_kernel<T>
        <<<blocks_for(std::max(s_.n_rows, s_.n_cols)), threads_per_block, 0, stream_>>>(
            s_, it, b_.theta.data());
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    st_.kernel_launches += 3;
    ++st_.dual_updates;
  }

  /// Reverse pass over compacted reverse columns, augmentation over
  /// compacted roots; returns the number of roots left for the next iteration.
  int augment(int it, int nroots) {
    const int nrev = select(thrust::counting_iterator<int>(0), x_.frev.data(), s_.n_cols,
                            stamp_equals{s_.rev, it});
    classic_reverse_kernel<T><<<blocks_for(nrev), threads_per_block, 0, stream_>>>(
        s_, x_.frev.data(), &s_.ctl->fcount[1], it);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    const int naug =
        select(x_.next_roots.data(), x_.list_a.data(), nroots, stamp_equals{s_.aug, it});
    classic_augment_kernel<T><<<blocks_for(naug), threads_per_block, 0, stream_>>>(
        s_, x_.list_a.data(), &s_.ctl->fcount[1]);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    st_.kernel_launches += 2;
    st_.augmenting_paths += naug;
    paths_per_iteration.push_back(naug);
    const int left =
        select(x_.next_roots.data(), x_.list_b.data(), nroots, root_without_path{s_.aug, it});
    std::swap(x_.list_b, x_.next_roots);
    return left;
  }

 public:
  T tol_ = 0;
  std::vector<std::int64_t> paths_per_iteration;  ///< naug of each iteration (read back anyway)

 private:
  buffers<T>& b_;
  state<T> s_;
  int device_;
  cudaStream_t stream_;
  lsap_stats& st_;
  classic_scratch x_;
};

/// Host form of tolerance<T>() (hungarian_kernels.cuh).
template <class T>
T host_tolerance(key_t max_abs_key) {
  if constexpr (std::is_floating_point_v<T>) {
    double d;
    static_assert(sizeof(d) == sizeof(max_abs_key));
    std::memcpy(&d, &max_abs_key, sizeof(d));
    return static_cast<T>(16) * std::numeric_limits<T>::epsilon() * static_cast<T>(d);
  } else {
    return 0;
  }
}

/// The cost matrix from the caller's GPU memory (lsap_options::cost_on_device):
/// one device-to-device copy on `strm`; int64 problems given as int32
/// (cost_int32) are read through the narrow view, as upload_int_costs leaves
/// them.  False when int64 costs could overflow (the bound of
/// int_costs_fit, from the caller's max |cost|).
template <class T>
bool copy_device_costs(buffers<T>& b, state<T>& s, const T* cost, std::size_t n_items,
                       const lsap_options& options, cudaStream_t strm, lsap_stats& st) {
  const bool narrow = std::is_same_v<T, std::int64_t> && options.cost_int32;
  const std::size_t item = narrow ? sizeof(std::int32_t) : sizeof(T);
  MATCHFLOW_CUDA_TRY(
      cudaMemcpyAsync(b.cost.data(), cost, n_items * item, cudaMemcpyDeviceToDevice, strm));
  if constexpr (std::is_same_v<T, std::int64_t>) {
    if (narrow) {
      s.cost.narrow = reinterpret_cast<const std::int32_t*>(b.cost.data());
      st.narrow_costs = sizeof(std::int32_t);
    }
    return matchflow::detail::int_costs_fit(options.cost_max_abs, s.n_rows, s.n_cols);
  }
  return true;
}

/// The persistent tree solve's grid: blocks (all resident at once) and the
/// most columns a step's chunk holds, k_max.
struct tree_shape {
  int blocks = 0;
  std::int64_t k_max = 1;
};

template <class T>
status query_tree_shape(int device, std::int64_t n_cols, tree_shape* shape) {
  int sms = 0, occupancy = 0, coop = 0;
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  MATCHFLOW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, tree_solve_kernel<T>,
                                                                   solve_threads, 0));
  if (!coop || occupancy < 1)
    return fail(status::cuda_error, "gpu-tree needs a device with cooperative launch");
  shape->blocks = sms * occupancy;
  shape->k_max =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(shape->blocks) * solve_threads / n_cols);
  return status::ok;
}

/// The cost matrix into b.cost, in one of four ways: int32 as it is (read
/// through the narrow view), from the caller's GPU memory, int64 narrowed
/// on the way up where it fits, or as it is.  T: the solve's type; In: the
/// caller's (T, or int32 for T = int64).
template <class T, class In>
status upload_cost_matrix(buffers<T>& b, state<T>& s, const In* cost, const lsap_options& options,
                          cudaStream_t strm, lsap_stats& st) {
  const auto n_items = static_cast<std::size_t>(s.n_rows) * static_cast<std::size_t>(s.n_cols);
  if constexpr (std::is_same_v<In, std::int32_t>) {
    // Uploaded as they are and read as int32: no pass on the host.  |c| <=
    // 2^31 with fewer than 2^31 columns always meets the exact-int64 bound.
    auto* narrow = reinterpret_cast<std::int32_t*>(b.cost.data());
    if (options.cost_on_device) {
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(narrow, cost, n_items * sizeof(std::int32_t),
                                         cudaMemcpyDeviceToDevice, strm));
    } else {
      upload_costs(narrow, cost, n_items, strm);
    }
    s.cost.narrow = reinterpret_cast<const std::int32_t*>(b.cost.data());
    st.narrow_costs = sizeof(std::int32_t);
  } else if (options.cost_on_device) {  // In is T here
    if (!copy_device_costs(b, s, cost, n_items, options, strm, st)) {
      return fail(status::overflow, matchflow::detail::int_overflow_message);
    }
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    std::uint64_t max_abs = 0;
    const int width = upload_int_costs(b.cost.data(), cost, n_items, &max_abs, strm);
    if (width == sizeof(std::int16_t)) s.cost.narrow16 = int16_costs(b.cost.data(), n_items);
    if (width == sizeof(std::int32_t))
      s.cost.narrow = reinterpret_cast<const std::int32_t*>(b.cost.data());
    if (width < static_cast<int>(sizeof(T))) st.narrow_costs = width;
    if (!matchflow::detail::int_costs_fit(max_abs, s.n_rows, s.n_cols))
      return fail(status::overflow, matchflow::detail::int_overflow_message);
  } else {
    upload_costs(b.cost.data(), cost, n_items, strm);
  }
  return status::ok;
}

/// The phases after the initial reduction: the persistent tree solve, or
/// the classical loop (whose paths per iteration go to `record` here; the
/// tree's are read back with the answer).
template <class T>
status run_phases(buffers<T>& b, state<T>& s, bool tree, int blocks, int device, cudaStream_t strm,
                  lsap_stats& st, std::int64_t* record) {
  if (tree) {
    solve_tree(b, s, blocks, strm, st);
  } else {
    key_t max_abs_key = 0;
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&max_abs_key, &s.ctl->max_abs_key, sizeof(key_t),
                                       cudaMemcpyDeviceToHost, strm));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
    classic_solver<T> solver(b, s, device, strm, st);
    solver.tol_ = host_tolerance<T>(max_abs_key);
    if (!solver.run()) return fail(status::infeasible, "cost matrix is infeasible");
    if (record) {
      const std::size_t k = std::min<std::size_t>(solver.paths_per_iteration.size(), s.n_rows);
      std::copy_n(solver.paths_per_iteration.begin(), k, record);
    }
  }
  control c{};
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(&c, s.ctl, sizeof(c), cudaMemcpyDeviceToHost, strm));
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
  if (c.error) return fail(status::infeasible, "cost matrix is infeasible");
  if (tree) {
    st.iterations = c.iterations;
    st.augmenting_paths = c.augmenting_paths;
    st.dual_updates = c.dual_updates;
    st.search_steps = c.steps;
  }
  return status::ok;
}

/// The assignment, the duals and (tree) the paths per iteration, to the host.
template <class T>
void read_back(buffers<T>& b, std::int64_t n_rows, std::int64_t n_cols, bool tree,
               cudaStream_t strm, const lsap_stats& st, std::int64_t* col4row, T* u, T* v,
               std::int64_t* record) {
  std::vector<int> ar(static_cast<std::size_t>(n_rows));
  b.ar.copy_to_host(ar.data(), ar.size(), strm);
  b.u.copy_to_host(u, static_cast<std::size_t>(n_rows), strm);
  b.v.copy_to_host(v, static_cast<std::size_t>(n_cols), strm);
  if (tree && record) {  // one copy for the whole solve
    const auto k = static_cast<std::size_t>(std::min<std::int64_t>(st.iterations, n_rows));
    static_assert(sizeof(long long) == sizeof(std::int64_t));
    b.paths.copy_to_host(reinterpret_cast<long long*>(record), k, strm);
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(strm));
  for (std::int64_t i = 0; i < n_rows; ++i) col4row[i] = ar[static_cast<std::size_t>(i)];
}

/// A square problem assigns every column: shift the duals so that max v = 0
/// (the certificate's form, AssignmentResult).
template <class T>
void shift_duals(std::int64_t n_rows, std::int64_t n_cols, T* u, T* v) {
  if (n_rows != n_cols) return;
  T m = v[0];
  for (std::int64_t j = 1; j < n_cols; ++j) m = v[j] > m ? v[j] : m;
  if (m > 0) {
    for (std::int64_t j = 0; j < n_cols; ++j) v[j] -= m;
    for (std::int64_t i = 0; i < n_rows; ++i) u[i] += m;
  }
}

/// T: the solve's (and the duals') type; In: the caller's cost type (T, or
/// int32 for T = int64).
template <class T, class In>
status solve(const In* cost, std::int64_t n_rows, std::int64_t n_cols, bool tree,
             const lsap_options& options, std::int64_t* col4row, T* u, T* v, lsap_stats* stats) {
  lsap_stats st{};
  std::int64_t* const record = stats ? stats->paths_per_iteration : nullptr;
  st.paths_per_iteration = record;
  if (n_rows == 0) {
    for (std::int64_t j = 0; j < n_cols; ++j) v[j] = 0;
    if (stats) *stats = st;
    return status::ok;
  }
  if (n_cols > std::numeric_limits<int>::max() - 1)
    return fail(status::invalid_input, "gpu_hungarian: more than 2^31 - 2 columns");
  MATCHFLOW_CUDA_TRY(cudaSetDevice(options.device));
  tree_shape shape;
  if (tree) {
    if (const status q = query_tree_shape<T>(options.device, n_cols, &shape); q != status::ok)
      return q;
  }
  const std::int64_t chunks = max_item_columns * shape.k_max;  // tree_partial_step's K at most
  use_device_with_memory(options.device, buffers<T>::bytes(n_rows, n_cols, chunks, tree) +
                                             (tree ? 0 : static_cast<std::size_t>(n_rows) * 64));
  // The caller's stream for costs in its GPU memory (ordered after its work
  // on them, and its later work after ours), else one of our own.
  stream strm(reinterpret_cast<cudaStream_t>(options.stream), options.cost_on_device);
  // Every buffer of the solve from the stream-ordered pool, freed on strm:
  // a cudaMalloc and a cudaFree (a device-wide synchronisation) of the cost
  // matrix's 400-800 MB per call otherwise.
  pooled_allocations pool(strm, options.device);
  buffers<T> b(n_rows, n_cols, chunks, tree);
  state<T> s =
      b.view(static_cast<int>(n_rows), static_cast<int>(n_cols), static_cast<int>(shape.k_max));

  auto t0 = wall_clock::now();
  if (const status up = upload_cost_matrix(b, s, cost, options, strm, st); up != status::ok)
    return up;
  st.seconds_transfer = seconds_since(t0);

  t0 = wall_clock::now();
  initial_reduction(b, s, strm, st);
  strm.synchronize();
  st.seconds_init = seconds_since(t0);

  t0 = wall_clock::now();
  const status solved = run_phases(b, s, tree, shape.blocks, options.device, strm, st, record);
  st.seconds_solve = seconds_since(t0);
  if (solved != status::ok) return solved;

  t0 = wall_clock::now();
  read_back(b, n_rows, n_cols, tree, strm, st, col4row, u, v, record);
  st.seconds_transfer += seconds_since(t0);
  shift_duals(n_rows, n_cols, u, v);
  if (stats) *stats = st;
  return status::ok;
}

}  // namespace

template <class T>
status gpu_hungarian(const T* cost, std::int64_t n_rows, std::int64_t n_cols, bool tree,
                     const lsap_options& options, std::int64_t* col4row, T* u, T* v,
                     lsap_stats* stats) noexcept {
  return cuda_guarded(
      [&] { return solve(cost, n_rows, n_cols, tree, options, col4row, u, v, stats); });
}

status gpu_hungarian_int32(const std::int32_t* cost, std::int64_t n_rows, std::int64_t n_cols,
                           bool tree, const lsap_options& options, std::int64_t* col4row,
                           std::int64_t* u, std::int64_t* v, lsap_stats* stats) noexcept {
  return cuda_guarded(
      [&] { return solve(cost, n_rows, n_cols, tree, options, col4row, u, v, stats); });
}

MATCHFLOW_GPU_HUNGARIAN_TYPES(MATCHFLOW_INSTANTIATE_GPU_HUNGARIAN)

}  // namespace matchflow::cuda

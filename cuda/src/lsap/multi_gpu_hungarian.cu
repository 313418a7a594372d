// Host side of the multi-GPU CU-TREE and CU-CLASS (matchflow/multi_gpu_lsap.hpp;
// device code: multi_gpu_kernels.cuh, multi_classic_kernels.cuh).  A part
// owns its block (columns for CU-TREE, rows for CU-CLASS), the buffers of
// its kernel and its exchange arena; the arena is one cudaMalloc so that
// another process can map it (CUDA IPC).  Host costs are uploaded in pieces
// through the kept pinned staging (host_copy.cuh), never as a whole copy.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"
#include "common/host_copy.cuh"
#include "common/launch.cuh"
#include "lsap/multi_classic_kernels.cuh"
#include "lsap/multi_gpu_kernels.cuh"
#include "matchflow/multi_gpu_lsap.hpp"
#include "matchflow/timing.hpp"

namespace matchflow {

using namespace cuda::hungarian;
using cuda::device_buffer;
using matchflow::detail::seconds_since;
using wall_clock = matchflow::detail::clock_type;

/// What lsap_part's functions call; part_of<T, In> implements it.
class lsap_part {
 public:
  virtual ~lsap_part() = default;
  virtual void* arena() const = 0;
  virtual const lsap_part_config& config() const = 0;
  virtual void connect(const std::vector<void*>& arenas, bool across) = 0;
  virtual void open(const void* handles) = 0;
  virtual void launch() = 0;
  virtual status finish(std::int64_t* col4row, void* u, void* v, lsap_stats* stats) = 0;
};

namespace {

/// The arena: one plain cudaMalloc (IPC needs one), freed on destruction.
class arena_memory {
 public:
  explicit arena_memory(std::size_t bytes) { MATCHFLOW_CUDA_TRY(cudaMalloc(&ptr_, bytes)); }
  ~arena_memory() { cudaFree(ptr_); }
  arena_memory(const arena_memory&) = delete;
  arena_memory& operator=(const arena_memory&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

/// Copies items [first, first + count) of a part's block (row-major, width
/// columns; row i at host + i * stride) into `out`, complemented on request.
template <class In>
void fill_block(In* out, const In* host, std::int64_t stride, std::int64_t width, std::size_t first,
                std::size_t count, bool complement) {
  while (count > 0) {
    const auto i = static_cast<std::int64_t>(first / width);
    const auto jl = static_cast<std::int64_t>(first % width);
    const std::size_t take = std::min<std::size_t>(count, static_cast<std::size_t>(width - jl));
    const In* src = host + i * stride + jl;
    if (!complement) {
      std::memcpy(out, src, take * sizeof(In));
    } else if constexpr (std::is_floating_point_v<In>) {
      for (std::size_t k = 0; k < take; ++k) out[k] = -src[k];
    } else {
      for (std::size_t k = 0; k < take; ++k) out[k] = static_cast<In>(~src[k]);
    }
    out += take;
    first += take;
    count -= take;
  }
}

/// T: the solve's type (int64 for integer costs); In: the costs' (int32
/// read through cost_ref's narrow view).
template <class T, class In>
class part_of final : public lsap_part {
 public:
  explicit part_of(const lsap_part_config& c) : c_(c) {
    MATCHFLOW_CUDA_TRY(cudaSetDevice(c.device));
    // A block in the caller's memory: its producers' work (on any of their
    // streams) done before this part's stream reads it.
    if (c.device_cost) MATCHFLOW_CUDA_TRY(cudaDeviceSynchronize());
    shape();
    cuda::use_device_with_memory(c.device, bytes());
    MATCHFLOW_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    allocate();
    auto t0 = wall_clock::now();
    upload();  // the block: height x width
    stats_.seconds_transfer = seconds_since(t0);
    t0 = wall_clock::now();
    reset_and_reduce_rows();
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    stats_.seconds_init = seconds_since(t0);
  }

  ~part_of() override {
    cudaSetDevice(c_.device);
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    for (void* p : opened_) cudaIpcCloseMemHandle(p);
  }

  void* arena() const override { return arena_->get(); }
  const lsap_part_config& config() const override { return c_; }

  /// `across`: some arena is on another GPU or in another process (the
  /// kernel's fences then reach system scope).
  void connect(const std::vector<void*>& arenas, bool across) override {
    for (int q = 0; q < c_.parts; ++q)
      m_.peer[q] = arena_view<T>::at(arenas[q], c_.parts, lines(), c_.n_cols);
    m_.across_devices = across;
  }

  /// Opens the other parts' arenas from their IPC handles.
  void open(const void* ipc_handles) override {
    const auto* handles = static_cast<const cudaIpcMemHandle_t*>(ipc_handles);
    MATCHFLOW_CUDA_TRY(cudaSetDevice(c_.device));
    std::vector<void*> arenas(c_.parts);
    for (int q = 0; q < c_.parts; ++q) {
      if (q == c_.part) {
        arenas[q] = arena();
        continue;
      }
      MATCHFLOW_CUDA_TRY(
          cudaIpcOpenMemHandle(&arenas[q], handles[q], cudaIpcMemLazyEnablePeerAccess));
      opened_.push_back(arenas[q]);
    }
    connect(arenas, true);
  }

  void launch() override {
    MATCHFLOW_CUDA_TRY(cudaSetDevice(c_.device));
    start_ = wall_clock::now();
    bool square = c_.n_rows == c_.n_cols;
    verdict_box* vb = verdict_.data();
    void* tree_args[] = {&m_, &vb, &square};
    void* classic_args[] = {&m_, &b_, &vb, &square};
    MATCHFLOW_CUDA_TRY(cudaLaunchCooperativeKernel(
        kernel(), blocks_, solve_threads, c_.split_rows ? classic_args : tree_args, 0, stream_));
    MATCHFLOW_CUDA_CHECK_LAUNCH();
  }

  status finish(std::int64_t* col4row, void* u, void* v, lsap_stats* stats) override {
    MATCHFLOW_CUDA_TRY(cudaSetDevice(c_.device));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    stats_.seconds_solve = seconds_since(start_);
    control ctl{};
    MATCHFLOW_CUDA_TRY(cudaMemcpy(&ctl, ctl_.data(), sizeof(ctl), cudaMemcpyDeviceToHost));
    if (ctl.error == multi_gpu_error::infeasible)
      return fail(status::infeasible, "cost matrix is infeasible");
    if (ctl.error == multi_gpu_error::timeout)
      return fail(status::cuda_error, "multi-GPU assignment: part " + std::to_string(c_.part) +
                                          " heard nothing from " + "another part for " +
                                          std::to_string(c_.timeout_seconds) +
                                          " s (a GPU or a process of the solve stopped)");
    if (ctl.error == multi_gpu_error::no_progress)
      return fail(status::cuda_error, stall_message(ctl));
    const auto t0 = wall_clock::now();
    if (col4row) {
      std::vector<int> ar(static_cast<std::size_t>(c_.n_rows));
      ar_.copy_to_host(ar.data(), ar.size(), stream_);
      MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
      std::copy(ar.begin(), ar.end(), col4row);
    }
    if (u) u_.copy_to_host(static_cast<T*>(u), static_cast<std::size_t>(c_.height), stream_);
    v_.copy_to_host(static_cast<T*>(v), static_cast<std::size_t>(c_.width), stream_);
    const auto k = static_cast<std::size_t>(std::min<long long>(ctl.iterations, c_.n_rows));
    std::vector<long long> paths(k);
    paths_.copy_to_host(paths.data(), k, stream_);
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(stream_));
    stats_.seconds_transfer += seconds_since(t0);
    stats_.iterations = ctl.iterations;
    stats_.augmenting_paths = ctl.augmenting_paths;
    stats_.dual_updates = ctl.dual_updates;
    stats_.search_steps = ctl.steps;
    stats_.kernel_launches = c_.split_rows && c_.n_rows == c_.n_cols ? 3 : 2;
    stats_.narrow_costs = std::is_same_v<In, T> ? 0 : static_cast<int>(sizeof(In));
    if (stats) {
      std::int64_t* record = stats->paths_per_iteration;
      *stats = stats_;
      stats->paths_per_iteration = record;
      if (record) std::copy(paths.begin(), paths.end(), record);
    }
    return status::ok;
  }

 private:
  /// An internal error, with what the kernel recorded of it.
  std::string stall_message(const control& ctl) const {
    double theta = 0;
    if constexpr (std::is_floating_point_v<T>)
      std::memcpy(&theta, &ctl.theta_key[0], sizeof(theta));
    else
      theta = static_cast<double>(static_cast<long long>(ctl.theta_key[0]));
    return "multi-GPU assignment made no progress (internal error): part " +
           std::to_string(c_.part) + ", iteration " + std::to_string(ctl.iterations) + ", " +
           std::to_string(ctl.steps) + " steps, " + std::to_string(ctl.dual_updates) +
           " dual updates, last theta " + std::to_string(theta) + ", last level " +
           std::to_string(ctl.fcount[0]) + " entries";
  }

  void* kernel() const {
    return c_.split_rows ? reinterpret_cast<void*>(multi_classic_solve_kernel<T>)
                         : reinterpret_cast<void*>(multi_tree_solve_kernel<T>);
  }

  /// The arena's lines (arena_view): rows for the column split, columns
  /// for the row split.
  std::int64_t lines() const { return c_.split_rows ? c_.n_cols : c_.n_rows; }

  /// The row split's list buffer: room for 64 tight columns a row (rows
  /// with more, once it is full, are scanned densely: multi_classic_kernels.cuh).
  std::int64_t z_cap() const {
    return c_.split_rows ? std::min<std::int64_t>(c_.height * c_.width, 64 * c_.height + 1024) : 0;
  }

  /// The grid (this part's share of the device's SMs) and the split
  /// expansion's chunks (hungarian_dispatch.cu's query_tree_shape).
  void shape() {
    int sms = 0, occupancy = 0, coop = 0;
    MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c_.device));
    MATCHFLOW_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, c_.device));
    MATCHFLOW_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, kernel(), solve_threads, 0));
    if (!coop || occupancy < 1)
      throw cuda::cuda_failure(cudaErrorNotSupported,
                               "multi-GPU assignment needs cooperative launch");
    blocks_ = std::max(1, sms * occupancy / std::max(1, c_.parts_on_device));
    k_max_ =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(blocks_) * solve_threads / c_.width);
  }

  /// The column split's expansion chunks (none for the row split).
  std::int64_t chunks() const { return c_.split_rows ? 0 : max_item_columns * k_max_; }

  std::size_t bytes() const {
    const std::size_t r = c_.n_rows, h = c_.height, w = c_.width;
    const std::size_t own_cost = c_.device_cost ? 0 : h * w * sizeof(In);
    const std::size_t row_split =
        c_.split_rows ? h * (sizeof(int) + sizeof(long long)) + z_cap() * sizeof(int) +
                            w * (sizeof(int) + sizeof(T)) + blocks_ * sizeof(long long)
                      : 0;
    return own_cost + h * sizeof(T) + r * (7 * sizeof(int) + sizeof(long long) * 2) +
           w * (3 * sizeof(T) + 3 * sizeof(int)) + chunks() * w * (sizeof(T) + sizeof(int)) +
           row_split + arena_view<T>::bytes(c_.parts, lines(), c_.n_cols) + (std::size_t(1) << 20);
  }

  void allocate() {
    const auto r = static_cast<std::size_t>(c_.n_rows), w = static_cast<std::size_t>(c_.width);
    const auto h = static_cast<std::size_t>(c_.height);
    if (!c_.device_cost) cost_ = device_buffer<In>(h * w);
    u_ = device_buffer<T>(h);
    v_ = device_buffer<T>(w);
    slack_ = device_buffer<T>(w);
    part_val_ = device_buffer<T>(chunks() * w);
    part_row_ = device_buffer<int>(chunks() * w);
    if (c_.split_rows) {
      deg_ = device_buffer<int>(h);
      ptr_ = device_buffer<long long>(h + 1);
      z_ = device_buffer<int>(z_cap());
      block_sum_ = device_buffer<long long>(blocks_);
      won_ = device_buffer<int>(w);
      col_min_ = device_buffer<T>(w);
    }
    for (auto* b : {&ar_, &pr_, &vr_, &parent_, &root_}) *b = device_buffer<int>(r);
    for (auto* b : {&ac_, &pc_, &vc_}) *b = device_buffer<int>(w);
    roots_ = device_buffer<int>(2 * r);
    claim_ = device_buffer<unsigned long long>(r);
    paths_ = device_buffer<long long>(r);
    ctl_ = device_buffer<control>(1);
    verdict_ = device_buffer<verdict_box>(1);
    arena_ = std::make_unique<arena_memory>(arena_view<T>::bytes(c_.parts, lines(), c_.n_cols));
    view();
  }

  void view() {
    state<T>& s = m_.s;
    const In* cost = c_.device_cost ? static_cast<const In*>(c_.device_cost) : cost_.data();
    if constexpr (std::is_same_v<In, T>)
      s.cost = cost_ref<T>{cost, nullptr, nullptr};
    else
      s.cost = cost_ref<T>{nullptr, cost, nullptr};
    s.n_rows = static_cast<int>(c_.n_rows);
    s.n_cols = static_cast<int>(c_.width);
    s.u = u_.data();
    s.v = v_.data();
    s.slack = slack_.data();
    s.ar = ar_.data();
    s.ac = ac_.data();
    s.pr = pr_.data();
    s.pc = pc_.data();
    s.vr = vr_.data();
    s.vc = vc_.data();
    s.roots[0] = roots_.data();
    s.roots[1] = roots_.data() + c_.n_rows;
    s.part_val = part_val_.data();
    s.part_row = part_row_.data();
    s.k_max = static_cast<int>(k_max_);
    s.paths = paths_.data();
    s.ctl = ctl_.data();
    m_.part = c_.part;
    m_.parts = c_.parts;
    m_.col0 = static_cast<int>(c_.col0);
    m_.n_cols_total = static_cast<int>(c_.n_cols);
    m_.seg = static_cast<int>(lines());
    b_ = row_block{static_cast<int>(c_.row0),
                   static_cast<int>(c_.height),
                   deg_.data(),
                   ptr_.data(),
                   z_.data(),
                   z_cap(),
                   block_sum_.data(),
                   won_.data(),
                   col_min_.data()};
    m_.parent = parent_.data();
    m_.root = root_.data();
    m_.claim = claim_.data();
    m_.timeout_ns = static_cast<long long>(c_.timeout_seconds * 1e9);
  }

  void upload() {
    if (c_.device_cost) return;
    const auto* host = static_cast<const In*>(c_.host_cost);
    const std::size_t n_items = static_cast<std::size_t>(c_.height) * c_.width;
    cuda::staged_upload(
        cost_.data(), n_items, sizeof(In),
        [&](char* buf, std::size_t first, std::size_t count) {
          fill_block(reinterpret_cast<In*>(buf), host, c_.host_stride, c_.width, first, count,
                     c_.complement);
          return true;
        },
        stream_);
  }

  /// Every array to its start (assignments -1, stamps 0, claims none, v 0,
  /// the arena's mailboxes unposted) and the block's row minima into u
  /// (the row split's: also its column minima, shared in the prologue).
  void reset_and_reduce_rows() {
    control c{};
    for (auto& k : c.theta_key) k = key_inf<T>();
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(ctl_.data(), &c, sizeof(c), cudaMemcpyHostToDevice, stream_));
    for (auto* b : {&ar_, &ac_, &pr_, &pc_}) b->fill_bytes(0xFF, stream_);
    for (auto* b : {&vr_, &vc_}) b->fill_bytes(0, stream_);
    claim_.fill_bytes(0xFF, stream_);
    paths_.fill_bytes(0, stream_);
    v_.fill_bytes(0, stream_);
    verdict_.fill_bytes(0, stream_);
    won_.fill_bytes(0, stream_);
    MATCHFLOW_CUDA_TRY(
        cudaMemsetAsync(arena(), 0, arena_view<T>::bytes(c_.parts, lines(), c_.n_cols), stream_));
    const state<T>& s = m_.s;
    const int h = static_cast<int>(c_.height);
    row_reduce_kernel<T>
        <<<cuda::blocks_for(static_cast<std::int64_t>(h) * 32), cuda::threads_per_block, 0,
           stream_>>>(s.cost, h, s.n_cols, s.u, &s.ctl->max_abs_key);
    MATCHFLOW_CUDA_CHECK_LAUNCH();
    if (c_.split_rows && c_.n_rows == c_.n_cols) {
      col_reduce_kernel<T>
          <<<static_cast<unsigned>((s.n_cols + 31) / 32), dim3(32, 32), 0, stream_>>>(
              s.cost, h, s.n_cols, s.u, col_min_.data());
      MATCHFLOW_CUDA_CHECK_LAUNCH();
    }
  }

  lsap_part_config c_;
  cudaStream_t stream_ = nullptr;
  int blocks_ = 0;
  std::int64_t k_max_ = 1;
  device_buffer<In> cost_;
  device_buffer<T> u_, v_, slack_, part_val_;
  device_buffer<int> ar_, ac_, pr_, pc_, vr_, vc_, parent_, root_, roots_, part_row_;
  device_buffer<unsigned long long> claim_;
  device_buffer<long long> paths_;
  device_buffer<int> deg_, z_, won_;  // the row split's (row_block)
  device_buffer<long long> ptr_, block_sum_;
  device_buffer<T> col_min_;
  row_block b_{};
  device_buffer<control> ctl_;
  device_buffer<verdict_box> verdict_;
  std::unique_ptr<arena_memory> arena_;
  multi_state<T> m_{};
  std::vector<void*> opened_;
  lsap_stats stats_{};
  wall_clock::time_point start_;
};

lsap_part* make_part(const lsap_part_config& c) {
  switch (c.kind) {
    case cost_kind::int32: return new part_of<std::int64_t, std::int32_t>(c);
    case cost_kind::int64: return new part_of<std::int64_t, std::int64_t>(c);
    case cost_kind::float32: return new part_of<float, float>(c);
    case cost_kind::float64: return new part_of<double, double>(c);
  }
  throw std::invalid_argument("lsap_part_create: unknown cost kind");
}

/// Peer access from every part's device to every other's (none needed
/// between parts of one device).
void enable_peer_access(lsap_part* const* parts, int count) {
  for (int p = 0; p < count; ++p)
    for (int q = 0; q < count; ++q) {
      const int a = parts[p]->config().device, b = parts[q]->config().device;
      if (a == b) continue;
      int can = 0;
      MATCHFLOW_CUDA_TRY(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can)
        throw cuda::cuda_failure(cudaErrorPeerAccessUnsupported,
                                 "GPUs " + std::to_string(a) + " and " + std::to_string(b) +
                                     " cannot access each other's memory (no peer-to-peer path)");
      MATCHFLOW_CUDA_TRY(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else
        MATCHFLOW_CUDA_TRY(e);
    }
}

}  // namespace

status lsap_part_create(const lsap_part_config& config, lsap_part** part) noexcept {
  *part = nullptr;
  return cuda::cuda_guarded([&] {
    *part = make_part(config);
    return status::ok;
  });
}

status lsap_part_ipc_handle(lsap_part* part, void* handle) noexcept {
  return cuda::cuda_guarded([&] {
    MATCHFLOW_CUDA_TRY(cudaSetDevice(part->config().device));
    cudaIpcMemHandle_t h;
    MATCHFLOW_CUDA_TRY(cudaIpcGetMemHandle(&h, part->arena()));
    static_assert(sizeof(h) == 64);
    std::memcpy(handle, &h, sizeof(h));
    return status::ok;
  });
}

status lsap_parts_connect(lsap_part* const* parts, int count) noexcept {
  return cuda::cuda_guarded([&] {
    enable_peer_access(parts, count);
    std::vector<void*> arenas(count);
    bool across = false;
    for (int q = 0; q < count; ++q) {
      arenas[q] = parts[q]->arena();
      across = across || parts[q]->config().device != parts[0]->config().device;
    }
    for (int p = 0; p < count; ++p) parts[p]->connect(arenas, across);
    return status::ok;
  });
}

status lsap_part_connect_ipc(lsap_part* part, const void* handles) noexcept {
  return cuda::cuda_guarded([&] {
    part->open(handles);
    return status::ok;
  });
}

status lsap_part_launch(lsap_part* part) noexcept {
  return cuda::cuda_guarded([&] {
    part->launch();
    return status::ok;
  });
}

status lsap_part_finish(lsap_part* part, std::int64_t* col4row, void* u, void* v,
                        lsap_stats* stats) noexcept {
  return cuda::cuda_guarded([&] { return part->finish(col4row, u, v, stats); });
}

void lsap_part_destroy(lsap_part* part) noexcept {
  cuda::cuda_guarded([&] {
    delete part;
    return status::ok;
  });
}

}  // namespace matchflow

// What APFB's CUDA graph (cuda/src/matching/apfb_graph.cuh) costs the
// host: a new ap_graph (build and instantiate), one taken from the keep and
// refreshed with new kernel arguments (kept_ap_graphs::take, whose relaunch
// must then count 12 levels into the new buffer: the refresh reached the
// nodes inside the loops' bodies), the launch, the give-back, a graph's
// destruction, and for comparison cudaMemGetInfo.  The kernels are stand-ins
// on the solve's argument, ap::ap_args, that drive the two loops through its
// handles (3 phases of 4 levels); six rounds, the first ones warming up.
//
//     nvcc -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Icuda/src -Icuda/include \
//         -Icpp/include -o /tmp/graph_update_cost benchmarks/graph_update_cost.cu
//     /tmp/graph_update_cost
//
// Results: results/h200/graph-update-cost.txt.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "matching/apfb_graph.cuh"

using namespace matchflow::cuda;

namespace {

// Stand-ins: counter[0] counts the phases down, counter[1] the levels up.
__global__ void init_kernel(const ap::ap_args a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) a.bfs_array[0] = 3;
}
__global__ void begin_kernel(const ap::ap_args a) { cudaGraphSetConditional(a.level_loop, 1); }
__global__ void level_kernel(const ap::ap_args a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int level = ++a.bfs_array[1];
    cudaGraphSetConditional(a.level_loop, level % 4 != 0);
  }
}
__global__ void phase_end_kernel(const ap::ap_args a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    cudaGraphSetConditional(a.phase_loop, --a.bfs_array[0] > 0);
  }
}
__global__ void tail_kernel(const ap::ap_args) {}

using clock_type = std::chrono::steady_clock;
double us_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

ap_shape stand_in_shape() {
  auto kernel = [](auto* func, unsigned int blocks) {
    return ap_kernel{reinterpret_cast<void*>(func), blocks};
  };
  ap_shape shape;
  shape.kernels = {kernel(&init_kernel, 256), kernel(&begin_kernel, 0), kernel(&level_kernel, 256),
                   kernel(&phase_end_kernel, 256), kernel(&tail_kernel, 256)};
  return shape;
}

/// Runs `g` on a zeroed counter pair; returns its level count.
int run(ap_graph& g, int* counter, cudaStream_t s) {
  MATCHFLOW_CUDA_TRY(cudaMemsetAsync(counter, 0, 2 * sizeof(int), s));
  g.launch(s);
  int host[2] = {0, 0};
  MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(host, counter, sizeof(host), cudaMemcpyDeviceToHost, s));
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  return host[1];
}

}  // namespace

int main() {
  cudaStream_t s;
  MATCHFLOW_CUDA_TRY(cudaStreamCreate(&s));
  int *first = nullptr, *second = nullptr;
  MATCHFLOW_CUDA_TRY(cudaMalloc(&first, 2 * sizeof(int)));
  MATCHFLOW_CUDA_TRY(cudaMalloc(&second, 2 * sizeof(int)));
  const ap_shape shape = stand_in_shape();
  for (int round = 0; round < 6; ++round) {
    ap::ap_args args{};
    args.bfs_array = first;
    auto t = clock_type::now();
    auto fresh = std::make_unique<ap_graph>(shape, args);
    const double built = us_since(t);
    const int levels = run(*fresh, first, s);
    t = clock_type::now();
    fresh.reset();
    const double destroyed = us_since(t);

    kept_ap_graphs::give_back(kept_ap_graphs::take(shape, args));  // one kept
    args.bfs_array = second;
    t = clock_type::now();
    auto kept = kept_ap_graphs::take(shape, args);
    const double taken = us_since(t);
    const int kept_levels = run(*kept, second, s);
    t = clock_type::now();
    kept_ap_graphs::give_back(std::move(kept));
    const double given = us_since(t);

    std::size_t free_bytes = 0, total = 0;
    t = clock_type::now();
    MATCHFLOW_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
    const double info = us_since(t);
    std::printf(
        "new graph (build + instantiate) %.1f us, destroy %.1f, kept graph taken and refreshed "
        "%.1f, given back %.1f, cudaMemGetInfo %.1f; levels %d (new) %d (kept, new buffer)\n",
        built, destroyed, taken, given, info, levels, kept_levels);
  }
  return 0;
}

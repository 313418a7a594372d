// gpu-sap (matchflow::cuda::gpu_batched_sap) timed alone on stacks already in
// GPU memory, on the cases benchmarks/NOTES.md ("Batched") quotes, each
// problem's cost checked against SciPy's algorithm on the host, so that two
// builds of the kernel can be compared within one device call (lent hosts
// differ by more than most kernel changes do; this builds in ~30 s against
// the package's ~60).  "diagonal" has a zero on each row's own column and
// costs in [0.5, 1) elsewhere: the greedy start assigns every row, so its
// time is the kernel's setup (the pass over the costs) without searches.
// Prints, per case, the median and least kernel time (CUDA events around the
// call, whose only copy is one status per problem back) of `repeat` calls
// and the number of problems whose cost differs from the host's (0 expected).
//
// `gpu_run.sh solve-ab` builds it against the working tree and, with
// AB_BASE set, against that tree too, and runs the two alternately.
// ab-sources: cuda/src/lsap/batched_dispatch.cu cuda/src/device_query.cu cpp/src/status.cpp
// cpp/src/lsap/shortest_augmenting_path.cpp By hand, from the repository root (the sources above
// after the driver):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp \
//        -Icuda/src -Icpp/include -DMATCHFLOW_CUDA_ARCHITECTURES=\"90\" \
//        benchmarks/batched_solve.cu SOURCES -lgomp -o /tmp/batched_solve
//   /tmp/batched_solve [repeat] [name filter]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/lsap.hpp"

using namespace matchflow;

namespace {

const char* name_filter = nullptr;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class T>
std::vector<T> make_costs(std::int64_t batch, int n_rows, int n_cols, bool diagonal,
                          unsigned seed) {
  std::vector<T> c(static_cast<std::size_t>(batch) * n_rows * n_cols);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(diagonal ? 0.5 : 0.0, 1.0);
  std::size_t e = 0;
  for (std::int64_t p = 0; p < batch; ++p)
    for (int i = 0; i < n_rows; ++i)
      for (int j = 0; j < n_cols; ++j, ++e) {
        const double x = diagonal && i == j ? 0.0 : d(rng);
        c[e] = std::is_integral_v<T> ? static_cast<T>(std::floor(100 * x)) : static_cast<T>(x);
      }
  return c;
}

/// Problems whose cost differs from solve_lsap_shortest_path's on the host.
template <class T>
long cost_mismatches(const std::vector<T>& c, std::int64_t batch, int n_rows, int n_cols,
                     const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols) {
  const int k = std::min(n_rows, n_cols);
  const std::size_t entries = static_cast<std::size_t>(n_rows) * n_cols;
  std::vector<std::int64_t> r(k), q(k);
  long bad = 0;
  for (std::int64_t p = 0; p < batch; ++p) {
    const T* a = c.data() + p * entries;
    if (solve_lsap_shortest_path<T>(a, n_rows, n_cols, n_cols * sizeof(T), sizeof(T), false,
                                    r.data(), q.data()) != status::ok) {
      ++bad;
      continue;
    }
    double want = 0, got = 0;
    for (int t = 0; t < k; ++t) {
      want += double(a[r[t] * n_cols + q[t]]);
      got += double(a[rows[p * k + t] * n_cols + cols[p * k + t]]);
    }
    if (std::fabs(want - got) > 1e-9 * std::max(1.0, std::fabs(want))) ++bad;
  }
  return bad;
}

template <class T>
void run_case(const char* name, std::int64_t batch, int n_rows, int n_cols, bool diagonal,
              int repeat, unsigned seed) {
  if (name_filter && !std::strstr(name, name_filter)) return;
  const std::vector<T> c = make_costs<T>(batch, n_rows, n_cols, diagonal, seed);
  const std::size_t pairs = static_cast<std::size_t>(batch) * std::min(n_rows, n_cols);
  T* d_cost = nullptr;
  std::int64_t *d_rows = nullptr, *d_cols = nullptr;
  check(cudaMalloc(&d_cost, c.size() * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&d_rows, pairs * sizeof(std::int64_t)), "cudaMalloc");
  check(cudaMalloc(&d_cols, pairs * sizeof(std::int64_t)), "cudaMalloc");
  check(cudaMemcpy(d_cost, c.data(), c.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  batched_lsap_options opt{};
  opt.on_device = true;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> ms;
  for (int r = 0; r <= repeat; ++r) {  // the first call warms up
    batched_lsap_stats st{};
    check(cudaEventRecord(start, 0), "record");
    const status rc =
        cuda::gpu_batched_sap<T>(d_cost, batch, n_rows, n_cols, false, opt, d_rows, d_cols, &st);
    check(cudaEventRecord(stop, 0), "record");
    check(cudaEventSynchronize(stop), "sync");
    if (rc != status::ok) {
      std::printf("%s: status %d\n", name, static_cast<int>(rc));
      std::exit(1);
    }
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (r > 0) ms.push_back(t);
  }
  std::vector<std::int64_t> rows(pairs), cols(pairs);
  check(cudaMemcpy(rows.data(), d_rows, pairs * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
        "copy");
  check(cudaMemcpy(cols.data(), d_cols, pairs * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
        "copy");
  std::sort(ms.begin(), ms.end());
  std::printf("%-28s kernel %7.3f ms (least %7.3f)  cost mismatches %ld\n", name, ms[ms.size() / 2],
              ms[0], cost_mismatches(c, batch, n_rows, n_cols, rows, cols));
  cudaFree(d_cost);
  cudaFree(d_rows);
  cudaFree(d_cols);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  if (argc > 2) name_filter = argv[2];
  run_case<float>("f32 208x300x300", 208, 300, 300, false, repeat, 1);
  run_case<float>("f32 208x300x300 diagonal", 208, 300, 300, true, repeat, 2);
  run_case<double>("f64 208x300x300", 208, 300, 300, false, repeat, 3);
  run_case<float>("f32 1024x64x64", 1024, 64, 64, false, repeat, 4);
  run_case<float>("f32 208x300x100", 208, 300, 100, false, repeat, 5);
  run_case<float>("f32 208x100x300", 208, 100, 300, false, repeat, 6);
  run_case<std::int64_t>("i64 1024x64x64 [0,100)", 1024, 64, 64, false, repeat, 7);
  run_case<float>("f32 10000x16x16", 10000, 16, 16, false, repeat, 8);
  return 0;
}

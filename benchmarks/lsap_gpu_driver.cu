// Test/benchmark driver for matchflow::cuda::gpu_hungarian (not installed).
//
// Build (repository root):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Icuda/src -Icuda/include \
//        -Icpp/include -DMATCHFLOW_CUDA_ARCHITECTURES=\"90\" benchmarks/lsap_gpu_driver.cu cuda/src/lsap/hungarian_dispatch.cu \
//        cuda/src/device_query.cu cpp/src/status.cpp -o lsap_gpu_driver
// Modes:
//   lsap_gpu_driver files tree|classic REPS F1 [F2 ...]
//       Fi: int64 header {dtype (0 f64, 1 f32, 2 i64), n_rows, n_cols} + row-major costs.
//       Writes Fi.out: per repetition int64 status, col4row[n_rows] (int64), u[n_rows],
//       v[n_cols] (cost type), 7 float64 stats (iterations, paths, dual updates, launches,
//       transfer s, init s, solve s), float64 wall seconds of the call.
//   lsap_gpu_driver gen tree|classic REPS N RANGE SEED
//       Uniform int64 costs in [0, RANGE] (N x N), one warm-up + REPS timed runs; checks the
//       dual certificate exactly and prints the median times.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "matchflow/cuda/entry.hpp"

using matchflow::lsap_options;
using matchflow::lsap_stats;
using matchflow::status;

template <class T>
static int run_file(const char* path, bool tree, int reps, std::FILE* in, std::int64_t nr,
                    std::int64_t nc) {
  std::vector<T> cost(static_cast<std::size_t>(nr * nc));
  if (std::fread(cost.data(), sizeof(T), cost.size(), in) != cost.size()) return 1;
  std::FILE* out = std::fopen((std::string(path) + ".out").c_str(), "wb");
  if (!out) return 1;
  std::vector<std::int64_t> col4row(static_cast<std::size_t>(nr));
  std::vector<T> u(static_cast<std::size_t>(nr)), v(static_cast<std::size_t>(nc));
  for (int r = 0; r < reps; ++r) {
    lsap_stats st{};
    auto t0 = std::chrono::steady_clock::now();
    const status s = matchflow::cuda::gpu_hungarian<T>(cost.data(), nr, nc, tree, lsap_options{},
                                                       col4row.data(), u.data(), v.data(), &st);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s != status::ok) std::fprintf(stderr, "%s: status %d: %s\n", path, int(s), matchflow::last_error());
    const std::int64_t code = static_cast<std::int64_t>(s);
    const double stats[8] = {double(st.iterations), double(st.augmenting_paths), double(st.dual_updates),
                             double(st.kernel_launches), st.seconds_transfer, st.seconds_init,
                             st.seconds_solve, wall};
    std::fwrite(&code, sizeof(code), 1, out);
    std::fwrite(col4row.data(), sizeof(std::int64_t), col4row.size(), out);
    std::fwrite(u.data(), sizeof(T), u.size(), out);
    std::fwrite(v.data(), sizeof(T), v.size(), out);
    std::fwrite(stats, sizeof(double), 8, out);
  }
  std::fclose(out);
  return 0;
}

static int files_mode(bool tree, int reps, int argc, char** argv) {
  for (int k = 0; k < argc; ++k) {
    std::fprintf(stderr, "case %s\n", argv[k]);
    std::fflush(stderr);
    std::FILE* in = std::fopen(argv[k], "rb");
    if (!in) return 1;
    std::int64_t h[3];
    if (std::fread(h, sizeof(std::int64_t), 3, in) != 3) return 1;
    int rc = h[0] == 0   ? run_file<double>(argv[k], tree, reps, in, h[1], h[2])
             : h[0] == 1 ? run_file<float>(argv[k], tree, reps, in, h[1], h[2])
                         : run_file<std::int64_t>(argv[k], tree, reps, in, h[1], h[2]);
    std::fclose(in);
    if (rc) return rc;
  }
  return 0;
}

static int gen_mode(bool tree, int reps, std::int64_t n, std::int64_t range, unsigned seed) {
  std::vector<std::int64_t> cost(static_cast<std::size_t>(n * n));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, range);
  for (auto& c : cost) c = dist(rng);
  std::vector<std::int64_t> col4row(n), u(n), v(n);
  std::vector<double> wall, solve, transfer;
  lsap_stats st{};
  for (int r = 0; r <= reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const status s = matchflow::cuda::gpu_hungarian<std::int64_t>(cost.data(), n, n, tree, lsap_options{},
                                                                  col4row.data(), u.data(), v.data(), &st);
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s != status::ok) {
      std::printf("status %d: %s\n", int(s), matchflow::last_error());
      return 1;
    }
    if (r == 0) continue;  // warm-up
    wall.push_back(w);
    solve.push_back(st.seconds_init + st.seconds_solve);
    transfer.push_back(st.seconds_transfer);
  }
  // certificate: u_i + v_j <= c_ij, equality on the assignment, a permutation
  std::vector<char> used(n, 0);
  bool ok = true;
  std::int64_t obj = 0;
  for (std::int64_t i = 0; i < n && ok; ++i) {
    const std::int64_t j = col4row[i];
    if (j < 0 || j >= n || used[j]) ok = false;
    else used[j] = 1;
    if (ok && u[i] + v[j] != cost[i * n + j]) ok = false;
    if (ok) obj += cost[i * n + j];
    for (std::int64_t k = 0; k < n && ok; ++k)
      if (u[i] + v[k] > cost[i * n + k]) ok = false;
  }
  for (std::int64_t j = 0; j < n && ok; ++j)
    if (v[j] > 0) ok = false;
  auto median = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  std::printf("%s n=%lld range=[0,%lld] seed=%u certificate=%s objective=%lld | median of %d: "
              "wall %.4f s, device (init+solve) %.4f s, transfer %.4f s | iterations %lld paths %lld "
              "dual_updates %lld launches %lld\n",
              tree ? "gpu-tree" : "gpu-classic", (long long)n, (long long)range, seed,
              ok ? "OK" : "FAILED", (long long)obj, reps, median(wall), median(solve), median(transfer),
              (long long)st.iterations, (long long)st.augmenting_paths, (long long)st.dual_updates,
              (long long)st.kernel_launches);
  return ok ? 0 : 2;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: see the header of lsap_gpu_driver.cu\n");
    return 1;
  }
  const std::string mode = argv[1];
  const bool tree = std::string(argv[2]) == "tree";
  const int reps = std::atoi(argv[3]);
  if (mode == "files") return files_mode(tree, reps, argc - 4, argv + 4);
  if (mode == "gen" && argc >= 7)
    return gen_mode(tree, reps, std::atoll(argv[4]), std::atoll(argv[5]), unsigned(std::atoi(argv[6])));
  std::fprintf(stderr, "bad arguments\n");
  return 1;
}

// gpu-tree's solve timed alone (matchflow::cuda::gpu_hungarian, tree = true)
// on the cases benchmarks/NOTES.md ("Assignment") quotes, each answer checked
// against its dual certificate, so that two builds of the kernel can be
// compared within one device call: lent hosts differ by more than most
// kernel changes do, and this builds in ~25 s against the package's ~90.
// Prints, per case, the median and least solve time of `repeat` calls, the
// median whole call (host copies included), iterations, dual updates, the
// objective and the number of certificate violations (0 expected).
//
// `gpu_run.sh solve-ab` builds it against the working tree and, with AB_BASE
// set, against that tree too (a base from `git archive REV cuda cpp | tar -x
// -C DIR`), and runs the two alternately.
// ab-sources: cuda/src/lsap/hungarian_dispatch.cu cuda/src/device_query.cu cpp/src/status.cpp
// By hand, from the repository root (the sources above after the driver):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp \
//        -Icuda/src -Icpp/include -DMATCHFLOW_CUDA_ARCHITECTURES=\"90\" \
//        benchmarks/tree_solve.cu SOURCES -lgomp -o /tmp/tree_solve
//   /tmp/tree_solve [repeat] [name filter]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "matchflow/detail/cuda_backend.hpp"

using namespace matchflow;

namespace {

const char* name_filter = nullptr;

template <class T>
std::vector<T> uniform_costs(int n, double hi, unsigned seed) {
  std::vector<T> c(static_cast<std::size_t>(n) * n);
  std::mt19937_64 rng(seed);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<long long> d(0, static_cast<long long>(hi));
    for (auto& x : c) x = static_cast<T>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(0, hi);
    for (auto& x : c) x = static_cast<T>(d(rng));
  }
  return c;
}

/// u_i + v_j <= c_ij everywhere, with equality on the assignment.
template <class T>
long certificate_violations(const std::vector<T>& c, int n, const std::vector<std::int64_t>& col,
                            const std::vector<T>& u, const std::vector<T>& v, double hi) {
  const double tol = std::is_integral_v<T> ? 0 : 1e-3 * hi;
  long bad = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double r = double(c[std::size_t(i) * n + j]) - double(u[i]) - double(v[j]);
      if (r < -tol || (j == col[i] && r > tol)) ++bad;
    }
  return bad;
}

template <class T>
void run_case(const char* name, int n, double hi, int repeat, unsigned seed) {
  if (name_filter && !std::strstr(name, name_filter)) return;
  const std::vector<T> c = uniform_costs<T>(n, hi, seed);
  std::vector<std::int64_t> col(n);
  std::vector<T> u(n), v(n);
  std::vector<double> solve, call;
  lsap_stats st{};
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const status rc = cuda::gpu_hungarian<T>(c.data(), n, n, true, lsap_options{}, col.data(),
                                             u.data(), v.data(), &st);
    call.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (rc != status::ok) {
      std::printf("%s: status %d\n", name, static_cast<int>(rc));
      std::exit(1);
    }
    solve.push_back(st.seconds_solve);
  }
  double objective = 0;
  for (int i = 0; i < n; ++i) objective += double(c[std::size_t(i) * n + col[i]]);
  std::sort(solve.begin(), solve.end());
  std::sort(call.begin(), call.end());
  std::printf(
      "%-22s solve %7.2f ms (least %7.2f)  call %7.2f ms  iterations %lld  dual %lld  "
      "objective %.6g  certificate violations %ld\n",
      name, 1e3 * solve[repeat / 2], 1e3 * solve[0], 1e3 * call[repeat / 2],
      static_cast<long long>(st.iterations), static_cast<long long>(st.dual_updates), objective,
      certificate_violations(c, n, col, u, v, hi));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  if (argc > 2) name_filter = argv[2];
  run_case<std::int64_t>("i64 n=10000 [0,n]", 10000, 10000, repeat, 1);
  run_case<std::int64_t>("i64 n=10000 [0,10n]", 10000, 100000, repeat, 2);
  run_case<std::int64_t>("i64 n=10000 [0,n/10]", 10000, 1000, repeat, 3);
  run_case<std::int64_t>("i64 n=5000 [0,n]", 5000, 5000, repeat, 4);
  run_case<std::int64_t>("i64 n=20000 [0,n]", 20000, 20000, std::min(repeat, 3), 5);
  run_case<float>("f32 n=2000 [0,1]", 2000, 1.0, repeat, 6);
  run_case<double>("f64 n=3000 [0,1]", 3000, 1.0, repeat, 7);
  return 0;
}

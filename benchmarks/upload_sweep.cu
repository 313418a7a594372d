// The narrowed int64 cost upload of the dense GPU assignment solvers
// (cuda/src/lsap/cost_upload.cuh), timed alone over the staging's shapes:
// host threads, pinned chunk size, non-temporal ("streaming") or plain
// stores, int16 (when the values fit) or int32 at the narrowest.  What
// gpu-tree ships is the first row (cost_upload_copy, streaming
// stores, int16); the others say whether another shape pays on this host.
//
// Build and run from the repository root (the GPU host):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icuda/src -Icpp/include benchmarks/upload_sweep.cu \
//        -o /tmp/upload_sweep && /tmp/upload_sweep [n] [repeat]
// `--host-only` (no GPU needed): checks narrow_to against the obvious loop
// and times the host pass alone on 1..hardware threads.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/narrow_ints.hpp"
#include "lsap/cost_upload.cuh"

using namespace matchflow::cuda;
using clock_type = std::chrono::steady_clock;

namespace {

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// The obvious loop (what the int32 upload ran before): the reference and
/// the baseline.
template <class Out>
bool obvious(const std::int64_t* in, Out* out, std::size_t n, int_range* r) {
  int_range x;
  for (std::size_t k = 0; k < n; ++k) {
    x.lo = in[k] < x.lo ? in[k] : x.lo;
    x.hi = in[k] > x.hi ? in[k] : x.hi;
    out[k] = static_cast<Out>(in[k]);
  }
  *r = x;
  return x.lo >= std::numeric_limits<Out>::min() && x.hi <= std::numeric_limits<Out>::max();
}

template <class Out>
using pass_fn = bool (*)(const std::int64_t*, Out*, std::size_t, int_range*);

/// narrow_to (plain and streaming) against the obvious loop: random blocks
/// and lengths, targets off alignment, values at and past the type's ends.
template <class Out>
int check() {
  using lim = std::numeric_limits<Out>;
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> in(5000);
  std::vector<Out> want(in.size() + 8), got(in.size() + 8);
  int bad = 0;
  const std::int64_t edges[] = {lim::min(),
                                lim::max(),
                                std::int64_t(lim::min()) - 1,
                                std::int64_t(lim::max()) + 1,
                                INT64_MIN,
                                INT64_MAX,
                                0,
                                -1};
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = rng() % in.size(), shift = rng() % 8;
    for (auto& x : in) x = static_cast<std::int64_t>(rng() % 2001) - 1000;
    if (n && trial % 2) in[rng() % n] = edges[rng() % 8];
    int_range rw, rg;
    const bool fits = obvious(in.data(), want.data() + shift, n, &rw);
    for (pass_fn<Out> f :
         {pass_fn<Out>(narrow_to<Out, false>), pass_fn<Out>(narrow_to<Out, true>)}) {
      const bool ok = f(in.data(), got.data() + shift, n, &rg);
      if (ok != fits ||
          (fits && n &&
           (rg.lo != rw.lo || rg.hi != rw.hi ||
            std::memcmp(want.data() + shift, got.data() + shift, n * sizeof(Out)) != 0))) {
        std::printf("MISMATCH int%zu trial %d n %zu shift %zu\n", 8 * sizeof(Out), trial, n, shift);
        ++bad;
      }
    }
  }
  std::printf("check int%zu: %s\n", 8 * sizeof(Out),
              bad ? "FAILED" : "narrow_to (plain, streaming) == obvious loop");
  return bad;
}

/// The host pass alone: `threads` threads over the matrix, each writing its
/// share into its part of a 32 MiB ring (the staging's size).
template <class Out>
double host_pass(pass_fn<Out> f, const std::vector<std::int64_t>& src, unsigned threads, Out* ring,
                 std::size_t ring_items) {
  const auto t0 = clock_type::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::size_t part = ring_items / threads;
      Out* out = ring + t * part;
      const auto [a, e] = piece_share(src.size(), t, threads);
      int_range r;
      for (std::size_t k = a; k < e; k += part) f(src.data() + k, out, std::min(part, e - k), &r);
    });
  }
  for (auto& t : pool) t.join();
  return since(t0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

template <class Out>
void host_passes(const std::vector<std::int64_t>& src, int repeat, unsigned hw) {
  const double mb = src.size() * sizeof(std::int64_t) / 1e6;
  const std::size_t ring_items = (std::size_t(32) << 20) / sizeof(Out);
  std::vector<Out> ring(ring_items, 1);
  const std::pair<const char*, pass_fn<Out>> passes[] = {{"obvious", obvious<Out>},
                                                         {"plain", narrow_to<Out, false>},
                                                         {"streaming", narrow_to<Out, true>}};
  for (unsigned t = 1; t <= hw; t = t < 4 ? t + 1 : t + 4) {
    for (const auto& [name, f] : passes) {
      std::vector<double> s;
      for (int r = 0; r < repeat; ++r) s.push_back(host_pass(f, src, t, ring.data(), ring_items));
      const double m = median(s);
      std::printf(
          "host pass int%zu %-9s threads %2u: %7.2f ms for %.0f MB int64 (%.1f GB/s read)\n",
          8 * sizeof(Out), name, t, m * 1e3, mb, mb / 1e3 / m);
    }
  }
}

int main(int argc, char** argv) {
  const bool host_only = argc > 1 && std::string(argv[1]) == "--host-only";
  const int arg0 = host_only ? 2 : 1;
  const std::size_t n = argc > arg0 ? std::strtoull(argv[arg0], nullptr, 10) : 10000;
  const int repeat = argc > arg0 + 1 ? std::atoi(argv[arg0 + 1]) : 5;
  if (check<std::int32_t>() + check<std::int16_t>()) return 1;
  std::vector<std::int64_t> src(n * n);
  std::mt19937_64 rng(1);
  for (auto& x : src) x = static_cast<std::int64_t>(rng() % (n + 1));  // int[0,n]
  const double mb = src.size() * sizeof(std::int64_t) / 1e6;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());

  if (host_only) {
    host_passes<std::int32_t>(src, repeat, hw);
    host_passes<std::int16_t>(src, repeat, hw);
    return 0;
  }

  std::int64_t* d = nullptr;
  MATCHFLOW_CUDA_TRY(cudaMalloc(&d, src.size() * sizeof(std::int64_t)));
  cudaStream_t s;
  MATCHFLOW_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::int32_t> want32(src.size()), got32(src.size());
  std::vector<std::int16_t> want16(src.size()), got16(src.size());
  int_range wr;
  obvious(src.data(), want32.data(), src.size(), &wr);
  const bool fits16 = obvious(src.data(), want16.data(), src.size(), &wr);
  struct config {
    int narrowest;
    bool nt;
    unsigned workers;
    std::size_t chunk_mib;
  };
  const copy_shape shipped = cost_upload_copy;
  const std::size_t shipped_mib = shipped.chunk_bytes >> 20;
  std::vector<config> configs = {{2, true, shipped.workers, shipped_mib}};
  for (int narrowest : {2, 4})
    for (bool nt : {true, false})
      for (unsigned w : {4u, 8u, 12u, 16u})
        for (std::size_t c : {8, 16, 32})
          if (w <= hw && !(narrowest == 2 && nt && w == shipped.workers && c == shipped_mib))
            configs.push_back({narrowest, nt, w, c});
  for (const auto& c : configs) {
    const copy_shape shape{c.chunk_mib << 20, shipped.slots, c.workers};
    std::vector<double> s_times;
    int width = 0;
    std::uint64_t max_abs = 0;
    for (int r = 0; r <= repeat; ++r) {  // the first: warm-up (kept staging allocated)
      MATCHFLOW_CUDA_TRY(cudaMemsetAsync(d, 0, src.size() * sizeof(std::int64_t), s));
      MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
      const auto t0 = clock_type::now();
      const auto upload = c.nt ? upload_int_costs<true> : upload_int_costs<false>;
      width = upload(d, src.data(), src.size(), &max_abs, s, c.narrowest, shape);
      if (r) s_times.push_back(since(t0));
    }
    bool ok = max_abs == static_cast<std::uint64_t>(wr.hi);
    if (width == 2) {
      MATCHFLOW_CUDA_TRY(cudaMemcpy(got16.data(), int16_costs(d, src.size()),
                                    got16.size() * sizeof(std::int16_t), cudaMemcpyDeviceToHost));
      ok = ok && fits16 && std::memcmp(got16.data(), want16.data(), got16.size() * 2) == 0;
    } else {
      MATCHFLOW_CUDA_TRY(
          cudaMemcpy(got32.data(), d, got32.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
      ok = ok && width == 4 && (c.narrowest == 4 || !fits16) &&
           std::memcmp(got32.data(), want32.data(), got32.size() * 4) == 0;
    }
    std::printf(
        "upload as int%d %s workers %2u chunk %2zu MiB: %7.2f ms (median of %d) for %.0f MB"
        " int64%s%s\n",
        8 * width, c.nt ? "streaming" : "plain    ", c.workers, c.chunk_mib, median(s_times) * 1e3,
        repeat, mb, &c == &configs[0] ? " [shipped]" : "", ok ? "" : " WRONG RESULT");
    if (!ok) return 1;
  }
  MATCHFLOW_CUDA_TRY(cudaStreamDestroy(s));
  MATCHFLOW_CUDA_TRY(cudaFree(d));
  return 0;
}

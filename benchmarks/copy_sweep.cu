// The staged host <-> device copies of a matching call
// (cuda/src/common/host_copy.cuh: upload_parts, download_parts), timed alone
// over their shapes (chunk size x ring slots; the shipped shape first)
// against the link's floor: one DMA from or to pinned memory of the same
// bytes.  Shapes: the CSR uploads of the 2^20 suite
// (17, 34, 69 MB in two arrays) and the mates' download (two arrays of
// 4 MB), the latter into fresh pages (as a call's new result arrays) and
// into pages already touched.  Medians of `repeat` runs.  Then the small
// uploads around min_staged_copy and min_narrowed_copy (copy_part.cuh): a
// plain pageable copy against the same bytes staged, and int32 values
// narrowed from int64 while staged against the plain copy of the int64
// (gpu-pr's capacities).
//
// Build and run from the repository root (the GPU host):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icuda/src -Icpp/include benchmarks/copy_sweep.cu \
//        -o /tmp/copy_sweep && /tmp/copy_sweep [repeat]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "common/host_copy.cuh"

using namespace matchflow::cuda;
using clock_type = std::chrono::steady_clock;

namespace {

double median_ms(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class F>
double time_ms(int repeat, F&& f) {
  f();  // warm-up: staging, threads, the destination's first pages
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = clock_type::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }
  return median_ms(t);
}

/// `shipped` first, then every other chunk (MiB) x slots shape.
std::vector<copy_shape> shapes(copy_shape shipped, std::initializer_list<std::size_t> chunks_mib,
                               std::initializer_list<std::size_t> slots) {
  std::vector<copy_shape> all = {shipped};
  for (std::size_t c : chunks_mib)
    for (std::size_t k : slots)
      if (c << 20 != shipped.chunk_bytes || k != shipped.slots)
        all.push_back(copy_shape{c << 20, k, shipped.workers});
  return all;
}

/// Fresh anonymous pages (no page faulted in yet), as a new result array;
/// `huge`: advised as NumPy advises arrays of 4 MB and more.
struct fresh_pages {
  fresh_pages(std::size_t bytes, bool huge) : bytes_(bytes) {
    p_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) std::abort();
    if (huge) madvise(p_, bytes, MADV_HUGEPAGE);
  }
  ~fresh_pages() { munmap(p_, bytes_); }
  char* data() const { return static_cast<char*>(p_); }

 private:
  void* p_;
  std::size_t bytes_;
};

void upload_row(cudaStream_t s, std::size_t mb, int repeat) {
  const std::size_t bytes = mb << 20, first = bytes / 5;  // indptr, then indices
  std::vector<char> host(bytes, 1);
  device_buffer<char> dev(bytes);
  pinned_buffer pinned(bytes);
  std::memset(pinned.data(), 1, bytes);
  const std::vector<copy_part> parts = {
      copy_part{dev.data(), host.data(), first},
      copy_part{dev.data() + first, host.data() + first, bytes - first}};
  const double floor = time_ms(repeat, [&] {
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(dev.data(), pinned.data(), bytes, cudaMemcpyHostToDevice, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  });
  std::printf("upload %3zu MB   pinned DMA %6.3f ms (%5.1f GB/s) | staged, MiB x slots:", mb, floor,
              bytes / floor / 1e6);
  for (const copy_shape& shape : shapes(upload_copy, {2, 4, 8}, {2, 4, 8})) {
    const double t = time_ms(repeat, [&] { upload_parts(parts, s, shape); });
    std::printf("  %zux%zu %6.3f ms (%4.1f)", shape.chunk_bytes >> 20, shape.slots, t,
                bytes / t / 1e6);
  }
  std::printf("\n");
}

/// dst: 0 pages touched before, 1 fresh pages, 2 fresh huge-page-advised pages.
void download_row(cudaStream_t s, std::size_t mb, int repeat, int dst_kind) {
  const bool fresh = dst_kind > 0;
  const std::size_t bytes = mb << 20, half = bytes / 2;  // col4row, row4col
  device_buffer<char> dev(bytes);
  MATCHFLOW_CUDA_TRY(cudaMemset(dev.data(), 1, bytes));
  pinned_buffer pinned(bytes);
  std::vector<char> touched(bytes, 0);
  const double floor = time_ms(repeat, [&] {
    MATCHFLOW_CUDA_TRY(
        cudaMemcpyAsync(pinned.data(), dev.data(), bytes, cudaMemcpyDeviceToHost, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  });
  std::printf("download %3zu MB %s pinned DMA %6.3f ms (%5.1f GB/s) | staged, MiB x slots:", mb,
              dst_kind == 0   ? "touched"
              : dst_kind == 1 ? "fresh  "
                              : "fresh, THP",
              floor, bytes / floor / 1e6);
  for (const copy_shape& shape : shapes(download_copy, {1, 2, 4}, {2, 4})) {
    std::vector<double> t;
    for (int r = 0; r <= repeat; ++r) {
      fresh_pages page(fresh ? bytes : 1, dst_kind == 2);
      char* dst = fresh ? page.data() : touched.data();
      const std::vector<copy_part> parts = {copy_part{dst, dev.data(), half},
                                            copy_part{dst + half, dev.data() + half, half}};
      const auto t0 = clock_type::now();
      download_parts(parts, s, shape);
      if (r) t.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    }
    const double m = median_ms(t);
    std::printf("  %zux%zu %6.3f ms (%4.1f)", shape.chunk_bytes >> 20, shape.slots, m,
                bytes / m / 1e6);
  }
  std::printf("\n");
}

/// One row of small uploads of `kib` KiB (a single array): plain, staged
/// (forced below min_staged_copy), and narrowed from twice the bytes of
/// int64 (staged) against the plain copy of those int64 bytes.
void small_upload_row(cudaStream_t s, std::size_t kib, int repeat) {
  const std::size_t bytes = kib << 10;
  std::vector<std::int64_t> wide(bytes / 4, 1);
  device_buffer<char> dev(2 * bytes);
  const copy_part plain{dev.data(), wide.data(), bytes};
  const copy_part plain_wide{dev.data(), wide.data(), 2 * bytes};
  const copy_part narrowed{dev.data(), wide.data(), bytes, true};
  copy_shape forced = upload_copy;
  forced.staged_from = 0;
  const auto sync_after = [&](const copy_part& p) {
    copy_plain({p}, cudaMemcpyHostToDevice, s);
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  };
  const double t_plain = time_ms(repeat, [&] { sync_after(plain); });
  const double t_staged = time_ms(repeat, [&] { upload_parts({plain}, s, forced); });
  const double t_wide = time_ms(repeat, [&] { sync_after(plain_wide); });
  const double t_narrow = time_ms(repeat, [&] { upload_parts({narrowed}, s, forced); });
  std::printf(
      "small upload %5zu KiB: plain %6.3f ms, staged %6.3f ms | int64 -> int32: plain "
      "int64 %6.3f ms, narrowed while staged %6.3f ms\n",
      kib, t_plain, t_staged, t_wide, t_narrow);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 25;
  cudaStream_t s;
  MATCHFLOW_CUDA_TRY(cudaStreamCreate(&s));
  for (std::size_t mb : {17, 34, 69}) upload_row(s, mb, repeat);
  for (int dst_kind : {0, 1, 2}) download_row(s, 8, repeat, dst_kind);
  for (std::size_t kib : {256, 512, 1024, 2048, 3072, 4096, 6144}) {
    small_upload_row(s, kib, repeat);
  }
  MATCHFLOW_CUDA_TRY(cudaStreamDestroy(s));
  return 0;
}

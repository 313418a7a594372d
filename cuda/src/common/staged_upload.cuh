// Host -> device copies of large host arrays: plain for small ones, staged
// through pinned chunks filled by host threads for large ones.  Shared by
// the dense GPU assignment solvers (lsap/hungarian_dispatch.cu,
// lsap/batched_dispatch.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.cuh"

namespace matchflow::cuda {

/// Pinned host memory (RAII), for the staged cost upload.
class pinned_buffer {
 public:
  explicit pinned_buffer(std::size_t bytes) { MATCHFLOW_CUDA_TRY(cudaMallocHost(&ptr_, bytes)); }
  ~pinned_buffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  char* data() const { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

/// RAII CUDA event.
class event {
 public:
  event() { MATCHFLOW_CUDA_TRY(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

/// Host -> device copy of `n_items` items (out_size bytes each) through the
/// two pinned buffers `stage` (chunk_items items each), filled by a pool of
/// host threads (one slice of every chunk each), each chunk's DMA on `s`
/// overlapping the filling of the next.  `fill(buf, first, count)` writes
/// items [first, first + count) into the pinned `buf` and returns false to
/// abandon the copy; `after(first, count)` runs on the calling thread once
/// the chunk's DMA is queued on `s` (to queue work that reads it, e.g. a
/// kernel on another stream behind an event).  Only the calling thread
/// calls CUDA; the workers wait for `allowed` to reach their chunk, which
/// the caller raises once the DMA that last read that buffer is done.
template <class Fill, class After>
inline bool staged_copy(void* d_dst, std::size_t n_items, std::size_t out_size,
                        std::size_t chunk_items, char* const stage[2], Fill&& fill,
                        After&& after, cudaStream_t s) {
  const std::size_t n_chunks = (n_items + chunk_items - 1) / chunk_items;
  const unsigned hw = std::thread::hardware_concurrency();
  const unsigned workers = std::max(1u, std::min(8u, hw ? hw : 1u));
  event done[2];
  std::mutex m;
  std::condition_variable cv;
  std::size_t allowed = 1;     // chunks [0, allowed] may be filled
  unsigned finished[2] = {0, 0};  // workers through chunk k, slot k % 2
  bool failed = false, stop = false;
  auto work = [&](unsigned w) {
    for (std::size_t k = 0; k < n_chunks; ++k) {
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return stop || allowed >= k; });
        if (stop) return;
      }
      const std::size_t first = k * chunk_items;
      const std::size_t count = std::min(chunk_items, n_items - first);
      const std::size_t part = (count + workers - 1) / workers;
      const std::size_t a = std::min(count, w * part), e = std::min(count, a + part);
      const bool ok = a < e ? fill(stage[k & 1] + a * out_size, first + a, e - a) : true;
      {
        std::lock_guard<std::mutex> lock(m);
        failed = failed || !ok;
        ++finished[k & 1];
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  auto stop_pool = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_all();
    for (auto& t : pool) t.join();
  };
  bool ok = true;
  try {
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work, w);
    char* dst = static_cast<char*>(d_dst);
    for (std::size_t k = 0; k < n_chunks; ++k) {
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return finished[k & 1] == workers; });
        finished[k & 1] = 0;  // no worker starts chunk k + 2 before `allowed` says so
        ok = !failed;
      }
      if (!ok) break;
      const std::size_t first = k * chunk_items;
      const std::size_t count = std::min(chunk_items, n_items - first);
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(dst + first * out_size, stage[k & 1],
                                         count * out_size, cudaMemcpyHostToDevice, s));
      MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k & 1].get(), s));
      after(first, count);
      if (k + 2 < n_chunks) {
        MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k & 1].get()));  // buffer k & 1 is free
        {
          std::lock_guard<std::mutex> lock(m);
          allowed = k + 2;
        }
        cv.notify_all();
      }
    }
    stop_pool();
  } catch (...) {
    stop_pool();
    throw;
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  return ok;
}

/// Host -> device copy of the cost matrix.  A plain cudaMemcpy from pageable
/// memory runs at one CPU thread's copy speed (about 8 GB/s measured on the
/// H100 host); large matrices are staged instead (staged_copy) through two
/// pinned chunks of at most 16 MiB allocated here.
template <class Fill>
inline bool staged_upload(void* d_dst, std::size_t n_items, std::size_t out_size, Fill&& fill,
                   cudaStream_t s) {
  constexpr std::size_t max_chunk = std::size_t(16) << 20;
  const std::size_t chunk_items = std::min(max_chunk / out_size, std::max<std::size_t>(n_items, 1));
  pinned_buffer buffers[2] = {pinned_buffer(chunk_items * out_size),
                              pinned_buffer(chunk_items * out_size)};
  char* const stage[2] = {buffers[0].data(), buffers[1].data()};
  return staged_copy(d_dst, n_items, out_size, chunk_items, stage, std::forward<Fill>(fill),
                     [](std::size_t, std::size_t) {}, s);
}

/// Costs copied as they are (any element type).
template <class T>
void upload_costs(T* d_dst, const T* h_src, std::size_t n_items, cudaStream_t s) {
  const std::size_t bytes = n_items * sizeof(T);
  if (bytes < (std::size_t(128) << 20)) {
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    return;
  }
  staged_upload(d_dst, n_items, sizeof(T), [h_src](char* buf, std::size_t first, std::size_t count) {
    std::memcpy(buf, h_src + first, count * sizeof(T));
    return true;
  }, s);
}

}  // namespace matchflow::cuda

// Copies between large pageable host arrays and the device, the one home of
// both ways of making them fast:
//  * page-locking the host range in pieces (copy_h2d, copy_d2h): the graph
//    uploads of the GPU matching and maximum flow;
//  * staging through pinned chunks, the host side done by a pool of threads
//    while the DMA of the next chunk runs (staged_copy, staged_upload,
//    staged_download): the cost uploads of the dense GPU assignment solvers
//    (lsap/) and the maximum flow's result downloads (maxflow/).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/buffer.cuh"
#include "common/error.cuh"

namespace matchflow::cuda {

/// Pinned host memory (RAII), for staging.
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

/// Copies of at least this many bytes page-lock the host range first
/// (cudaHostRegister).  Measured on the H100 host (uniform 2^22, the 84 MB
/// CSR, median of 5): 8.0 ms registered, 12.8-18.3 ms pageable, 35.0 ms
/// through our own double-buffered 8 MB pinned chunks (memcpy-bound).
constexpr std::size_t large_copy = std::size_t(4) << 20;

/// Page-locks a host range for the lifetime of the object (RAII); when the
/// range cannot be registered (e.g. already registered) it stays pageable.
class host_registration {
 public:
  host_registration(const void* p, std::size_t n) {
    if (cudaHostRegister(const_cast<void*>(p), n, cudaHostRegisterDefault) == cudaSuccess) {
      p_ = const_cast<void*>(p);
    } else {
      cudaGetLastError();  // not sticky: clear it, the copy goes pageable
    }
  }
  ~host_registration() {
    if (p_) cudaHostUnregister(p_);
  }
  host_registration(const host_registration&) = delete;
  host_registration& operator=(const host_registration&) = delete;

 private:
  void* p_ = nullptr;
};

/// Large copies are page-locked and sent in pieces of about this many bytes,
/// cut at page boundaries (no page is registered twice): each piece's DMA
/// runs while the next piece is page-locked, instead of after the whole
/// range is.  Not measured yet against one registration of the whole range
/// (benchmarks/call_overhead.py shows the transfer time).
constexpr std::size_t copy_piece = std::size_t(16) << 20;
constexpr std::uintptr_t page_bytes = 4096;

template <class T>
inline void copy_h2d(T* d_dst, const T* h_src, std::size_t n, cudaStream_t s) {
  const std::size_t bytes = n * sizeof(T);
  if (bytes == 0) return;
  if (bytes < large_copy) {
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  const char* src = reinterpret_cast<const char*>(h_src);
  char* dst = reinterpret_cast<char*>(d_dst);
  const auto base = reinterpret_cast<std::uintptr_t>(src);
  std::vector<std::unique_ptr<host_registration>> pieces;
  for (std::size_t done = 0; done < bytes;) {
    const std::uintptr_t cut = (base + done + copy_piece) & ~(page_bytes - 1);
    const std::size_t end = std::min<std::size_t>(bytes, cut - base);
    pieces.push_back(std::make_unique<host_registration>(src + done, end - done));
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(dst + done, src + done, end - done,
                                       cudaMemcpyHostToDevice, s));
    done = end;
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // before the registrations end
}

template <class T>
inline void copy_d2h(T* h_dst, const device_buffer<T>& src, std::size_t n, cudaStream_t s) {
  const std::size_t bytes = n * sizeof(T);
  if (bytes == 0) return;
  if (bytes < large_copy) {
    src.copy_to_host(h_dst, n, s);
    return;
  }
  host_registration reg(h_dst, bytes);
  src.copy_to_host(h_dst, n, s);
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));  // before the registration ends
}

/// Pinned staging kept for the process (never freed: pinned allocation costs
/// milliseconds, and a static's destructor would run after the CUDA
/// runtime's).  A lease holds it, grown to at least `bytes`, for one caller
/// at a time; a concurrent caller gets a buffer of its own.
class staging_lease {
 public:
  explicit staging_lease(std::size_t bytes) : lock_(kept().m, std::try_to_lock) {
    if (!lock_.owns_lock()) {
      own_ = std::make_unique<pinned_buffer>(bytes);
      base_ = own_->data();
      return;
    }
    if (kept().bytes < bytes) {
      kept().buffer.reset();
      kept().bytes = 0;
      kept().buffer = std::make_unique<pinned_buffer>(bytes);
      kept().bytes = bytes;
    }
    base_ = kept().buffer->data();
  }
  char* data() const { return base_; }

 private:
  struct cache {
    std::mutex m;
    std::unique_ptr<pinned_buffer> buffer;
    std::size_t bytes = 0;
  };
  static cache& kept() {
    static auto* c = new cache;
    return *c;
  }
  std::unique_lock<std::mutex> lock_;
  std::unique_ptr<pinned_buffer> own_;
  char* base_ = nullptr;
};

/// Host threads of a staged copy unless the caller asks otherwise.
constexpr unsigned default_copy_workers = 8;

/// Host threads (at most `max_workers`, and at most the hardware's) that
/// work through a sequence of chunks in step: each runs `work(k, w,
/// workers)` (its share w of chunk k; false abandons the copy) once the
/// caller has allowed chunk k, and the caller waits for all of them to be
/// through a chunk before reusing its buffer.  Only the caller calls CUDA.
class chunk_workers {
 public:
  template <class Work>
  chunk_workers(std::size_t n_chunks, std::size_t allowed, Work work,
                unsigned max_workers = default_copy_workers)
      : allowed_(allowed) {
    const unsigned hw = std::thread::hardware_concurrency();
    workers_ = std::max(1u, std::min(max_workers, hw ? hw : 1u));
    try {
      for (unsigned w = 0; w < workers_; ++w) {
        pool_.emplace_back([this, n_chunks, work, w] {
          for (std::size_t k = 0; k < n_chunks; ++k) {
            {
              std::unique_lock<std::mutex> lock(m_);
              cv_.wait(lock, [&] { return stop_ || allowed_ > k; });
              if (stop_) return;
            }
            const bool ok = work(k, w, workers_);
            {
              std::lock_guard<std::mutex> lock(m_);
              failed_ = failed_ || !ok;
              ++finished_[k & 1];
            }
            cv_.notify_all();
          }
        });
      }
    } catch (...) {
      stop();
      throw;
    }
  }
  ~chunk_workers() { stop(); }
  chunk_workers(const chunk_workers&) = delete;
  chunk_workers& operator=(const chunk_workers&) = delete;

  /// Chunks below `limit` may be worked on.
  void allow(std::size_t limit) {
    {
      std::lock_guard<std::mutex> lock(m_);
      allowed_ = limit;
    }
    cv_.notify_all();
  }
  /// Waits until every worker is through chunk k (no worker starts chunk
  /// k + 2 before allow() says so); false when one abandoned the copy.
  bool wait(std::size_t k) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return finished_[k & 1] == workers_; });
    finished_[k & 1] = 0;
    return !failed_;
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : pool_) t.join();
    pool_.clear();
  }

  unsigned workers_ = 1;
  std::mutex m_;
  std::condition_variable cv_;
  std::size_t allowed_;
  unsigned finished_[2] = {0, 0};  // workers through chunk k, slot k % 2
  bool failed_ = false, stop_ = false;
  std::vector<std::thread> pool_;
};

/// The share [first, end) of worker w in a chunk of `count` items.
inline std::pair<std::size_t, std::size_t> worker_share(std::size_t count, unsigned w,
                                                        unsigned workers) {
  const std::size_t part = (count + workers - 1) / workers;
  const std::size_t first = std::min(count, w * part);
  return {first, std::min(count, first + part)};
}

/// Host -> device copy of `n_items` items (out_size bytes each) through the
/// two pinned buffers `stage` (chunk_items items each), filled by
/// chunk_workers (one slice of every chunk each), each chunk's DMA on `s`
/// overlapping the filling of the next.  `fill(buf, first, count)` writes
/// items [first, first + count) into the pinned `buf` and returns false to
/// abandon the copy; `after(first, count)` runs on the calling thread once
/// the chunk's DMA is queued on `s` (to queue work that reads it, e.g. a
/// kernel on another stream behind an event).  At most `max_workers` host
/// threads fill.  Returns the number of items copied: n_items, or where the
/// copy was abandoned, the chunks before the one it stopped at.
template <class Fill, class After>
inline std::size_t staged_copy(void* d_dst, std::size_t n_items, std::size_t out_size,
                               std::size_t chunk_items, char* const stage[2], Fill&& fill,
                               After&& after, cudaStream_t s,
                               unsigned max_workers = default_copy_workers) {
  const std::size_t n_chunks = (n_items + chunk_items - 1) / chunk_items;
  event done[2];
  std::size_t copied = 0;
  {
    chunk_workers pool(n_chunks, 2, [&](std::size_t k, unsigned w, unsigned workers) {
      const std::size_t first = k * chunk_items;
      const auto [a, e] = worker_share(std::min(chunk_items, n_items - first), w, workers);
      return a < e ? fill(stage[k & 1] + a * out_size, first + a, e - a) : true;
    }, max_workers);
    char* dst = static_cast<char*>(d_dst);
    for (std::size_t k = 0; k < n_chunks; ++k) {
      if (!pool.wait(k)) break;
      const std::size_t first = k * chunk_items;
      const std::size_t count = std::min(chunk_items, n_items - first);
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(dst + first * out_size, stage[k & 1],
                                         count * out_size, cudaMemcpyHostToDevice, s));
      copied = first + count;
      MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k & 1].get(), s));
      after(first, count);
      if (k + 2 < n_chunks) {
        MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k & 1].get()));  // buffer k & 1 is free
        pool.allow(k + 3);
      }
    }
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  return copied;
}

/// Device -> host copies of at least this many bytes are staged.
constexpr std::size_t min_staged_download = std::size_t(4) << 20;
constexpr std::size_t download_chunk = std::size_t(8) << 20;

/// Device -> host copy of `bytes` bytes into pageable host memory, returning
/// once it is done.  A plain cudaMemcpy to pageable memory runs at one CPU
/// thread's copy speed, and that thread also takes the page faults of a
/// fresh destination (the result arrays are new); large copies go instead
/// through two kept pinned chunks (staging_lease), each chunk's DMA
/// overlapping chunk_workers' copying of the previous one out.
inline void staged_download(void* h_dst, const void* d_src, std::size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  if (bytes < min_staged_download) {
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, s));
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    return;
  }
  const std::size_t n_chunks = (bytes + download_chunk - 1) / download_chunk;
  staging_lease lease(2 * download_chunk);
  char* const stage[2] = {lease.data(), lease.data() + download_chunk};
  const char* src = static_cast<const char*>(d_src);
  char* dst = static_cast<char*>(h_dst);
  event done[2];
  auto queue = [&](std::size_t k) {
    const std::size_t first = k * download_chunk;
    MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(stage[k & 1], src + first,
                                       std::min(download_chunk, bytes - first),
                                       cudaMemcpyDeviceToHost, s));
    MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k & 1].get(), s));
  };
  chunk_workers pool(n_chunks, 0, [&](std::size_t k, unsigned w, unsigned workers) {
    const std::size_t first = k * download_chunk;
    const auto [a, e] = worker_share(std::min(download_chunk, bytes - first), w, workers);
    if (a < e) std::memcpy(dst + first + a, stage[k & 1] + a, e - a);
    return true;
  });
  queue(0);
  if (n_chunks > 1) queue(1);
  for (std::size_t k = 0; k < n_chunks; ++k) {
    MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k & 1].get()));  // chunk k is in stage k & 1
    pool.allow(k + 1);
    pool.wait(k);
    if (k + 2 < n_chunks) queue(k + 2);  // stage k & 1 has been copied out
  }
}

/// How a staged upload runs: the pinned chunk size and the host threads
/// that fill the chunks (benchmarks/upload_sweep.cu measures others).
struct upload_shape {
  std::size_t chunk_bytes = std::size_t(16) << 20;
  unsigned workers = default_copy_workers;
};

/// Host -> device copy of the cost matrix.  A plain cudaMemcpy from pageable
/// memory runs at one CPU thread's copy speed (about 8 GB/s measured on the
/// H100 host); large matrices are staged instead (staged_copy) through two
/// pinned chunks of the kept staging (staging_lease): allocating and freeing
/// 32 MiB of pinned memory on every call costs milliseconds (registering and
/// unregistering 17 MB took 1.3 ms on the H100 host, host_link.py).
/// Returns staged_copy's count of items copied.
template <class Fill>
inline std::size_t staged_upload(void* d_dst, std::size_t n_items, std::size_t out_size,
                                 Fill&& fill, cudaStream_t s, upload_shape shape = {}) {
  const std::size_t chunk_items = std::min(std::max<std::size_t>(shape.chunk_bytes / out_size, 1),
                                           std::max<std::size_t>(n_items, 1));
  const std::size_t chunk_bytes = chunk_items * out_size;
  staging_lease lease(2 * chunk_bytes);
  char* const stage[2] = {lease.data(), lease.data() + chunk_bytes};
  return staged_copy(d_dst, n_items, out_size, chunk_items, stage, std::forward<Fill>(fill),
                     [](std::size_t, std::size_t) {}, s, shape.workers);
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

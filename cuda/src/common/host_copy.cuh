// Copies between large pageable host arrays and the device, the one home of
// making them fast: staging through pinned chunks kept for the process, the
// host side done by a pool of threads while the DMA of the previous chunk
// runs.  Users: the graph uploads and result downloads of the GPU matching
// (upload_parts, download_parts: all of a call's arrays in one pass), the
// maximum flow's network upload and result downloads (maxflow/), the cost
// uploads of the dense GPU assignment solvers (staged_copy, staged_upload;
// lsap/).
//
// Why not page-lock the caller's arrays instead (cudaHostRegister)?  On the
// H100 host (benchmarks/host_link.py) registering and unregistering costs
// more than the DMA it enables: 1.27 ms for 17 MB, 3.9 ms for 69 MB, against
// 0.34 ms and 1.36 ms of pinned DMA at 52-55 GB/s; and pageable copies run
// at 8-11 GB/s (one CPU thread's copy).  Filling kept pinned chunks with
// several threads costs neither.  Host arrays that are page-locked already
// (result arrays from pinned_results.cu, kept between calls) skip the
// staging: one DMA each.
#pragma once

#include <cuda_runtime.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
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
#include "matchflow/detail/per_process.hpp"

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

/// Host threads kept for the process: starting and joining a staged copy's
/// workers costs about 0.2 ms per copy (8 threads, measured on the 2-core
/// development VM), a sizeable part of what staging saves on a graph of a
/// few MB.  start() runs a task at once, on an idle kept thread or a new one
/// (never queued behind another task: the tasks of a copy wait for each
/// other, and tasks of two concurrent copies must not starve each other).
/// Threads are detached and never end; after fork() the child starts a pool
/// of its own (the parent's threads are not in it).
class kept_threads {
 public:
  static void start(std::function<void()> task) {
    state& st = current();
    std::lock_guard<std::mutex> lock(st.m);
    st.tasks.push_back(std::move(task));
    if (st.idle > 0) {
      --st.idle;  // that thread takes the task
      st.cv.notify_one();
      return;
    }
    try {
      std::thread([&st] { serve(st); }).detach();
    } catch (...) {
      st.tasks.pop_back();
      throw;
    }
  }

 private:
  struct state {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> tasks;
    unsigned idle = 0;  // threads waiting for a task and not yet given one
  };
  static state& current() { return matchflow::detail::per_process<state>(); }
  static void serve(state& st) {
    std::unique_lock<std::mutex> lock(st.m);
    for (;;) {
      st.cv.wait(lock, [&st] { return !st.tasks.empty(); });
      std::function<void()> task = std::move(st.tasks.front());
      st.tasks.pop_front();
      lock.unlock();
      task();  // tasks do not throw (chunk_workers' work is memcpy)
      lock.lock();
      ++st.idle;
    }
  }
};

/// Host threads of a staged copy unless the caller asks otherwise.
constexpr unsigned default_copy_workers = 8;

/// Pinned staging of a copy: `slots` chunks of `slot_bytes` each, used
/// round robin (chunk k in slot k % slots), so that up to `slots` chunks are
/// in flight at once.
struct staging {
  char* base;
  std::size_t slot_bytes;
  std::size_t slots;
  char* slot(std::size_t k) const { return base + (k % slots) * slot_bytes; }
};

/// Host threads (at most `max_workers` and the hardware's, from
/// kept_threads) and the caller that work through a sequence of chunks in
/// step, each chunk cut into `pieces` pieces: whoever is free takes the next
/// piece (one shared counter, pieces taken in order) and runs
/// `work(k, piece, pieces)` on it once the caller has allowed chunk k (false
/// abandons the copy).  The caller's wait(k) takes pieces of chunk k itself
/// until none is left, then waits for the rest: so a chunk is never held up
/// by a worker that has not woken yet, which with a fixed share per worker
/// made every chunk as slow as the last thread to wake.  At most `slots`
/// chunks are allowed beyond the last one waited for (their completion
/// counts are kept by slot).  Only the caller calls CUDA.  The hand-offs
/// spin before they sleep: waking sleeping threads through a condition
/// variable cost about 0.1 ms a chunk on the H100 host
/// (benchmarks/copy_sweep.cu), as much as a 4 MiB chunk's DMA, while a
/// chunk's wait is mostly shorter than the spin.
class chunk_workers {
 public:
  template <class Work>
  chunk_workers(std::size_t n_chunks, std::size_t pieces, std::size_t slots, std::size_t allowed,
                Work work, unsigned max_workers = default_copy_workers)
      : work_(std::move(work)),
        pieces_(std::max<std::size_t>(pieces, 1)),
        slots_(std::max<std::size_t>(slots, 1)),
        total_(n_chunks * pieces_),
        allowed_(allowed),
        done_(new std::atomic<std::size_t>[slots_]) {
    for (std::size_t i = 0; i < slots_; ++i) done_[i].store(0);
    const unsigned hw = std::thread::hardware_concurrency();
    const unsigned workers = std::max(1u, std::min(max_workers, hw ? hw : 1u));
    try {
      for (unsigned w = 0; w < workers; ++w) {
        {
          std::lock_guard<std::mutex> lock(m_);
          ++running_;
        }
        try {
          kept_threads::start([this] {
            run();
            std::lock_guard<std::mutex> lock(m_);  // notify under the lock: *this may
            --running_;                            // be gone once stop() sees 0
            cv_.notify_all();
          });
        } catch (...) {
          std::lock_guard<std::mutex> lock(m_);
          --running_;
          throw;
        }
      }
    } catch (...) {
      stop();
      throw;
    }
  }
  ~chunk_workers() { stop(); }
  chunk_workers(const chunk_workers&) = delete;
  chunk_workers& operator=(const chunk_workers&) = delete;

  /// Chunks below `limit` may be worked on (at most `slots` past the last
  /// one waited for).
  void allow(std::size_t limit) {
    allowed_.store(limit);
    wake();
  }
  /// Works on chunk k (allowed) until every piece of it is done; false when
  /// one abandoned the copy.
  bool wait(std::size_t k) {
    std::size_t g = next_.load();
    while (g < total_ && g / pieces_ <= k) {
      if (next_.compare_exchange_weak(g, g + 1)) {
        do_piece(g);
        g = next_.load();
      }
    }
    std::atomic<std::size_t>& done = done_[k % slots_];
    await([&] { return done.load() == pieces_; });
    done.store(0);
    return !failed_.load();
  }

 private:
  /// How long a waiting thread spins before it sleeps.
  static constexpr auto spin_time = std::chrono::microseconds(200);

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  /// Returns once ready() holds: spins for spin_time, then sleeps on cv_
  /// (counted in sleepers_, so that wake() notifies only when someone
  /// sleeps; the counter and the state are sequentially consistent
  /// atomics, so a wake-up cannot fall between a sleeper's test and its
  /// sleep).
  template <class Ready>
  void await(Ready ready) {
    const auto until = std::chrono::steady_clock::now() + spin_time;
    for (unsigned i = 1;; ++i) {
      if (ready()) return;
      pause();
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) break;
    }
    std::unique_lock<std::mutex> lock(m_);
    ++sleepers_;
    cv_.wait(lock, ready);
    --sleepers_;
  }
  void wake() {
    if (sleepers_.load() == 0) return;
    std::lock_guard<std::mutex> lock(m_);
    cv_.notify_all();
  }

  /// Piece g (of chunk g / pieces_), then its chunk's count; the piece
  /// that completes a chunk wakes the caller.
  void do_piece(std::size_t g) {
    const std::size_t k = g / pieces_;
    if (!work_(k, g % pieces_, pieces_)) failed_.store(true);
    if (done_[k % slots_].fetch_add(1) + 1 == pieces_) wake();
  }
  /// A worker: takes the next piece, waits until its chunk is allowed,
  /// does it; leaves when no piece is left or on stop().
  void run() {
    for (;;) {
      const std::size_t g = next_.fetch_add(1);
      if (g >= total_) return;
      await([&] { return stop_.load() || allowed_.load() > g / pieces_; });
      if (stop_.load()) return;
      do_piece(g);
    }
  }
  /// Stops the workers (those not through their pieces leave at once) and
  /// waits until none is running.
  void stop() {
    std::unique_lock<std::mutex> lock(m_);
    stop_.store(true);
    cv_.notify_all();
    cv_.wait(lock, [&] { return running_ == 0; });
  }

  std::function<bool(std::size_t, std::size_t, std::size_t)> work_;
  const std::size_t pieces_, slots_, total_;
  std::mutex m_;
  std::condition_variable cv_;
  std::atomic<std::size_t> next_{0};  // the next piece to take, over all chunks
  std::atomic<std::size_t> allowed_;
  std::unique_ptr<std::atomic<std::size_t>[]> done_;  // pieces done of chunk k, slot k % slots
  std::atomic<unsigned> sleepers_{0};                 // threads asleep in await
  unsigned running_ = 0;                              // tasks started and not yet through (m_)
  std::atomic<bool> failed_{false}, stop_{false};
};

/// The share [first, end) of piece w of `parts` in a chunk of `count` items.
inline std::pair<std::size_t, std::size_t> piece_share(std::size_t count, std::size_t w,
                                                       std::size_t parts) {
  const std::size_t part = (count + parts - 1) / parts;
  const std::size_t first = std::min(count, w * part);
  return {first, std::min(count, first + part)};
}

/// Pieces a chunk of `bytes` is cut into: about 256 KiB each (a few tens
/// of microseconds of one thread's copy, so that early threads take the
/// work of late ones), at most 64.
inline std::size_t pieces_for(std::size_t bytes) {
  return std::clamp<std::size_t>(bytes >> 18, 1, 64);
}

/// The pipeline of every staged host -> device copy: `n_items` items
/// (out_size bytes each) through the pinned ring `stage` (chunk_items items
/// a slot), filled by chunk_workers and the caller, each chunk's DMA on `s`
/// overlapping the filling of the next ones.  `fill(buf, first, count)`
/// writes items [first, first + count) into the pinned `buf` and returns
/// false to abandon the copy; `send(buf, first, count)` runs on the calling
/// thread once chunk [first, first + count) is in `buf`, and queues its
/// DMA(s) on `s` (and any work that reads them).  At most `max_workers` host
/// threads fill besides the caller.  Returns once every DMA is done, the
/// number of items sent: n_items, or where the copy was abandoned, the
/// chunks before the one it stopped at.
template <class Fill, class Send>
inline std::size_t staged_send(std::size_t n_items, std::size_t out_size,
                               std::size_t chunk_items, const staging& stage, Fill&& fill,
                               Send&& send, cudaStream_t s,
                               unsigned max_workers = default_copy_workers) {
  const std::size_t n_chunks = (n_items + chunk_items - 1) / chunk_items;
  const std::size_t slots = std::max<std::size_t>(1, std::min(stage.slots, n_chunks));
  std::vector<event> done(slots);
  std::size_t sent = 0;
  {
    chunk_workers pool(n_chunks, pieces_for(chunk_items * out_size), slots, slots,
                       [&](std::size_t k, std::size_t piece, std::size_t pieces) {
      const std::size_t first = k * chunk_items;
      const auto [a, e] = piece_share(std::min(chunk_items, n_items - first), piece, pieces);
      return a < e ? fill(stage.slot(k) + a * out_size, first + a, e - a) : true;
    }, max_workers);
    for (std::size_t k = 0; k < n_chunks; ++k) {
      if (!pool.wait(k)) break;
      const std::size_t first = k * chunk_items;
      const std::size_t count = std::min(chunk_items, n_items - first);
      send(static_cast<const char*>(stage.slot(k)), first, count);
      sent = first + count;
      MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k % slots].get(), s));
      if (k + slots < n_chunks) {
        MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k % slots].get()));  // its slot is free
        pool.allow(k + slots + 1);
      }
    }
  }
  MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
  return sent;
}

/// staged_send into one device array `d_dst`; `after(first, count)` runs on
/// the calling thread once the chunk's DMA is queued on `s` (to queue work
/// that reads it, e.g. a kernel on another stream behind an event).
template <class Fill, class After>
inline std::size_t staged_copy(void* d_dst, std::size_t n_items, std::size_t out_size,
                               std::size_t chunk_items, const staging& stage, Fill&& fill,
                               After&& after, cudaStream_t s,
                               unsigned max_workers = default_copy_workers) {
  char* dst = static_cast<char*>(d_dst);
  return staged_send(
      n_items, out_size, chunk_items, stage, std::forward<Fill>(fill),
      [&](const char* buf, std::size_t first, std::size_t count) {
        MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(dst + first * out_size, buf, count * out_size,
                                           cudaMemcpyHostToDevice, s));
        after(first, count);
      },
      s, max_workers);
}

/// One array of a copy: `bytes` bytes from `src` to `dst` (one of them in
/// host memory, the other on the device, as the copying function says).
struct copy_part {
  void* dst;
  const void* src;
  std::size_t bytes;
};

/// Calls f(part, at, length, out) for each piece of the parts' concatenation
/// that lies in [begin, end): bytes [at, at + length) of `part`, at offset
/// `out` from `begin`.
template <class F>
inline void for_each_piece(const std::vector<copy_part>& parts, std::size_t begin,
                           std::size_t end, F&& f) {
  std::size_t start = 0;  // offset of the part in the concatenation
  for (const copy_part& p : parts) {
    const std::size_t lo = std::max(begin, start), hi = std::min(end, start + p.bytes);
    if (lo < hi) f(p, lo - start, hi - lo, lo - begin);
    start += p.bytes;
    if (start >= end) return;
  }
}

inline std::size_t total_bytes(const std::vector<copy_part>& parts) {
  std::size_t total = 0;
  for (const copy_part& p : parts) total += p.bytes;
  return total;
}

/// Whether host memory at `p` is page-locked (cudaHostRegister,
/// cudaMallocHost; e.g. the result arrays of pinned_results.cu): a DMA
/// reaches it with no staging.
inline bool page_locked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: pageable memory, as far as a copy goes
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

/// Copies of at least this many bytes in all are staged; smaller ones are
/// plain cudaMemcpyAsync calls (starting the worker threads costs more).
constexpr std::size_t min_staged_copy = std::size_t(4) << 20;
/// How a staged copy runs: the pinned chunk, the slots of the ring (chunks
/// in flight) and the host threads besides the caller.
struct copy_shape {
  std::size_t chunk_bytes;
  std::size_t slots;
  unsigned workers;
};
/// The matching's and the flow's graph uploads and result downloads, from
/// benchmarks/copy_sweep.cu (`copy-sweep.txt`, H100 host, medians of 15, two
/// rounds): uploads of 17 / 34 / 69 MB in 8 MiB chunks and 4 slots took
/// 0.69-0.87 / 1.13 / 1.93-2.19 ms (the two-slot build before, 8 MiB
/// chunks: 0.83-1.09 / 1.38-2.18 / 2.28-2.36), other shapes within the
/// host's noise; the 8 MB download in 2 MiB chunks and 4 slots 0.40 ms
/// into mapped pages (before: 0.62-0.86 ms at its best chunk).  The DMA
/// alone takes 0.33 / 0.66 / 1.35 and 0.16 ms: a staged copy reads the
/// source, writes the pinned chunk and the DMA reads it again, all through
/// the host's memory.
constexpr copy_shape upload_copy{std::size_t(8) << 20, 4, default_copy_workers};
constexpr copy_shape download_copy{std::size_t(2) << 20, 4, default_copy_workers};

/// Maps the pages of host arrays that a later copy writes, on a kept
/// thread, while the caller goes on (the solve runs); joined when
/// destroyed.  A call's result arrays are fresh pages, and faulting them in
/// is most of a download's host side: 8 MB took 0.8-1.2 ms to download into
/// fresh pages (huge-page-advised as NumPy's, or not) against 0.5 ms into
/// mapped ones (benchmarks/copy_sweep.cu, H100 host).  MADV_POPULATE_WRITE
/// (Linux 5.14) maps pages without touching their content, so the task may
/// overlap anything, the copy included; where the kernel lacks it, nothing
/// is done.
class populate_ahead {
 public:
  populate_ahead() = default;
  ~populate_ahead() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return !running_; });
  }
  populate_ahead(const populate_ahead&) = delete;
  populate_ahead& operator=(const populate_ahead&) = delete;

  /// Starts mapping `parts`' destinations (host memory), if large enough
  /// to be a staged copy.
  void start(std::vector<copy_part> parts) {
    if (total_bytes(parts) < min_staged_copy) return;
    std::lock_guard<std::mutex> lock(m_);
    if (running_) return;
    running_ = true;
    try {
      kept_threads::start([this, parts = std::move(parts)] {
        for (const copy_part& p : parts) populate(p.dst, p.bytes);
        std::lock_guard<std::mutex> done(m_);  // notify under the lock: *this may
        running_ = false;                      // be gone once the destructor sees it
        cv_.notify_all();
      });
    } catch (...) {
      running_ = false;  // no thread: the copy faults the pages in itself
    }
  }

 private:
  /// The whole pages inside [p, p + bytes).
  static void populate(void* p, std::size_t bytes) {
#ifdef __linux__
    constexpr int populate_write = 23;  // MADV_POPULATE_WRITE, where <sys/mman.h> predates it
    const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
    const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
    if (a < e) ::madvise(reinterpret_cast<void*>(a), e - a, populate_write);  // best effort
#else
    (void)p;
    (void)bytes;
#endif
  }

  std::mutex m_;
  std::condition_variable cv_;
  bool running_ = false;
};

/// Each of `parts` by one cudaMemcpyAsync of `kind` on `s` (small copies).
inline void copy_plain(const std::vector<copy_part>& parts, cudaMemcpyKind kind,
                       cudaStream_t s) {
  for (const copy_part& p : parts) {
    if (p.bytes) MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(p.dst, p.src, p.bytes, kind, s));
  }
}

/// The parts of a download whose destinations are pageable (page-locked
/// ones are mapped already, and take one DMA each).
inline std::vector<copy_part> pageable_destinations(std::vector<copy_part> parts) {
  parts.erase(std::remove_if(parts.begin(), parts.end(),
                             [](const copy_part& p) { return page_locked(p.dst); }),
              parts.end());
  return parts;
}

/// Queues on `s` the copies of `parts` whose host side (dst for
/// device -> host, src for host -> device) is page-locked; returns the rest.
inline std::vector<copy_part> copy_page_locked(const std::vector<copy_part>& parts,
                                               cudaMemcpyKind kind, cudaStream_t s) {
  std::vector<copy_part> rest;
  for (const copy_part& p : parts) {
    const void* host = kind == cudaMemcpyDeviceToHost ? p.dst : p.src;
    if (p.bytes == 0 || !page_locked(host)) {
      rest.push_back(p);
    } else {
      MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(p.dst, p.src, p.bytes, kind, s));
    }
  }
  return rest;
}

/// Host -> device copy of all of `parts` (dst on the device, src in host
/// memory): page-locked sources by one DMA each, the others as one staged
/// pass through a ring of kept pinned chunks (staging_lease), or plain
/// copies when small.  Returns once the host arrays may be reused.
inline void upload_parts(const std::vector<copy_part>& all_parts, cudaStream_t s,
                         copy_shape shape = upload_copy) {
  const std::vector<copy_part> parts = copy_page_locked(all_parts, cudaMemcpyHostToDevice, s);
  const std::size_t total = total_bytes(parts);
  if (total < min_staged_copy) {
    copy_plain(parts, cudaMemcpyHostToDevice, s);  // pageable: returns once staged
    if (parts.size() < all_parts.size()) MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    return;
  }
  staging_lease lease(shape.slots * shape.chunk_bytes);
  staged_send(
      total, 1, shape.chunk_bytes, staging{lease.data(), shape.chunk_bytes, shape.slots},
      [&parts](char* buf, std::size_t first, std::size_t count) {
        for_each_piece(parts, first, first + count,
                       [buf](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
                         std::memcpy(buf + out, static_cast<const char*>(p.src) + at, n);
                       });
        return true;
      },
      [&parts, s](const char* buf, std::size_t first, std::size_t count) {
        for_each_piece(parts, first, first + count,
                       [buf, s](const copy_part& p, std::size_t at, std::size_t n,
                                std::size_t out) {
                         MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(p.dst) + at,
                                                            buf + out, n,
                                                            cudaMemcpyHostToDevice, s));
                       });
      },
      s, shape.workers);
}

/// Device -> host copy of all of `parts` (src on the device, dst in host
/// memory), returning once it is done.  Page-locked destinations take one
/// DMA each (pinned_results.cu).  A plain cudaMemcpy to pageable
/// memory runs at one CPU thread's copy speed, and that thread also takes
/// the page faults of a fresh destination (result arrays are new); large
/// copies go instead through a ring of kept pinned chunks (staging_lease),
/// the DMAs of the next chunks overlapping chunk_workers' (and the
/// caller's) copying of one out.
inline void download_parts(const std::vector<copy_part>& all_parts, cudaStream_t s,
                           copy_shape shape = download_copy) {
  const std::vector<copy_part> parts = copy_page_locked(all_parts, cudaMemcpyDeviceToHost, s);
  const std::size_t total = total_bytes(parts);
  if (total < min_staged_copy) {
    copy_plain(parts, cudaMemcpyDeviceToHost, s);
    MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    return;
  }
  const std::size_t chunk = shape.chunk_bytes;
  const std::size_t n_chunks = (total + chunk - 1) / chunk;
  const std::size_t slots = std::max<std::size_t>(1, std::min(shape.slots, n_chunks));
  staging_lease lease(slots * chunk);
  const staging stage{lease.data(), chunk, slots};
  std::vector<event> done(slots);
  auto queue = [&](std::size_t k) {
    const std::size_t first = k * chunk;
    const std::size_t end = std::min(total, first + chunk);
    for_each_piece(parts, first, end,
                   [&](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
                     MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(stage.slot(k) + out,
                                                        static_cast<const char*>(p.src) + at, n,
                                                        cudaMemcpyDeviceToHost, s));
                   });
    MATCHFLOW_CUDA_TRY(cudaEventRecord(done[k % slots].get(), s));
  };
  chunk_workers pool(n_chunks, pieces_for(chunk), slots, 0,
                     [&](std::size_t k, std::size_t piece, std::size_t pieces) {
    const std::size_t first = k * chunk;
    const auto share = piece_share(std::min(chunk, total - first), piece, pieces);
    const char* buf = stage.slot(k) + share.first;  // (a structured binding can't be captured)
    for_each_piece(parts, first + share.first, first + share.second,
                   [&](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
                     std::memcpy(static_cast<char*>(p.dst) + at, buf + out, n);
                   });
    return true;
  }, shape.workers);
  for (std::size_t k = 0; k < slots; ++k) queue(k);
  for (std::size_t k = 0; k < n_chunks; ++k) {
    MATCHFLOW_CUDA_TRY(cudaEventSynchronize(done[k % slots].get()));  // chunk k is in its slot
    pool.allow(k + 1);
    pool.wait(k);
    if (k + slots < n_chunks) queue(k + slots);  // its slot has been copied out
  }
}

/// download_parts of one array.
inline void staged_download(void* h_dst, const void* d_src, std::size_t bytes, cudaStream_t s) {
  download_parts({copy_part{h_dst, d_src, bytes}}, s);
}

/// The dense assignment's cost upload (benchmarks/upload_sweep.cu measures
/// others).  12 threads: with the spinning hand-offs, 800 MB of int64 costs
/// went up as int16 in 16.7-17.0 ms with 12 threads and 16 MiB chunks
/// against 21.5 ms with 8 (`upload-sweep.txt`, H100 host); 16 threads were
/// slower again.
constexpr copy_shape cost_upload_copy{std::size_t(16) << 20, 2, 12};

/// Host -> device copy of the cost matrix.  A plain cudaMemcpy from pageable
/// memory runs at one CPU thread's copy speed (about 8 GB/s measured on the
/// H100 host); large matrices are staged instead (staged_copy) through a
/// ring of pinned chunks of the kept staging (staging_lease).  Returns
/// staged_copy's count of items copied.
template <class Fill>
inline std::size_t staged_upload(void* d_dst, std::size_t n_items, std::size_t out_size,
                                 Fill&& fill, cudaStream_t s,
                                 copy_shape shape = cost_upload_copy) {
  const std::size_t chunk_items = std::min(std::max<std::size_t>(shape.chunk_bytes / out_size, 1),
                                           std::max<std::size_t>(n_items, 1));
  const std::size_t chunk_bytes = chunk_items * out_size;
  staging_lease lease(shape.slots * chunk_bytes);
  return staged_copy(d_dst, n_items, out_size, chunk_items,
                     staging{lease.data(), chunk_bytes, shape.slots}, std::forward<Fill>(fill),
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

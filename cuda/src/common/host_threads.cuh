// Host threads for the staged copies (host_copy.cuh): threads kept for the
// process, and the workers that fill a copy's pinned chunks beside the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "matchflow/detail/per_process.hpp"

namespace matchflow::cuda {

/// Host threads kept for the process: starting and joining a staged copy's
/// workers costs a sizeable part of what staging saves on a graph of a few
/// MB (benchmarks/NOTES.md, "Host copies").  start() runs a task at once, on an idle kept thread or
/// a new one (never queued behind another task: the tasks of a copy wait for each other, and tasks
/// of two concurrent copies must not starve each other). Threads are detached and never end; after
/// fork() the child starts a pool of its own (the parent's threads are not in it).
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
/// variable cost as much as a 4 MiB chunk's DMA, while a chunk's wait is
/// mostly shorter than the spin (NOTES.md, "Host copies").
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

}  // namespace matchflow::cuda

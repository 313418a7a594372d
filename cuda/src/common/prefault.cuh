// Paging in a download's fresh host arrays while the GPU computes.
//
// A staged download into pages the process has never touched runs at a
// quarter of the speed of one into touched pages: each first write is a
// page fault (benchmarks/NOTES.md, "Host copies").  The flow matrix comes back into fresh
// arrays of 12 bytes an entry (flow_matrix.cu), after phases during which
// the host threads only wait.  A host_prefault writes one byte of every
// page of the ranges it is given, on kept host threads, front first, until
// finish(): then whatever it reached downloads at the touched speed, and a
// page it touched that the download does not fill is released with the
// untouched tail when the caller shrinks the arrays (_core.pyx,
// _shrink_matrix).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "common/host_copy.cuh"

namespace matchflow::cuda {

/// Host memory [data, data + bytes) whose contents the caller will overwrite.
struct host_range {
  void* data;
  std::size_t bytes;
};

class host_prefault {
 public:
  /// Starts on at most `max_workers` kept threads, leaving one hardware
  /// thread to the caller (none on a machine of one or two).
  host_prefault(std::vector<host_range> ranges, unsigned max_workers = default_copy_workers)
      : work_(std::make_shared<shared>()) {
    work_->ranges = std::move(ranges);
    const unsigned hw = std::thread::hardware_concurrency();
    const unsigned workers = hw > 2 && !work_->ranges.empty() ? std::min(max_workers, hw - 1) : 0u;
    for (unsigned w = 0; w < workers; ++w) {
      work_->running.fetch_add(1);
      try {
        kept_threads::start([work = work_] { work->touch(); });
      } catch (...) {  // no thread to be had: fewer workers (none is a valid prefault)
        work_->running.fetch_sub(1);
        break;
      }
    }
  }
  ~host_prefault() { finish(); }
  host_prefault(const host_prefault&) = delete;
  host_prefault& operator=(const host_prefault&) = delete;

  /// Touches pages with the workers until every one is, then returns.
  void complete() {
    work_->running.fetch_add(1);
    work_->touch();
    while (work_->running.load() != 0) std::this_thread::yield();
  }

  /// Stops the workers after the block each is in (about 0.1 ms of faults)
  /// and waits for them: the ranges are then the caller's again.
  void finish() {
    work_->stop.store(true);
    while (work_->running.load() != 0) std::this_thread::yield();
  }

 private:
  static constexpr std::size_t page = 4096;
  static constexpr std::size_t block = 64 * page;  // a worker's claim

  struct shared {
    std::vector<host_range> ranges;
    std::atomic<std::size_t> next{0};  // next block, counted over the ranges in order
    std::atomic<bool> stop{false};
    std::atomic<unsigned> running{0};

    void touch() {
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) break;
        std::size_t b = next.fetch_add(1, std::memory_order_relaxed);
        const host_range* r = find(b);
        if (r == nullptr) break;
        char* base = static_cast<char*>(r->data);
        const std::size_t end = std::min(r->bytes, (b + 1) * block);
        // A write, not a read: a read maps the shared zero page.
        for (std::size_t at = b * block; at < end; at += page) {
          reinterpret_cast<volatile char*>(base)[at] = 0;
        }
      }
      running.fetch_sub(1);
    }
    /// The range holding block b, b made relative to it; null past the last.
    const host_range* find(std::size_t& b) const {
      for (const host_range& r : ranges) {
        const std::size_t blocks = (r.bytes + block - 1) / block;
        if (b < blocks) return &r;
        b -= blocks;
      }
      return nullptr;
    }
  };
  std::shared_ptr<shared> work_;
};

}  // namespace matchflow::cuda

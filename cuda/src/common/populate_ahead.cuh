// Host pages mapped ahead of the copies that write them (madvise), on a kept
// thread while the solve runs.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "common/copy_part.cuh"
#include "common/host_threads.cuh"

namespace matchflow::cuda {

/// Maps the pages of host arrays that a later copy writes, on a kept
/// thread, while the caller goes on (the solve runs); joined when
/// destroyed.  A call's result arrays are fresh pages, and faulting them in
/// is most of a download's host side (benchmarks/NOTES.md, "Host copies").
/// MADV_POPULATE_WRITE
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

}  // namespace matchflow::cuda

// Page-locked host memory for the result arrays of GPU calls on host input.
//
// A download into pageable memory is staged (host_copy.cuh): the DMA writes a
// kept pinned chunk and host threads copy it out, so every byte crosses host
// memory twice: for a 2^20-row matching's mates, a fifth of the 1 ms a whole
// call may spend beyond its GPU work and its upload (NOTES.md, "Host copies").  Into
// page-locked memory the DMA is the whole copy (download_parts sends to such
// a destination directly).  The Python layer asks for result arrays here
// (matchflow._core.result_array), and an array's block comes back when the
// array is freed.
//
// A block is a private anonymous mapping page-locked by cudaHostRegister:
// across fork() it stays an ordinary private mapping (the child reads its own
// copy of a result; tests/test_pinned_results.py), which memory from
// cudaHostAlloc, a driver mapping, is not.  A block pinned before a fork()
// is never filled again: until one side writes it, parent and child may
// share its pages copy-on-write (kernels before Linux 5.9 copy pinned pages
// eagerly at fork only from then on), and a write of the parent's would
// move its array off the pages the GPU writes.  So such a block is unpinned
// when its array is freed.  Pinning costs about as much as a staged copy of
// the same bytes (cudaHostRegister + Unregister of 17 MB: 1.27 ms,
// host_copy.cuh), so other blocks are kept for the next call, not unpinned,
// until free_host_cache().  Every block, held by an array or kept, counts
// against a cap (MATCHFLOW_PINNED_RESULTS_MB; default 256 MiB, or a 64th of
// physical memory if less; 0: none); past it, or where pinning fails, there is
// no block and the caller allocates pageable memory as before.
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/prefault.cuh"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/detail/kept_memory.hpp"
#include "matchflow/detail/per_process.hpp"

namespace matchflow::cuda {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;
/// Smaller results are not worth a block: their plain copy takes a few
/// microseconds.
constexpr std::size_t least_pinned = mib;

/// The forks this process has made (counted in the parent, by pthread_atfork):
/// a block pinned under an earlier count is not filled again (see above).
std::atomic<unsigned> forks{0};
void count_fork() noexcept { forks.fetch_add(1); }
const bool forks_counted = ::pthread_atfork(nullptr, count_fork, nullptr) == 0;

struct block {
  void* data;
  std::size_t bytes;
  unsigned forks;  ///< the count when it was pinned
  bool reusable() const { return forks_counted && forks == cuda::forks.load(); }
};

struct pinned_pool {
  std::mutex mutex;
  std::vector<block> kept;  ///< free blocks, oldest first
  std::vector<block> lent;  ///< blocks held by arrays
  std::size_t total = 0;    ///< bytes of every block, held or kept
};

/// The process's pool.  A child of fork() starts an empty one: it holds
/// copies of its parent's arrays, whose blocks are plain memory there (no
/// CUDA context pinned them), and unmaps them when they are freed.
pinned_pool& pool() { return matchflow::detail::per_process<pinned_pool>(); }

/// MATCHFLOW_PINNED_RESULTS_MB, by default 256 MiB or a 64th of physical memory.
std::size_t cap_bytes() {
  return matchflow::detail::kept_cap("MATCHFLOW_PINNED_RESULTS_MB", 256, 64);
}

/// Huge pages' size on x86-64 Linux: a block starts on one.
constexpr std::size_t huge_page = std::size_t(2) << 20;

/// `bytes` of fresh private anonymous memory starting on a huge page, or
/// nullptr: a larger mapping with its ends cut off.
void* map_aligned(std::size_t bytes) {
  const std::size_t span = bytes + huge_page;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (at + huge_page - 1) & ~std::uintptr_t(huge_page - 1);
  if (start > at) ::munmap(m, start - at);
  if (start + bytes < at + span)
    ::munmap(reinterpret_cast<void*>(start + bytes), at + span - start - bytes);
  return reinterpret_cast<void*>(start);
}

/// A fresh page-locked block, or nullptr.  Its pages are mapped before
/// cudaHostRegister, as huge pages where the kernel gives them and by kept
/// threads (prefault.cuh): registering fresh 4 KiB pages, faulted in one
/// by one, cost about 0.4 ms a MiB on the H200 host, on the calling
/// thread before the solve (NOTES.md, "Host copies").
void* pin_fresh(std::size_t bytes) {
  void* p = map_aligned(bytes);
  if (p == nullptr) return nullptr;
  ::madvise(p, bytes, MADV_HUGEPAGE);  // best effort
  try {
    host_prefault({host_range{p, bytes}}).complete();
  } catch (...) {  // no memory for the workers' state: registering faults the pages in
  }
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();  // not sticky: the caller goes on with pageable memory
    ::munmap(p, bytes);
    return nullptr;
  }
  return p;
}

/// Moves kept blocks to `out` (to be unpinned outside the lock): those a
/// fork() made stale, then, oldest first, until `more` bytes fit under `cap`
/// or none is kept.
void evict(pinned_pool& p, std::size_t cap, std::size_t more, std::vector<block>& out) {
  for (auto it = p.kept.begin(); it != p.kept.end();) {
    if (it->reusable()) {
      ++it;
      continue;
    }
    out.push_back(*it);
    p.total -= it->bytes;
    it = p.kept.erase(it);
  }
  while (!p.kept.empty() && p.total + more > cap) {
    out.push_back(p.kept.front());
    p.total -= p.kept.front().bytes;
    p.kept.erase(p.kept.begin());
  }
}

void unpin(const block& b) noexcept {
  if (cudaHostUnregister(b.data) != cudaSuccess) cudaGetLastError();
  ::munmap(b.data, b.bytes);
}

}  // namespace

void* take_pinned_result(std::size_t* bytes) noexcept {
  if (*bytes < least_pinned) return nullptr;
  const std::size_t want = (*bytes + mib - 1) / mib * mib;
  const std::size_t cap = cap_bytes();
  pinned_pool& p = pool();
  std::vector<block> surplus;
  block reused{nullptr, 0, 0};
  bool room = false;
  try {
    std::lock_guard<std::mutex> lock(p.mutex);
    evict(p, cap, 0, surplus);  // a fork() may have come, the cap been lowered
    const auto best = matchflow::detail::best_fit(p.kept, want);
    if (best != p.kept.end()) {
      p.lent.push_back(*best);
      reused = *best;
      p.kept.erase(best);
    } else {
      evict(p, cap, want, surplus);
      room = p.total + want <= cap;
      if (room) p.total += want;  // reserved while the block is pinned, unlocked
    }
  } catch (...) {  // no memory for the lists: no block
    room = false;
  }
  for (const block& b : surplus) unpin(b);
  if (reused.data != nullptr) {
    *bytes = reused.bytes;
    return reused.data;
  }
  if (!room) return nullptr;
  const unsigned forks_now = forks.load();  // read before pinning: a fork during it makes it stale
  void* data = pin_fresh(want);
  std::lock_guard<std::mutex> lock(p.mutex);
  try {
    if (data != nullptr) p.lent.push_back(block{data, want, forks_now});
  } catch (...) {  // no room to record it
    unpin(block{data, want, forks_now});
    data = nullptr;
  }
  if (data == nullptr) {
    p.total -= want;
    return nullptr;
  }
  *bytes = want;
  return data;
}

void give_back_pinned_result(void* data, std::size_t bytes) noexcept {
  pinned_pool& p = pool();
  std::unique_lock<std::mutex> lock(p.mutex);
  const auto it =
      std::find_if(p.lent.begin(), p.lent.end(), [data](const block& b) { return b.data == data; });
  if (it == p.lent.end()) {  // a parent's block, inherited through fork(): plain memory here
    ::munmap(data, bytes);
    return;
  }
  const block b = *it;
  p.lent.erase(it);
  if (b.reusable()) {
    try {
      p.kept.push_back(b);
      return;
    } catch (...) {  // no room to record it: unpinned below
    }
  }
  p.total -= b.bytes;
  lock.unlock();
  unpin(b);
}

std::size_t free_pinned_results() noexcept {
  pinned_pool& p = pool();
  std::vector<block> kept;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    kept.swap(p.kept);
    for (const block& b : kept) p.total -= b.bytes;
  }
  std::size_t bytes = 0;
  for (const block& b : kept) {
    unpin(b);
    bytes += b.bytes;
  }
  return bytes;
}

}  // namespace matchflow::cuda

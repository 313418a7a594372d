// Page-locked host memory for the result arrays of GPU calls on host input.
//
// A download into pageable memory is staged (host_copy.cuh): the DMA writes a
// kept pinned chunk and host threads copy it out, so every byte crosses host
// memory twice.  The 8 MB of mates of a 2^20-row matching took 0.40 ms so,
// against 0.16 ms for the DMA alone (copy-sweep.txt, H100 host): a fifth of
// the 1 ms a whole call may spend beyond its GPU work and its upload.  Into
// page-locked memory the DMA is the whole copy (download_parts sends to such
// a destination directly).  The Python layer asks for result arrays here
// (matchflow._core.result_array), and an array's block comes back when the
// array is freed.
//
// A block is a private anonymous mapping page-locked by cudaHostRegister, so
// that across fork() it stays an ordinary private mapping (the child reads
// its own copy of a result; tests/test_pinned_results.py), which memory from
// cudaHostAlloc, a driver mapping, is not.  Pinning costs about as much as a
// staged copy of the same bytes (cudaHostRegister + Unregister of 17 MB:
// 1.27 ms, host_copy.cuh), so blocks are kept for the next call, not unpinned,
// until free_host_cache().  Every block, held by an array or kept, counts
// against a cap (MATCHFLOW_PINNED_RESULTS_MB; default 256 MiB, or a 64th of
// physical memory if less; 0: none); past it, or where pinning fails, there is
// no block and the caller allocates pageable memory as before.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

#include "matchflow/cuda/entry.hpp"
#include "matchflow/detail/env_number.hpp"
#include "matchflow/detail/per_process.hpp"

namespace matchflow::cuda {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;
/// Smaller results are not worth a block: their plain copy takes a few
/// microseconds.
constexpr std::size_t least_pinned = mib;

struct block {
  void* data;
  std::size_t bytes;
};

struct pinned_pool {
  std::mutex mutex;
  std::vector<block> kept;  ///< free blocks, oldest first
  std::vector<void*> lent;  ///< blocks held by arrays
  std::size_t total = 0;    ///< bytes of every block, held or kept
};

/// The process's pool.  A child of fork() starts an empty one: it holds
/// copies of its parent's arrays, whose blocks are plain memory there (no
/// CUDA context pinned them), and unmaps them when they are freed.
pinned_pool& pool() { return detail::per_process<pinned_pool>(); }

/// Read at every take, so that one process can compare caps.
std::size_t cap_bytes() {
  const double mb = detail::env_number("MATCHFLOW_PINNED_RESULTS_MB", -1, 0);
  if (mb >= 0) return std::size_t(mb * double(mib));
  std::size_t cap = 256 * mib;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) cap = std::min(cap, std::size_t(pages) * std::size_t(page) / 64);
  return cap;
}

/// A fresh page-locked block, or nullptr.
void* pin_fresh(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();  // not sticky: the caller goes on with pageable memory
    ::munmap(p, bytes);
    return nullptr;
  }
  return p;
}

/// Moves kept blocks, oldest first, to `out` (to be unpinned outside the
/// lock) until `more` bytes fit under `cap` or none is kept.
void evict(pinned_pool& p, std::size_t cap, std::size_t more, std::vector<block>& out) {
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
  block reused{nullptr, 0};
  bool room = false;
  try {
    std::lock_guard<std::mutex> lock(p.mutex);
    evict(p, cap, 0, surplus);  // the cap may have been lowered
    // The smallest kept block that fits without wasting more than half of it.
    auto best = p.kept.end();
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it) {
      if (it->bytes >= want && it->bytes <= 2 * want &&
          (best == p.kept.end() || it->bytes < best->bytes)) {
        best = it;
      }
    }
    if (best != p.kept.end()) {
      p.lent.push_back(best->data);
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
  void* data = pin_fresh(want);
  std::lock_guard<std::mutex> lock(p.mutex);
  try {
    if (data != nullptr) p.lent.push_back(data);
  } catch (...) {  // no room to record it
    unpin(block{data, want});
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
  std::lock_guard<std::mutex> lock(p.mutex);
  const auto it = std::find(p.lent.begin(), p.lent.end(), data);
  if (it == p.lent.end()) {  // a parent's block, inherited through fork()
    ::munmap(data, bytes);
    return;
  }
  p.lent.erase(it);
  try {
    p.kept.push_back(block{data, bytes});
  } catch (...) {  // no room to record it: unpinned
    p.total -= bytes;
    unpin(block{data, bytes});
  }
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

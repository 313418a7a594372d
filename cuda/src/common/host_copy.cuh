// Copies between large pageable host arrays and the device, the one home of
// making them fast: staging through pinned chunks kept for the process, the
// host side done by a pool of threads (host_threads.cuh) while the DMA of
// the previous chunk runs.  Users: the graph uploads and result downloads of
// the GPU matching (upload_parts, download_parts: all of a call's arrays in
// one pass), the maximum flow's network upload and result downloads
// (maxflow/), the cost uploads of the dense GPU assignment solvers
// (staged_copy, staged_upload; lsap/).
//
// Why not page-lock the caller's arrays instead (cudaHostRegister)?
// Registering and unregistering costs more than the DMA it enables, and
// filling kept pinned chunks with several threads costs neither
// (benchmarks/NOTES.md, "Host copies").  Host arrays that are page-locked
// already (result arrays from pinned_results.cu, kept between calls) skip
// the staging: one DMA each.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/buffer.cuh"
#include "common/copy_part.cuh"
#include "common/error.cuh"
#include "common/host_threads.cuh"
#include "common/narrow_ints.hpp"
#include "common/populate_ahead.cuh"

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

/// Pinned staging of a copy: `slots` chunks of `slot_bytes` each, used
/// round robin (chunk k in slot k % slots), so that up to `slots` chunks are
/// in flight at once.
struct staging {
  char* base;
  std::size_t slot_bytes;
  std::size_t slots;
  char* slot(std::size_t k) const { return base + (k % slots) * slot_bytes; }
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
inline std::size_t staged_send(std::size_t n_items, std::size_t out_size, std::size_t chunk_items,
                               const staging& stage, Fill&& fill, Send&& send, cudaStream_t s,
                               unsigned max_workers = default_copy_workers) {
  const std::size_t n_chunks = (n_items + chunk_items - 1) / chunk_items;
  const std::size_t slots = std::max<std::size_t>(1, std::min(stage.slots, n_chunks));
  std::vector<event> done(slots);
  std::size_t sent = 0;
  {
    chunk_workers pool(
        n_chunks, pieces_for(chunk_items * out_size), slots, slots,
        [&](std::size_t k, std::size_t piece, std::size_t pieces) {
          const std::size_t first = k * chunk_items;
          const auto [a, e] = piece_share(std::min(chunk_items, n_items - first), piece, pieces);
          return a < e ? fill(stage.slot(k) + a * out_size, first + a, e - a) : true;
        },
        max_workers);
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

/// How a staged copy runs: the pinned chunk, the slots of the ring (chunks
/// in flight) and the host threads besides the caller.
struct copy_shape {
  std::size_t chunk_bytes;
  std::size_t slots;
  unsigned workers;
  std::size_t staged_from = min_staged_copy;  ///< smaller copies go plain
};
/// The matching's and the flow's graph uploads and result downloads
/// (benchmarks/copy_sweep.cu; NOTES.md, "Host copies").
constexpr copy_shape upload_copy{std::size_t(8) << 20, 4, default_copy_workers, min_staged_upload};
constexpr copy_shape download_copy{std::size_t(2) << 20, 4, default_copy_workers};

/// Each of `parts` by one cudaMemcpyAsync of `kind` on `s` (small copies).
inline void copy_plain(const std::vector<copy_part>& parts, cudaMemcpyKind kind, cudaStream_t s) {
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
    if (p.bytes == 0 || p.int64_as_int32 || !page_locked(host)) {
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
///
/// Parts marked int64_as_int32 are narrowed as they are staged
/// (narrow_ints.hpp; every part's size must then be a multiple of 4 bytes).
/// Returns false when one of their values is outside int32, or the copy is
/// too small to stage: then no part is known to have arrived, and the
/// caller uploads the wide values instead.
inline bool upload_parts(const std::vector<copy_part>& all_parts, cudaStream_t s,
                         copy_shape shape = upload_copy) {
  const bool narrows = std::any_of(all_parts.begin(), all_parts.end(),
                                   [](const copy_part& p) { return p.int64_as_int32; });
  const std::vector<copy_part> parts = copy_page_locked(all_parts, cudaMemcpyHostToDevice, s);
  const std::size_t total = total_bytes(parts);
  if (total < (narrows ? std::min(shape.staged_from, min_narrowed_copy) : shape.staged_from)) {
    if (narrows) return false;
    copy_plain(parts, cudaMemcpyHostToDevice, s);  // pageable: returns once staged
    if (parts.size() < all_parts.size()) MATCHFLOW_CUDA_TRY(cudaStreamSynchronize(s));
    return true;
  }
  // Items of `unit` bytes, so that no narrowed value is split between two pieces.
  const std::size_t unit = narrows ? sizeof(std::int32_t) : 1;
  staging_lease lease(shape.slots * shape.chunk_bytes);
  const std::size_t sent = staged_send(
      total / unit, unit, shape.chunk_bytes / unit,
      staging{lease.data(), shape.chunk_bytes, shape.slots},
      [&parts, unit](char* buf, std::size_t first, std::size_t count) {
        bool fits = true;
        for_each_piece(
            parts, first * unit, (first + count) * unit,
            [buf, &fits](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
              if (!p.int64_as_int32) {
                std::memcpy(buf + out, static_cast<const char*>(p.src) + at, n);
                return;
              }
              int_range range;  // unused
              fits = fits && narrow_to<std::int32_t, true>(
                                 static_cast<const std::int64_t*>(p.src) + at / 4,
                                 reinterpret_cast<std::int32_t*>(buf + out), n / 4, &range);
            });
        return fits;
      },
      [&parts, s, unit](const char* buf, std::size_t first, std::size_t count) {
        for_each_piece(
            parts, first * unit, (first + count) * unit,
            [buf, s](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
              MATCHFLOW_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(p.dst) + at, buf + out, n,
                                                 cudaMemcpyHostToDevice, s));
            });
      },
      s, shape.workers);
  return sent * unit == total;
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
  if (total < shape.staged_from) {
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
  chunk_workers pool(
      n_chunks, pieces_for(chunk), slots, 0,
      [&](std::size_t k, std::size_t piece, std::size_t pieces) {
        const std::size_t first = k * chunk;
        const auto share = piece_share(std::min(chunk, total - first), piece, pieces);
        const char* buf = stage.slot(k) + share.first;  // (a structured binding can't be captured)
        for_each_piece(parts, first + share.first, first + share.second,
                       [&](const copy_part& p, std::size_t at, std::size_t n, std::size_t out) {
                         std::memcpy(static_cast<char*>(p.dst) + at, buf + out, n);
                       });
        return true;
      },
      shape.workers);
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

/// The dense assignment's cost upload: 12 threads and 16 MiB chunks were the
/// fastest (benchmarks/upload_sweep.cu; NOTES.md, "Host copies").
constexpr copy_shape cost_upload_copy{std::size_t(16) << 20, 2, 12};

/// Host -> device copy of the cost matrix.  A plain cudaMemcpy from pageable
/// memory runs at one CPU thread's copy speed; large matrices are staged
/// instead (staged_copy) through a
/// ring of pinned chunks of the kept staging (staging_lease).  Returns
/// staged_copy's count of items copied.
template <class Fill>
inline std::size_t staged_upload(void* d_dst, std::size_t n_items, std::size_t out_size,
                                 Fill&& fill, cudaStream_t s, copy_shape shape = cost_upload_copy) {
  const std::size_t chunk_items = std::min(std::max<std::size_t>(shape.chunk_bytes / out_size, 1),
                                           std::max<std::size_t>(n_items, 1));
  const std::size_t chunk_bytes = chunk_items * out_size;
  staging_lease lease(shape.slots * chunk_bytes);
  return staged_copy(
      d_dst, n_items, out_size, chunk_items, staging{lease.data(), chunk_bytes, shape.slots},
      std::forward<Fill>(fill), [](std::size_t, std::size_t) {}, s, shape.workers);
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
  staged_upload(
      d_dst, n_items, sizeof(T),
      [h_src](char* buf, std::size_t first, std::size_t count) {
        std::memcpy(buf, h_src + first, count * sizeof(T));
        return true;
      },
      s);
}

}  // namespace matchflow::cuda

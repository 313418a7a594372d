// The host-thread protocol of the staged copies (cuda/src/common/host_copy.cuh:
// chunk_workers, populate_ahead) without a GPU: chunk_workers driven as
// staged_send (a ring of slots allowed ahead, the caller filling too) and
// download_parts (the caller allowing one chunk at a time, then copying out
// too) drive it, with delays on either side past and within the hand-offs'
// spin, so that both the spinning and the sleeping waits run, and uploads
// abandoned midway; populate_ahead on memory whose content must not change.
// Built and run by tests/test_host_copy_threads.py, under ThreadSanitizer
// where it links.  Prints "ok" and exits 0, or names what went wrong and
// exits 1.
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "common/host_copy.cuh"

using namespace matchflow::cuda;

namespace {

constexpr std::size_t chunk_items = 64;

/// One copy of n_chunks chunks through a ring of slots; true when every
/// item arrived in order, or an abandoned upload stopped where it should.
bool one_copy(std::mt19937& rng, bool upload) {
  const std::size_t n_chunks = 1 + rng() % 9;
  const std::size_t slots = 1 + rng() % 4;
  const std::size_t pieces = 1 + rng() % 8;
  const unsigned delay = rng() % 3;  // 0: none, 1: within the spin, 2: past it
  const unsigned max_workers = 1 + rng() % 8;
  const std::size_t fail_at = upload && rng() % 4 == 0 ? rng() % n_chunks : n_chunks;
  std::vector<std::vector<int>> stage(slots, std::vector<int>(chunk_items, -1));
  std::vector<int> out(n_chunks * chunk_items, -1);
  chunk_workers pool(
      n_chunks, pieces, slots, upload ? slots : 0,
      [&](std::size_t k, std::size_t piece, std::size_t parts) {
        const auto [a, e] = piece_share(chunk_items, piece, parts);
        if (delay == 2 && piece == 0) std::this_thread::sleep_for(std::chrono::microseconds(400));
        for (std::size_t i = a; i < e; ++i) {
          if (upload)
            stage[k % slots][i] = static_cast<int>(k * chunk_items + i);  // fill
          else
            out[k * chunk_items + i] = stage[k % slots][i];  // copy out
        }
        return !(k == fail_at && piece == parts - 1);
      },
      max_workers);
  auto arrive = [&](std::size_t k) {  // download_parts: chunk k's DMA into its slot
    for (std::size_t i = 0; i < chunk_items; ++i)
      stage[k % slots][i] = static_cast<int>(k * chunk_items + i);
  };
  if (!upload) {
    for (std::size_t k = 0; k < std::min(slots, n_chunks); ++k) arrive(k);
  }
  for (std::size_t k = 0; k < n_chunks; ++k) {
    if (upload) {  // staged_send: wait for the fill, send, free the slot
      // A failure is seen at its chunk or before, by up to the slots ahead.
      if (!pool.wait(k)) return fail_at >= k && fail_at < k + slots;
      if (k >= fail_at) return false;  // the failure went unseen
      for (std::size_t i = 0; i < chunk_items; ++i) out[k * chunk_items + i] = stage[k % slots][i];
      if (delay == 1) std::this_thread::sleep_for(std::chrono::microseconds(50));
      pool.allow(k + slots + 1);
    } else {  // download_parts: the chunk arrived, it is copied out, its slot refilled
      if (delay == 1) std::this_thread::sleep_for(std::chrono::microseconds(50));
      pool.allow(k + 1);
      if (!pool.wait(k)) return false;
      if (k + slots < n_chunks) arrive(k + slots);
    }
  }
  if (fail_at < n_chunks) return false;  // the failure went unseen
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != static_cast<int>(i)) return false;
  }
  return true;
}

}  // namespace

int main() {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 600; ++trial) {
    if (!one_copy(rng, trial % 2 == 1)) {
      std::printf("copy %d (%s) lost or reordered items\n", trial, trial % 2 ? "up" : "down");
      return 1;
    }
  }
  for (int trial = 0; trial < 40; ++trial) {  // destroyed at once, or after the task ended
    std::vector<char> a(std::size_t(5) << 20, 1), b(std::size_t(1) << 20, 2);
    {
      populate_ahead ahead;
      ahead.start({copy_part{a.data(), nullptr, a.size()}, copy_part{b.data(), nullptr, b.size()}});
      if (trial % 2) std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    if (a[12345] != 1 || b[999] != 2 || a.back() != 1) {
      std::printf("populate_ahead changed the arrays' content\n");
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}

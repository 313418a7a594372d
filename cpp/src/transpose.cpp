// Transpose of a compressed adjacency: a counting sort by target vertex.
//
// Sequential: count, prefix sum, scatter (two random-access passes over the
// targets).  Parallel (large inputs, more than one thread): a two-pass
// bucketed counting sort, so that no pass needs atomics or random writes
// outside the cache:
//   1. the sources are cut into one range per thread, of about equal edge
//      counts; each thread counts its edges per *block* of target_block
//      consecutive targets (a small per-thread histogram);
//   2. a prefix sum over (block, thread) gives each thread its own slot of
//      every block in a scratch array, and each thread copies its edges
//      there as (target within the block, source) pairs, in source order;
//   3. each block, in parallel, is then counting-sorted in cache (its
//      histogram and output range are small): this writes the block's
//      offsets and lists.
// A block's scratch holds thread 0's edges, then thread 1's, ..., each in
// source order, so both versions give the same output: every list in the
// input order of its sources (deterministic).
#include "transpose.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "openmp.hpp"

namespace matchflow::detail {
namespace {

// Below this many edges the sequential sort is used (threads do not pay).
constexpr offset_t parallel_min_nnz = offset_t(1) << 20;
// Blocks of targets: at most max_blocks of them (the per-thread histograms
// and write streams of step 2), at least min_block_shift bits wide.
constexpr int max_block_bits = 12, min_block_shift = 10;

adjacency_storage sequential_transpose(const adjacency_view& in, vertex_t n_out) {
  adjacency_storage out;
  out.ptr.assign(static_cast<std::size_t>(n_out) + 1, 0);
  out.adj.resize(static_cast<std::size_t>(in.nnz()));
  for (offset_t e = 0; e < in.nnz(); ++e) ++out.ptr[in.adj[e] + 1];
  for (vertex_t v = 0; v < n_out; ++v) out.ptr[v + 1] += out.ptr[v];
  std::vector<offset_t> next(out.ptr.begin(), out.ptr.end() - 1);
  for (vertex_t u = 0; u < in.n; ++u) {
    for (offset_t e = in.ptr[u]; e < in.ptr[u + 1]; ++e) out.adj[next[in.adj[e]]++] = u;
  }
  return out;
}

adjacency_storage parallel_transpose(const adjacency_view& in, vertex_t n_out, int team) {
  int shift = min_block_shift;
  while ((std::int64_t(n_out) >> shift) >= (std::int64_t(1) << max_block_bits)) ++shift;
  const std::int64_t width = std::int64_t(1) << shift;
  const std::int64_t blocks = (std::int64_t(n_out) + width - 1) >> shift;
  const offset_t nnz = in.nnz();
  // first[t]: first source of thread t's range (about nnz / team edges each).
  std::vector<vertex_t> first(std::size_t(team) + 1, in.n);
  for (int t = 0; t < team; ++t) {
    const offset_t target = nnz / team * t;
    first[std::size_t(t)] = vertex_t(std::lower_bound(in.ptr, in.ptr + in.n, target) - in.ptr);
  }
  // slot[t * blocks + b]: where thread t writes its next edge of block b.
  std::vector<offset_t> slot(std::size_t(team * blocks), 0);
  std::unique_ptr<std::uint64_t[]> scratch(new std::uint64_t[std::size_t(nnz)]);
  adjacency_storage out;
  out.ptr.resize(std::size_t(n_out) + 1);
  out.adj.resize(std::size_t(nnz));
  std::vector<offset_t> block_start(std::size_t(blocks) + 1);
#pragma omp parallel num_threads(team)
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num();
#else
    const int t = 0;  // not reached: team_size is 1 without OpenMP
#endif
    offset_t* mine = slot.data() + std::int64_t(t) * blocks;
    const vertex_t lo = first[std::size_t(t)], hi = first[std::size_t(t) + 1];
    for (offset_t e = in.ptr[lo]; e < in.ptr[hi]; ++e) ++mine[in.adj[e] >> shift];  // 1
#pragma omp barrier
#pragma omp single
    {
      offset_t sum = 0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        block_start[std::size_t(b)] = sum;
        for (int u = 0; u < team; ++u) {
          const offset_t count = slot[std::size_t(u * blocks + b)];
          slot[std::size_t(u * blocks + b)] = sum;
          sum += count;
        }
      }
      block_start[std::size_t(blocks)] = sum;
    }
    for (vertex_t u = lo; u < hi; ++u) {  // 2
      for (offset_t e = in.ptr[u]; e < in.ptr[u + 1]; ++e) {
        const vertex_t v = in.adj[e];
        scratch[std::size_t(mine[v >> shift]++)] =
            (std::uint64_t(v & (width - 1)) << 32) | std::uint32_t(u);
      }
    }
#pragma omp barrier
    std::vector<offset_t> next(std::size_t(width) + 1);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {  // 3
      const offset_t begin = block_start[std::size_t(b)], end = block_start[std::size_t(b) + 1];
      const std::int64_t v0 = b * width, v1 = std::min<std::int64_t>(v0 + width, n_out);
      std::fill(next.begin(), next.end(), 0);
      for (offset_t k = begin; k < end; ++k) ++next[std::size_t(scratch[std::size_t(k)] >> 32) + 1];
      next[0] = begin;
      for (std::int64_t i = 0; i < v1 - v0; ++i) {
        next[std::size_t(i) + 1] += next[std::size_t(i)];
        out.ptr[std::size_t(v0 + i)] = next[std::size_t(i)];
      }
      for (offset_t k = begin; k < end; ++k) {
        const std::uint64_t x = scratch[std::size_t(k)];
        out.adj[std::size_t(next[std::size_t(x >> 32)]++)] = vertex_t(std::uint32_t(x));
      }
    }
  }
  out.ptr[std::size_t(n_out)] = nnz;
  return out;
}

}  // namespace

adjacency_storage transpose(const adjacency_view& in, vertex_t n_out, int threads) {
  const int team = team_size(threads);
  if (team == 1 || in.nnz() < parallel_min_nnz) return sequential_transpose(in, n_out);
  return parallel_transpose(in, n_out, team);
}

}  // namespace matchflow::detail

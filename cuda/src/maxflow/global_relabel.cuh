// ECL-MaxFlow's global relabel (paper 002, Algorithms 6 and 7): the BFS from
// t (phase 1) or s (phase 2) over the residual graph that sets every label
// to its exact distance.  Terms and the concurrency contract:
// push_relabel_kernels.cuh.
//
// Labels are lowered, not stamped (a deviation from Algorithm 7, which
// visits w when its timestamp is not yet this BFS's): w takes label d + 1
// from a neighbour of label d when atomicMin(h[w], d + 1) lowers it, and
// whoever lowers it expands it.  In a level-synchronous BFS every lowering
// is a first visit, so nothing changes; it lets the tuned BFS search a
// window of levels between two barriers (relabel_window), label-correcting
// like Delta-stepping's buckets: on long, narrow BFSs (GENRMF, grids) a level
// cost about 3.7 us, mostly a grid.sync() and the chain of dependent loads
// behind it (NOTES.md, "gpu-pr's constants").  Labels only fall and every
// fall is expanded, so the BFS ends with the exact distances whatever the
// order.
//
// A step is one pass over WL_GR between barriers; a vertex goes on WL_next
// at most once a step: time[w] takes the step's stamp (negative, decreasing
// over the solve, so that the PR cycles' positive stamps never meet one).
// Its entries are expanded with the label they hold when read.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "common/atomics.cuh"
#include "common/launch.cuh"
#include "maxflow/residual_view.cuh"

namespace matchflow::cuda::ecl {

constexpr int persistent_block = 512;  ///< threads per block of the cooperative kernels
                                       ///< (fewer, larger blocks: a cheaper grid.sync)
constexpr int window_queue = 64;       ///< a warp's queue in relabel_window (vertices)

/// Algorithm 6, lines 1-11: h = infinity everywhere but the root (h = 0),
/// WL_GR = {root}.  Grid over vertices.
__global__ void relabel_init_kernel(graph_view g, vertex_t root, label_t infinity,
                                    vertex_t* __restrict__ list, int* __restrict__ count,
                                    int* __restrict__ count_clear, int* __restrict__ reached,
                                    int* __restrict__ levels) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < g.n) g.h[v] = v == root ? 0 : infinity;
  if (v == 0) {
    list[0] = root;
    *count = 1;
    *count_clear = 0;
    *reached = 0;
    *levels = 0;
  }
}

/// Algorithm 7's test for the k-th BFS arc of v: the neighbour if it can
/// send to v (flow on a forward arc (v, w) can come back, both phases; a
/// reverse arc (w, v) with capacity left, phase 1), else v.
__device__ inline vertex_t bfs_neighbour(const graph_view& g, const arc_span& span, offset_t k,
                                         vertex_t v) {
  const span_arc arc = arc_at(g, span, k);
  return (arc.forward ? arc.flow > 0 : arc.flow < g.caps[arc.a]) ? arc.w : v;
}

/// Algorithm 7, lines 4-8 for one arc: true iff w (a BFS neighbour of v)
/// took `label` from a higher one, so that the caller expands it.  In phase
/// 1, s is never labelled (see push_relabel_kernels.cuh).
/// sync: h (atomicMin: labels only fall); *reached (idempotent store).
__device__ inline bool lower_label(const graph_view& g, bool phase1, int* reached, vertex_t v,
                                   vertex_t w, label_t label) {
  if (w == v) return false;
  if (phase1 && w == g.source) {
    atomic_write(reached, 1);
    return false;
  }
  return atomicMin(&g.h[w], label) > label;
}

/// w on WL_next, once per step (`stamp`, see the header).
/// sync: time (atomicMin), list append (atomicAdd).
__device__ inline void defer(const graph_view& g, const list_view& l, int stamp, vertex_t w) {
  if (atomicMin(&g.time[w], stamp) != stamp) push(l.out, l.count_out, w);
}

/// global_relabeling_kernel (Algorithm 7) for one step of `size` vertices of
/// WL_GR: one warp per vertex v (warp `warp` of `warps`, strided), lanes
/// over v's arcs; each neighbour lowered to h(v) + 1 goes on WL_next.  `top`
/// keeps the highest label set.
/// safe: flow, caps (no PR cycle runs during a BFS).
__device__ inline void relabel_level(const graph_view& g, const list_view& l, bool phase1,
                                     int stamp, int* reached, int size, std::int64_t warp,
                                     std::int64_t warps, label_t& top) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = warp; i < size; i += warps) {
    const vertex_t v = l.in[i];
    const label_t next = atomic_read(&g.h[v]) + 1;
    const arc_span span = arcs_of(g, v, true, phase1);
    for (offset_t k = lane; k < span.total; k += warp_size) {
      const vertex_t w = bfs_neighbour(g, span, k, v);
      if (!lower_label(g, phase1, reached, v, w, next)) continue;
      defer(g, l, stamp, w);
      top = next > top ? next : top;
    }
  }
}

/// A warp's queue of vertices to expand within a window (a ring of
/// window_queue entries in shared memory; head and tail count entries).
struct warp_queue {
  vertex_t* slots;
  int head, tail;
};

/// Expands v (label `label`) by the whole warp: each neighbour lowered to
/// label + 1 goes on the warp's queue if that is below `end` and the queue
/// has room, else on WL_next.  The warp's lanes agree on the queue (ballot).
__device__ inline void expand(const graph_view& g, const list_view& l, bool phase1, int stamp,
                              int* reached, vertex_t v, label_t label, label_t end, warp_queue& q,
                              label_t& top) {
  const int lane = threadIdx.x % warp_size;
  const unsigned below_lane = (1u << lane) - 1;
  const label_t next = label + 1;
  const arc_span span = arcs_of(g, v, true, phase1);
  for (offset_t k0 = 0; k0 < span.total; k0 += warp_size) {  // the same trips for all lanes
    const offset_t k = k0 + lane;
    const vertex_t w = k < span.total ? bfs_neighbour(g, span, k, v) : v;
    const bool lowered = lower_label(g, phase1, reached, v, w, next);
    const bool local = lowered && next < end;
    const unsigned wanting = __ballot_sync(0xffffffffu, local);
    const int room = window_queue - (q.tail - q.head);
    const int rank = __popc(wanting & below_lane);
    if (local && rank < room) {
      q.slots[(q.tail + rank) % window_queue] = w;
    } else if (lowered) {
      defer(g, l, stamp, w);
    }
    if (lowered) top = next > top ? next : top;
    const int queued = __popc(wanting);
    q.tail += queued < room ? queued : room;
  }
  __syncwarp();  // the queue's new entries are visible to every lane
}

/// One tuned step over a narrow WL_GR: each warp takes a vertex of it and
/// searches on from its own queue (FIFO) down to labels below `end`, without
/// a barrier; what reaches `end` (or finds the queue full) goes on WL_next.
/// Label-correcting: a vertex may be lowered, and expanded, more than once.
__device__ inline void relabel_window(const graph_view& g, const list_view& l, bool phase1,
                                      int stamp, int* reached, int size, label_t end,
                                      vertex_t* slots, std::int64_t warp, std::int64_t warps,
                                      label_t& top) {
  for (std::int64_t i = warp; i < size; i += warps) {
    warp_queue q{slots, 0, 0};
    vertex_t v = l.in[i];
    for (;;) {
      expand(g, l, phase1, stamp, reached, v, atomic_read(&g.h[v]), end, q, top);
      if (q.head == q.tail) break;
      v = q.slots[q.head++ % window_queue];
    }
  }
}

/// Level 1 of the tuned BFS: the root's arcs spread over the whole grid
/// (thread per arc), not one warp.  The root is t (phase 1) or s (phase 2),
/// which on segmentation-style graphs has an arc to every pixel: one warp
/// took 29 ms per relabel there (benchmarks/NOTES.md, "gpu-pr, global
/// relabels").  Reads WL_GR = {root} from relabel_init_kernel's list.
__global__ void relabel_root_kernel(graph_view g, list_view l, bool phase1, int stamp,
                                    int* reached) {
  const vertex_t root = l.in[0];
  const arc_span span = arcs_of(g, root, true, phase1);
  for (offset_t k = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; k < span.total;
       k += offset_t(gridDim.x) * blockDim.x) {
    const vertex_t w = bfs_neighbour(g, span, k, root);
    if (lower_label(g, phase1, reached, root, w, 1)) defer(g, l, stamp, w);
  }
}

__device__ inline std::int64_t global_warp() {
  return (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
}
__device__ inline std::int64_t global_warps() {
  return std::int64_t(gridDim.x) * blockDim.x / warp_size;
}

/// One BFS level per launch (the paper's form; also the fallback loop).
/// Thread 0 clears the counter nobody reads in this launch.
__global__ void relabel_level_kernel(graph_view g, list_view l, bool phase1, int stamp,
                                     int* reached) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *l.count_clear = 0;
  label_t top = 0;
  relabel_level(g, l, phase1, stamp, reached, *l.count_in, global_warp(), global_warps(), top);
}

/// The highest label of the block's `top`s into *levels (one atomic a block).
__device__ inline void record_levels(label_t top, int* levels) {
  __shared__ label_t tops[persistent_block / warp_size];
  top = label_t(__reduce_max_sync(0xffffffffu, unsigned(top)));
  if (threadIdx.x % warp_size == 0) tops[threadIdx.x / warp_size] = top;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < persistent_block / warp_size; ++w) top = tops[w] > top ? tops[w] : top;
  if (top > 0) atomicMax(levels, top);
}

/// The whole BFS (Algorithm 6, lines 12-17) from step `first` on, in one
/// cooperative launch: grid.sync() is the kernel boundary.  Step k reads
/// ring_view(k) (relabel_init_kernel left the root at list0 / count[0]: a
/// ring reset) and stamps with stamp0 - k.  A WL_GR of at most
/// `window_width` vertices gets a window of `window` levels
/// (relabel_window), a wider one a level.  Every thread reads the same size
/// after the barrier, so all leave together; *steps gets the steps run.
__global__ __launch_bounds__(persistent_block) void relabel_persistent_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int* counts, bool phase1, int stamp0,
    int first, label_t first_end, int window, int window_width, int* reached, int* levels,
    int* steps) {
  __shared__ vertex_t queues[persistent_block / warp_size][window_queue];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  label_t end = first_end, top = 0;  // end: the labels the step may set
  int step = first;
  for (;; ++step) {
    const list_view l = ring_view(list0, list1, counts, step, step);
    const int size = block_read(l.count_in);
    if (size == 0) break;
    if (grid.thread_rank() == 0) *l.count_clear = 0;  // read by all before the last sync
    if (window > 1 && size <= window_width) {
      end += window;
      relabel_window(g, l, phase1, stamp0 - step, reached, size, end,
                     queues[threadIdx.x / warp_size], global_warp(), global_warps(), top);
    } else {
      end += 1;
      relabel_level(g, l, phase1, stamp0 - step, reached, size, global_warp(), global_warps(),
                    top);
    }
    grid.sync();
  }
  record_levels(top, levels);
  if (grid.thread_rank() == 0) *steps = step;
}

}  // namespace matchflow::cuda::ecl

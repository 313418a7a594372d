// ECL-MaxFlow device code: GPU push-relabel maximum flow.
//
// Paper 002: VanAusdal, Burtscher, "An Efficient Push-Relabel Implementation
// for Max-Flow Computations on GPUs", section IV.  Kernels, with the paper's
// names:
//   saturate_source_kernel   Algorithm 4, line 3 (initial saturating pushes)
//   relabel_init_kernel      Algorithm 6, lines 1-11 (labels, WL_GR = {root})
//   relabel_root_kernel      Algorithm 7 for level 1, a thread per root arc (tuned)
//   relabel_level_kernel     global_relabeling_kernel (Algorithm 7), one BFS level
//   relabel_persistent_kernel  Algorithm 6, lines 12-17: all levels, one launch
//   collect_active_kernel    the "trivial kernel" of section IV that lists the
//                            overflowing vertices (also run after every global
//                            relabel, see the deviations)
//   push_relabel_kernel      push_relabel_kernel (Algorithm 5), one cycle
//   push_relabel_persistent_kernel  Algorithm 4, lines 6-14, many cycles, whole grid
//   push_relabel_tail_kernel Algorithm 4, lines 6-14, many cycles in one block
//   min_cut_kernel           the cut {v : v cannot reach t} (not in the paper)
// Algorithm 5's body (the discharge of one vertex) is in discharge.cuh, the
// graph's device view in residual_view.cuh; the host loop (Algorithm 4) in
// push_relabel_dispatch.cu.
//
// Graph (section III-B, "RCSR").  The input CSR is the forward graph: arc a =
// (v, heads[a]) with capacity caps[a] and flow flow[a].  The reverse CSR lists,
// for every v, the arcs a = (u, v) entering v as (rtail = u, rarc = a).  The
// residual graph is never stored: forward arc a is residual iff flow[a] <
// caps[a], its reverse iff flow[a] > 0 (the paper's derived c_f).
// Self-loops are skipped in every scan (they carry no flow).
//
// Phase 1 (labels are distances to t; |V| = "cannot reach t") scans both
// CSRs; phase 2 (labels are distances to s in the graph of arcs with flow,
// reversed) only takes flow back along arcs that enter v (reverse CSR), and
// its BFS only walks arcs with flow out of v (forward CSR): section IV, last
// paragraph before "Algorithm 7 uses the same timestamp array".
//
// Worklists (section IV).  Two vertex arrays alternate as WL and WL_next (the
// BFS shares them; three counters form a ring so that a launch reads one,
// appends to the next and clears the third, and the host can enqueue many
// launches without reading a size in between).  De-duplication by one int
// timestamp per vertex, never reset: a PR cycle appends w to WL_next only
// when atomicMax(time[w], stamp) returns something else than stamp (stamp =
// the cycle number, positive, increasing); a BFS visits w only when
// atomicMin(time[w], bfs_id) returns something else than bfs_id (bfs_id =
// -(number of the global relabel), negative, decreasing).
//
// Concurrency (Hong's lock-free push-relabel, paper 002 section III):
//  * flow[a] only grows by pushes of its tail's warp and only shrinks by
//    pushes of its head's warp (one warp per vertex per cycle: the worklist
//    has no duplicates).  Each bounds its change by the residual it read,
//    and the other side's concurrent change only widens that residual, so
//    0 <= flow <= cap always (64-bit atomicAdd).
//  * excess[v] only shrinks by v's own warp, by at most what it read; others
//    add with atomicAdd.  So excess >= 0 for v != s.
//  * Labels are read while neighbours lift themselves (atomic_read /
//    atomic_write, relaxed): a push may use a stale label.  Hong shows that
//    pushing to the lowest neighbour keeps this correct; here, besides, the
//    host never trusts the end of a phase without a fresh exact global
//    relabel that finds no active vertex (see push_relabel_dispatch.cu).
//  * The BFS runs alone (flows are stable); h is written once per BFS per
//    vertex, by the winner of the atomicMin.
//
// Deviations from paper 002 (reasons):
//  * After every global relabel the worklist is rebuilt from all vertices
//    (collect_active_kernel) instead of kept: the relabel may have changed
//    which vertices are active (labels of |V| drop out, stale lifts are
//    undone), and a list built from the facts makes the end-of-phase check
//    exact.  It costs one pass over the vertices, like the relabel's own
//    label reset.
//  * The BFS never labels s in phase 1: s keeps h = |V|.  If it reaches s,
//    the preflow is not maximum (a race let a label drift), so the host
//    re-saturates s's residual arcs (saturate_source_kernel) and goes on.
//  * A push goes to every neighbour of least label, in arc order, until the
//    excess is spent (push_to_lowest), not to one: Algorithm 5 drains a
//    vertex of high degree one arc per cycle (on R-MAT, phase 2 took 5x
//    phase 1: flow-suite.md, rmat18_s35067).  The least label comes from
//    the warp's min-reduction; lane 0 lifts.  Both variants do this.
//  * The tuned cycles give a vertex of at least hub_arcs arcs (its span)
//    the whole block instead of one warp (discharge.cuh: discharge_hub,
//    the same steps Block arcs at a time): on R-MAT one warp per hub made
//    a cycle wait about 0.9 ms for the longest scan.  Still one worker per
//    vertex per cycle.
//  * The tuned cycles discharge a vertex of at most 64 arcs from one scan
//    (discharge.cuh: scan_short, then push_short after the block's
//    barrier): the push reuses the arcs the scan found, and a lift is
//    followed by the push it enables in the same cycle (Hong's
//    relabel-then-push loop, one round of it).
//  * The tuned BFS runs level 1 (the root's arcs) with a thread per arc over
//    the grid (relabel_root_kernel): s and t are the hubs of vision graphs.
//  * Kernels take their list size from device memory and stride over it.
//    The paper variant still launches exactly one warp per list entry; the
//    tuned loop runs Algorithm 6's level loop and Algorithm 4's cycle loop
//    on the device (relabel_persistent_kernel, push_relabel_persistent_kernel:
//    cooperative launches, grid.sync() as the kernel boundary; short lists:
//    push_relabel_tail_kernel, one block, __syncthreads()).  Same per-vertex
//    work, same ring of lists and counters, so the same concurrency contract.
//  * Lane 0 reads e(v) and h(v) and broadcasts them: the warp must agree on
//    line 2 before the reduction, and other warps may change both meanwhile.
//  * Push and lift counts are summed per block, then one atomicAdd per block.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "common/atomics.cuh"
#include "common/device_clock.cuh"
#include "common/launch.cuh"
#include "maxflow/discharge.cuh"
#include "maxflow/residual_view.cuh"

namespace matchflow::cuda::ecl {

constexpr int tail_block = 1024;       ///< threads of push_relabel_tail_kernel
constexpr int tail_max_list = 64;      ///< the tail kernel returns above this size
                                       ///< (two vertices per warp of its block)
constexpr int persistent_block = 512;  ///< threads per block of the cooperative kernels
                                       ///< (fewer, larger blocks: a cheaper grid.sync)
/// When the multi-cycle kernels stop early: once the cycles of the launch
/// have lifted `budget` labels and run for `after_ns` (relabel_due()'s rules
/// met inside a launch).
struct lift_stop {
  unsigned long long budget;
  long long after_ns;
};
/// lift_stop::budget when they stop on no lift count.
constexpr unsigned long long no_lift_budget = ~0ull;

// ---------------------------------------------------------------------------
// Algorithm 4, line 3: saturating pushes from s
// ---------------------------------------------------------------------------

/// Pushes the whole residual capacity of every arc out of s (and takes back
/// all flow on arcs into s) to the neighbours.  Runs alone; one block.
/// sync: excess of the neighbours (atomicAdd: parallel arcs share a head).
__global__ void saturate_source_kernel(graph_view g) {
  const vertex_t s = g.source;
  for (offset_t a = g.ptr[s] + threadIdx.x; a < g.ptr[s + 1]; a += blockDim.x) {
    const vertex_t w = g.heads[a];
    const flow_t delta = g.caps[a] - g.flow[a];
    if (w == s || delta <= 0) continue;
    g.flow[a] = g.caps[a];
    atomic_add(&g.excess[w], delta);
  }
  for (offset_t r = g.rptr[s] + threadIdx.x; r < g.rptr[s + 1]; r += blockDim.x) {
    const vertex_t w = g.rtail[r];
    const offset_t a = g.rarc[r];
    const flow_t delta = g.flow[a];
    if (w == s || delta <= 0) continue;
    g.flow[a] = 0;
    atomic_add(&g.excess[w], delta);
  }
}

// ---------------------------------------------------------------------------
// Global relabeling (Algorithms 6 and 7)
// ---------------------------------------------------------------------------

/// Algorithm 6, lines 1-11: h = infinity everywhere but the root (h = 0,
/// already visited by this BFS), WL_GR = {root}.  Grid over vertices.
__global__ void relabel_init_kernel(graph_view g, vertex_t root, label_t infinity, int bfs_id,
                                    vertex_t* __restrict__ list, int* __restrict__ count,
                                    int* __restrict__ count_clear, int* __restrict__ reached) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < g.n) g.h[v] = v == root ? 0 : infinity;
  if (v == 0) {
    g.time[root] = bfs_id;
    list[0] = root;
    *count = 1;
    *count_clear = 0;
    *reached = 0;
  }
}

/// Algorithm 7, lines 4-8 for one arc: w, reached from v at BFS level
/// `level`, gets h = level and goes on WL_next unless this BFS has visited
/// it.  In phase 1, s is never labelled (see the header).
/// sync: time (atomicMin decides the one visitor), list append (atomicAdd);
///       *reached (idempotent store).
__device__ inline void visit(const graph_view& g, const list_view& l, bool phase1, int level,
                             int bfs_id, int* reached, vertex_t v, vertex_t w) {
  if (w == v) return;
  if (phase1 && w == g.source) {
    atomic_write(reached, 1);
    return;
  }
  if (atomicMin(&g.time[w], bfs_id) != bfs_id) {
    g.h[w] = level;
    push(l.out, l.count_out, w);
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

/// global_relabeling_kernel (Algorithm 7) for BFS level `level`, over the
/// `size` vertices of WL_GR: one warp per vertex v (warp `warp` of `warps`,
/// strided), lanes over v's arcs (bfs_neighbour), each neighbour visited.
/// safe: flow, caps (no PR cycle runs during a BFS).
__device__ inline void relabel_level(const graph_view& g, const list_view& l, bool phase1,
                                     int level, int bfs_id, int* reached, int size,
                                     std::int64_t warp, std::int64_t warps) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = warp; i < size; i += warps) {
    const vertex_t v = l.in[i];
    const arc_span span = arcs_of(g, v, true, phase1);
    for (offset_t k = lane; k < span.total; k += warp_size) {
      visit(g, l, phase1, level, bfs_id, reached, v, bfs_neighbour(g, span, k, v));
    }
  }
}

/// Level 1 of the tuned BFS: the root's arcs spread over the whole grid
/// (thread per arc), not one warp.  The root is t (phase 1) or s (phase 2),
/// which on segmentation-style graphs has an arc to every pixel: one warp
/// took 29 ms per relabel there (benchmarks/NOTES.md, "gpu-pr, global
/// relabels").  Reads WL_GR = {root} from relabel_init_kernel's list.
__global__ void relabel_root_kernel(graph_view g, list_view l, bool phase1, int bfs_id,
                                    int* reached) {
  const vertex_t root = l.in[0];
  const arc_span span = arcs_of(g, root, true, phase1);
  for (offset_t k = offset_t(blockIdx.x) * blockDim.x + threadIdx.x; k < span.total;
       k += offset_t(gridDim.x) * blockDim.x) {
    visit(g, l, phase1, 1, bfs_id, reached, root, bfs_neighbour(g, span, k, root));
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
__global__ void relabel_level_kernel(graph_view g, list_view l, bool phase1, int level, int bfs_id,
                                     int* reached) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *l.count_clear = 0;
  relabel_level(g, l, phase1, level, bfs_id, reached, *l.count_in, global_warp(), global_warps());
}

/// The whole BFS (Algorithm 6, lines 12-17) from level `first` on, in one
/// cooperative launch: the level loop runs on the device, grid.sync() is the
/// kernel boundary.  Every thread reads the same size after the barrier, so
/// all leave together.  Level k reads ring_view(k - 1) (relabel_init_kernel
/// left the root at list0 / count[0]: a ring reset).
__global__ __launch_bounds__(persistent_block) void relabel_persistent_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int* counts, bool phase1, int bfs_id, int first,
    int* reached, int* levels) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int level = first;; ++level) {
    const list_view l = ring_view(list0, list1, counts, level - 1, level - 1);
    const int size = block_read(l.count_in);
    if (size == 0) {
      if (grid.thread_rank() == 0) *levels = level - 1;
      break;
    }
    if (grid.thread_rank() == 0) *l.count_clear = 0;  // read by all before the last sync
    relabel_level(g, l, phase1, level, bfs_id, reached, size, global_warp(), global_warps());
    grid.sync();
  }
}

/// The overflowing vertices with a label below `infinity` (s and t never).
/// Grid over vertices; one append each, so no timestamps are needed.
__global__ void collect_active_kernel(graph_view g, label_t infinity, vertex_t* list, int* count) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= g.n || v == g.source || v == g.sink) return;
  if (g.excess[v] > 0 && g.h[v] < infinity) push(list, count, vertex_t(v));
}

/// source_side[v] = 1 iff the last (exact) phase-1 BFS did not reach v.
__global__ void min_cut_kernel(vertex_t n, const label_t* __restrict__ h, label_t infinity,
                               std::uint8_t* __restrict__ side) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < n) side[v] = h[v] >= infinity ? 1 : 0;
}

/// One PR cycle (Algorithm 4, lines 7-10): a warp per vertex of WL
/// (discharge_list), a block per vertex of at least `rules.hub_arcs` arcs
/// (no_hubs and short_arcs 0: the paper's form).  `stamp` is the cycle number (timestamps).
/// sync: see the header (flow, excess, h, time, the list counters).
__global__ void push_relabel_kernel(graph_view g, list_view l, bool phase1, label_t infinity,
                                    int stamp, discharge_rules rules, control* ctl) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *l.count_clear = 0;
  const int size = *l.count_in;  // final since the last launch (a plain, cacheable load)
  if (size == 0) return;         // the fallback loop may run past the end: nothing to do
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&ctl->busy_cycles, 1);
  unsigned long long pushes = 0, lifts = 0;
  discharge_list<threads_per_block>(g, l, size, phase1, infinity, stamp, rules, pushes, lifts);
  add_counts(ctl, pushes, lifts);
}

/// Up to `cycles` PR cycles in one cooperative launch (grid.sync() for the
/// kernel boundary), while the worklist holds more than `min_size` vertices
/// (smaller lists go to push_relabel_tail_kernel) and until `stop` says so
/// (the host zeroes ctl->cycle_lifts before a launch with a budget).  Cycle
/// c uses ring_view(parity + c, ring + c) as the host would; the cycles run
/// go to ctl->tail_cycles.
__global__ __launch_bounds__(persistent_block) void push_relabel_persistent_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int parity, int* counts, int ring, bool phase1,
    label_t infinity, int stamp, int cycles, int min_size, lift_stop stop, discharge_rules rules,
    control* ctl) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const bool budgeted = stop.budget != no_lift_budget;       // uniform
  const long long start = global_ns();                       // read by block 0's thread 0
  __shared__ unsigned long long block_lifts;                 // this block's, this cycle
  __shared__ unsigned long long last_lifts;                  // the grid's, at c - 1
  __shared__ long long last_ns;                              // when c - 1 ended
  unsigned long long pushes = 0, lifts = 0, grid_lifts = 0;  // grid_lifts: cycles before c
  int c = 0;
  for (; c < cycles; ++c) {
    if (budgeted) {
      if (threadIdx.x == 0) {
        last_lifts = c > 0 ? atomic_read(&ctl->cycle_lifts[(c - 1) % 3]) : 0;
        last_ns = c > 0 ? atomic_read(&ctl->cycle_ns[(c - 1) % 3]) : 0;
        block_lifts = 0;
      }
      __syncthreads();
      grid_lifts += last_lifts;  // all blocks read the same finished slots
      if (grid_lifts >= stop.budget && last_ns >= stop.after_ns) break;
    }
    const list_view l = ring_view(list0, list1, counts, parity + c, ring + c);
    const int size = block_read(l.count_in);
    if (size == 0 || size <= min_size) break;
    if (grid.thread_rank() == 0) {
      *l.count_clear = 0;
      ctl->cycle_lifts[(c + 1) % 3] = 0;  // read by all at c - 1, before the last sync
    }
    const unsigned long long before = lifts;
    discharge_list<persistent_block>(g, l, size, phase1, infinity, stamp + c, rules, pushes, lifts);
    if (budgeted) {
      if (lifts != before) atomicAdd(&block_lifts, lifts - before);
      __syncthreads();
      if (threadIdx.x == 0 && block_lifts) atomicAdd(&ctl->cycle_lifts[c % 3], block_lifts);
      if (grid.thread_rank() == 0) ctl->cycle_ns[c % 3] = global_ns() - start;
    }
    grid.sync();
  }
  if (grid.thread_rank() == 0) {
    ctl->tail_cycles = c;
    ctl->busy_cycles += c;
  }
  add_counts(ctl, pushes, lifts);
}

/// Up to `cycles` PR cycles in one block (__syncthreads() for the kernel
/// boundary), for short worklists, where launch latency would dominate.
/// Stops when the list empties or grows past tail_max_list, or as `stop`
/// says (the block's lifts and time); records the cycles run in
/// ctl->tail_cycles (the host advances its ring by as many).
/// `lists` and `counts` are the two buffers and the three counters; cycle c
/// reads lists[(parity + c) % 2] and counts[(ring + c) % 3].
__global__ __launch_bounds__(tail_block) void push_relabel_tail_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int parity, int* counts, int ring, bool phase1,
    label_t infinity, int stamp, int cycles, lift_stop stop, discharge_rules rules, control* ctl) {
  const long long start = global_ns();        // thread 0's
  __shared__ unsigned long long block_lifts;  // of the cycles run
  __shared__ long long elapsed;               // when thread 0 ended the last cycle
  if (threadIdx.x == 0) block_lifts = elapsed = 0;
  __syncthreads();
  unsigned long long pushes = 0, lifts = 0;
  int c = 0;
  for (; c < cycles; ++c) {
    const bool odd = ((parity + c) & 1) != 0;
    list_view l{odd ? list1 : list0, odd ? list0 : list1, &counts[(ring + c) % 3],
                &counts[(ring + c + 1) % 3], &counts[(ring + c + 2) % 3]};
    const int size = atomic_read(l.count_in);
    if (size == 0 || size > tail_max_list) break;
    if (block_lifts >= stop.budget && elapsed >= stop.after_ns) break;
    __syncthreads();  // everyone has read the size, block_lifts, elapsed before they change
    if (threadIdx.x == 0) *l.count_clear = 0;
    const unsigned long long before = lifts;
    discharge_list<tail_block>(g, l, size, phase1, infinity, stamp + c, rules, pushes, lifts);
    if (lifts != before) atomicAdd(&block_lifts, lifts - before);
    if (threadIdx.x == 0) elapsed = global_ns() - start;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ctl->tail_cycles = c;
    ctl->busy_cycles += c;
  }
  add_counts(ctl, pushes, lifts);
}

}  // namespace matchflow::cuda::ecl
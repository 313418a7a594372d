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
//                            (these four, and the BFS's deviations, in
//                            global_relabel.cuh)
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
// the cycle number, positive, increasing); a BFS step appends w only when
// atomicMin(time[w], stamp) does (its stamps negative, decreasing).
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
//  * The BFS runs alone (flows are stable); h only falls during it
//    (atomicMin), and whoever lowers a label expands the vertex.
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
#include "common/launch.cuh"
#include "maxflow/discharge.cuh"
#include "maxflow/global_relabel.cuh"
#include "maxflow/residual_view.cuh"

namespace matchflow::cuda::ecl {

constexpr int tail_block = 1024;       ///< threads of push_relabel_tail_kernel
constexpr int tail_max_list = 64;      ///< the tail kernel returns above this size
                                       ///< (two vertices per warp of its block)

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
/// (smaller lists go to push_relabel_tail_kernel).  Cycle c uses
/// ring_view(parity + c, ring + c) as the host would; the cycles run go to
/// ctl->tail_cycles.
__global__ __launch_bounds__(persistent_block) void push_relabel_persistent_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int parity, int* counts, int ring, bool phase1,
    label_t infinity, int stamp, int cycles, int min_size, discharge_rules rules, control* ctl) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  unsigned long long pushes = 0, lifts = 0;
  int c = 0;
  for (; c < cycles; ++c) {
    const list_view l = ring_view(list0, list1, counts, parity + c, ring + c);
    const int size = block_read(l.count_in);
    if (size == 0 || size <= min_size) break;
    if (grid.thread_rank() == 0) *l.count_clear = 0;
    discharge_list<persistent_block>(g, l, size, phase1, infinity, stamp + c, rules, pushes, lifts);
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
/// Stops when the list empties or grows past tail_max_list; records the
/// cycles run in ctl->tail_cycles (the host advances its ring by as many).
/// `lists` and `counts` are the two buffers and the three counters; cycle c
/// reads lists[(parity + c) % 2] and counts[(ring + c) % 3].
__global__ __launch_bounds__(tail_block) void push_relabel_tail_kernel(
    graph_view g, vertex_t* list0, vertex_t* list1, int parity, int* counts, int ring, bool phase1,
    label_t infinity, int stamp, int cycles, discharge_rules rules, control* ctl) {
  unsigned long long pushes = 0, lifts = 0;
  int c = 0;
  for (; c < cycles; ++c) {
    const bool odd = ((parity + c) & 1) != 0;
    list_view l{odd ? list1 : list0, odd ? list0 : list1, &counts[(ring + c) % 3],
                &counts[(ring + c + 1) % 3], &counts[(ring + c + 2) % 3]};
    const int size = atomic_read(l.count_in);
    if (size == 0 || size > tail_max_list) break;
    __syncthreads();  // everyone has read the size before it is cleared
    if (threadIdx.x == 0) *l.count_clear = 0;
    discharge_list<tail_block>(g, l, size, phase1, infinity, stamp + c, rules, pushes, lifts);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ctl->tail_cycles = c;
    ctl->busy_cycles += c;
  }
  add_counts(ctl, pushes, lifts);
}

}  // namespace matchflow::cuda::ecl
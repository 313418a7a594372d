// G-PR device code: GPU push-relabel maximum cardinality bipartite matching.
//
// Paper 000: Deveci, Kaya, Ucar, Catalyurek, "A Push-Relabel-Based Maximum
// Cardinality Bipartite Matching Algorithm on GPUs", ICPP 2013, section III.
// Kernels, with the paper's names:
//   init_relabel_kernel  INITRELABEL            (Algorithm 4, line 1)
//   gr_level_kernel      G-GR-KRNL              (Algorithm 5), one BFS level
//   gr_frontier_kernel   G-GR-KRNL over a row queue (default; see there)
//   pr_init_kernel       G-PR-INITKRNL          (Algorithm 8)
//   pr_push_kernel       G-PR-PUSHKRNL          (Algorithm 9)
//   pr_tail_kernel       Algorithm 7 lines 16-20 repeated in one block (short lists)
//   active_in_list / active_column             predicates of G-PR-SHRKRNL
//                                              (the compaction itself is
//                                              cub::DeviceSelect, host side)
//   fix_matching_kernel  FIXMATCHING            (Algorithm 7, line 23)
// The host loop (Algorithm 7) is in gpr_dispatch.cu.
//
// Terms.  Rows u in V_R, columns v in V_C.  The paper's single mate array mu
// is split into col4row (mu on rows) and row4col (mu on columns); psi into
// psi_row / psi_col.  infinity = m + n (capped below INT32_MAX, see
// gpr_dispatch.cu): a label >= infinity means "cannot reach an unmatched row".
// A column v is *active* when it is not matched consistently:
// row4col[v] < 0 (-1 unmatched, -2 given up) or col4row[row4col[v]] != v.
// Rows are always consistent at kernel boundaries (col4row[u] = v >= 0
// implies row4col[v] = u), so the row side is the matching.
//
// Concurrency (as the paper: no locks, no atomic read-modify-write in the
// push-relabel part).  Several columns may push onto the same row u in one
// PUSH launch; the last store to col4row[u] wins and the losers stay active
// (their row4col still names u, but col4row[u] does not name them).  Those
// raced loads/stores go through atomic_read/atomic_write (relaxed), so they
// are visible in the code and never torn or cached.
//
// Deviations from the text of paper 000 (its pseudocode of Algorithms 8/9 is
// ambiguous about which slot keeps which column after a conflict):
//  * Slot semantics.  A_c(i) is the column slot i processes in this
//    iteration; PUSH writes into A_p(i) the column w its push displaced (or
//    -1).  INIT (Algorithm 8) then decides slot i's next column from the
//    facts, not from A_p alone: if A_c(i) is still active (its push lost a
//    race, was blocked by the iA check, or never happened) it stays
//    (the roll-back); if it gave up (row4col = -2) the slot empties; else
//    its push won and the slot takes w (when w is indeed active now).  With
//    the iA check this keeps every active column in exactly one slot: only
//    the winner on a row hands over the row's old column.  The paper's "swap
//    A_c and A_p" is then not needed.
//  * A push that the iA check forbids (Algorithm 9, line 13 false) leaves
//    the column active and its slot unchanged; it retries next iteration.
//  * Shrink (G-PR-SHRKRNL) is INIT followed by a stable CUB compaction of the
//    slots whose column is active and has a finite label; unreachable
//    columns are dropped there (their label after a global relabel is
//    exact, so they cannot reach an unmatched row).
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "common/atomics.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda::gpr {

using label_t = std::int32_t;

constexpr vertex_t none = -1;           ///< unmatched / empty slot
constexpr vertex_t given_up = -2;       ///< column found no row with a finite label (Alg. 9 l. 20)
constexpr int warp_degree = 32;         ///< columns of larger degree are scanned by a whole warp
constexpr int flag_ring = 4;            ///< ring of per-level BFS flags (see gr_level_kernel)
constexpr int scan_chunk = 4;           ///< neighbours whose labels one thread loads at once
constexpr int bfs_lanes = 4;            ///< threads sharing one frontier row in gr_frontier_kernel
constexpr offset_t block_degree = 512;  ///< frontier rows of larger degree: scanned by a block

/// Device-side counters and flags of one solve (one allocation).
struct control {
  int level_added[flag_ring];  ///< uAdded of Algorithm 4, one per BFS level (ring)
  int act_exists[2];           ///< actExists of Algorithm 7, one per loop parity
  int max_level;               ///< maxLevel of Algorithm 4
  int num_active;              ///< |A_c| after a compaction (cub output)
  int queue_size[3];           ///< frontier BFS: sizes of the row queues (ring)
  int tail_iterations;         ///< iterations pr_tail_kernel ran
};

/// Column v is not consistently matched (paper: mu(v) = -1 or mu(mu(v)) != v).
__device__ inline bool column_active(vertex_t v, const vertex_t* row4col, const vertex_t* col4row) {
  const vertex_t u = row4col[v];
  return u < 0 || col4row[u] != v;
}

/// Sets *flag = 1 when any thread of the block has `value` (one store per
/// block, and none when the flag is already up: thousands of threads storing
/// to one address serialise in L2).  Every thread of the block must call it.
__device__ inline void raise_flag(int* flag, bool value) {
  if (__syncthreads_or(value) && threadIdx.x == 0 && atomic_read(flag) == 0) {
    atomic_write(flag, 1);
  }
}

// ---------------------------------------------------------------------------
// Global relabeling (Algorithms 4 and 5)
// ---------------------------------------------------------------------------

/// INITRELABEL: psi(u) = 0 for unmatched rows, infinity for every other vertex.
/// Thread mapping: one thread per row and per column (grid over max(m, n)).
/// safe: psi_row, psi_col (one writer each); ctl written by thread 0 only.
__global__ __launch_bounds__(threads_per_block) void init_relabel_kernel(
    vertex_t m, vertex_t n, const vertex_t* __restrict__ col4row, label_t* __restrict__ psi_row,
    label_t* __restrict__ psi_col, label_t infinity, control* __restrict__ ctl) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < m) psi_row[i] = col4row[i] == none ? 0 : infinity;
  if (i < n) psi_col[i] = infinity;
  if (i == 0) {
    for (int k = 0; k < flag_ring; ++k) ctl->level_added[k] = 0;
    ctl->level_added[flag_ring - 1] = 1;  // "level -1 added rows": level 0 runs
    ctl->max_level = 0;
    for (int k = 0; k < 3; ++k) ctl->queue_size[k] = 0;
  }
}

/// G-GR-KRNL (Algorithm 5) for BFS level `level` (= cLevel, even).  Rows
/// with psi(u) = cLevel visit their unvisited columns (psi = cLevel + 1) and
/// those columns' mates (psi = cLevel + 2).  The launch for level L runs
/// only if level L - 2 added a row (ring slot (L/2 - 1) mod 4), so the host
/// can enqueue several levels without reading uAdded in between.  Thread 0
/// clears the slot of level L + 2 (nobody else touches it during this launch)
/// and records maxLevel = L + 2 (Algorithm 4, line 8).
/// Thread mapping: one thread per row.
/// sync: psi_col, psi_row (several threads may store the same value into one
///       entry and read entries others store: intentional, relaxed atomics);
///       ctl->level_added[slot] (raise_flag: one idempotent store per block).
/// safe: col4row, row4col (read only during a global relabel).
__global__ __launch_bounds__(threads_per_block) void gr_level_kernel(
    vertex_t m, const offset_t* __restrict__ row_ptr, const vertex_t* __restrict__ row_adj,
    const vertex_t* __restrict__ col4row, const vertex_t* __restrict__ row4col, label_t* psi_row,
    label_t* psi_col, label_t infinity, int level, control* ctl) {
  const int step = level / 2;
  const int prev_slot = (step + flag_ring - 1) % flag_ring;
  const int this_slot = step % flag_ring;
  if (blockIdx.x == 0 && threadIdx.x == 0) ctl->level_added[(step + 1) % flag_ring] = 0;
  if (atomic_read(&ctl->level_added[prev_slot]) == 0) return;  // BFS already finished
  if (blockIdx.x == 0 && threadIdx.x == 0) ctl->max_level = level + 2;

  const std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool added = false;
  if (u < m && atomic_read(&psi_row[u]) == level) {           // Alg. 5 line 2
    for (offset_t e = row_ptr[u]; e < row_ptr[u + 1]; ++e) {  // line 3
      const vertex_t v = row_adj[e];
      if (atomic_read(&psi_col[v]) != infinity) continue;  // line 4
      atomic_write(&psi_col[v], label_t(level + 1));       // line 5
      const vertex_t w = row4col[v];
      if (w >= 0 && col4row[w] == v) {                  // line 6
        atomic_write(&psi_row[w], label_t(level + 2));  // line 7
        added = true;                                   // line 8
      }
    }
  }
  raise_flag(&ctl->level_added[this_slot], added);
}

/// One BFS edge of the frontier form: claim column v for level L + 1 and
/// queue its mate.
__device__ inline void frontier_visit(vertex_t v, const vertex_t* __restrict__ col4row,
                                      const vertex_t* __restrict__ row4col,
                                      label_t* __restrict__ psi_row, label_t* psi_col,
                                      label_t infinity, int level, vertex_t* __restrict__ q_out,
                                      int* tail) {
  if (atomic_read(&psi_col[v]) != infinity) return;
  if (atomicCAS(&psi_col[v], infinity, label_t(level + 1)) != infinity) return;
  const vertex_t w = row4col[v];
  if (w < 0 || col4row[w] != v) return;  // v unmatched: nothing to add
  psi_row[w] = level + 2;
  const auto group = cooperative_groups::coalesced_threads();
  int base = 0;
  if (group.thread_rank() == 0) base = atomicAdd(tail, int(group.size()));
  base = group.shfl(base, 0);
  q_out[base + int(group.thread_rank())] = w;
}

/// Frontier form of G-GR-KRNL (the default; gr_level_kernel is the paper's
/// form): instead of testing psi(u) = cLevel on every row, level L takes its
/// rows from a queue (level 0: the unmatched rows, selected with CUB) and
/// appends the rows it labels to the next queue, so a level costs in
/// proportion to its frontier, not to m.  Deviation from the paper: a column
/// is claimed with atomicCAS (INF -> L + 1) so that its mate enters the next
/// queue exactly once, and appends use one atomicAdd per coalesced group.
/// Queue sizes live in a ring of 3 (read the current, append to the next,
/// thread 0 clears the one after), so the host need not read them per level.
/// Thread mapping: rounds over the queue, bfs_lanes threads per frontier
/// row; a row of degree > block_degree (R-MAT hubs) is listed in shared
/// memory and scanned by the whole block.  Every thread of a block runs the
/// same number of rounds (block barriers inside).
/// sync: psi_col (atomicCAS), ctl->queue_size[next] (atomicAdd).
/// safe: psi_row[w] (only the claimer of w's column writes it); q_out slots
///       (reserved by atomicAdd); col4row, row4col, q_in (read only);
///       hubs / n_hubs (shared, written between barriers).
__global__ __launch_bounds__(threads_per_block) void gr_frontier_kernel(
    const offset_t* __restrict__ row_ptr, const vertex_t* __restrict__ row_adj,
    const vertex_t* __restrict__ col4row, const vertex_t* __restrict__ row4col,
    label_t* __restrict__ psi_row, label_t* psi_col, label_t infinity, int level,
    const vertex_t* __restrict__ q_in, vertex_t* __restrict__ q_out, control* ctl) {
  __shared__ vertex_t hubs[threads_per_block];
  __shared__ int n_hubs;
  const int step = level / 2;
  if (blockIdx.x == 0 && threadIdx.x == 0) ctl->queue_size[(step + 2) % 3] = 0;
  const int size = ctl->queue_size[step % 3];  // written by the previous launch
  if (size == 0) return;                       // BFS finished (uniform)
  if (blockIdx.x == 0 && threadIdx.x == 0) ctl->max_level = level + 2;
  int* tail = &ctl->queue_size[(step + 1) % 3];
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t items = std::int64_t(size) * bfs_lanes;
  const std::int64_t rounds = (items + stride - 1) / stride;
  if (threadIdx.x == 0) n_hubs = 0;
  __syncthreads();
  // bfs_lanes threads per row, each taking every bfs_lanes-th edge (stride
  // is a multiple of bfs_lanes, so a thread keeps its lane).
  for (std::int64_t r = 0; r < rounds; ++r) {
    const std::int64_t t = r * stride + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < items) {
      const vertex_t u = q_in[t / bfs_lanes];
      const offset_t begin = row_ptr[u], end = row_ptr[u + 1];
      if (end - begin > block_degree) {
        if (t % bfs_lanes == 0) hubs[atomicAdd(&n_hubs, 1)] = u;
      } else {
        for (offset_t e = begin + t % bfs_lanes; e < end; e += bfs_lanes)
          frontier_visit(row_adj[e], col4row, row4col, psi_row, psi_col, infinity, level, q_out,
                         tail);
      }
    }
    __syncthreads();  // the hub list is complete
    const int n = n_hubs;
    for (int h = 0; h < n; ++h) {
      const vertex_t u = hubs[h];
      const offset_t end = row_ptr[u + 1];
      for (offset_t e = row_ptr[u] + threadIdx.x; e < end; e += blockDim.x)
        frontier_visit(row_adj[e], col4row, row4col, psi_row, psi_col, infinity, level, q_out,
                       tail);
    }
    __syncthreads();  // everyone has read the list
    if (threadIdx.x == 0) n_hubs = 0;
    __syncthreads();
  }
}

/// Level-0 queue of the frontier BFS: the unmatched rows.
struct unmatched_row {
  const vertex_t* col4row;
  __device__ bool operator()(vertex_t u) const { return col4row[u] == none; }
};

// ---------------------------------------------------------------------------
// Push-relabel on the active-column lists (Algorithms 8 and 9)
// ---------------------------------------------------------------------------

/// G-PR-INITKRNL (Algorithm 8): fixes slot i after the previous PUSH launch
/// (see the header for the rule), stamps iA(v) = loop for the slot's column
/// and sets actExists.  Idempotent, so it also serves as the "fix" step of
/// the shrink and as a plain stamp on a freshly built list.
/// Thread mapping: one thread per slot i < count.
/// safe: a_c[i], a_p[i] (slot owner only); ia (each active column is in one
///       slot); col4row, row4col (read only: no PUSH runs concurrently).
/// sync: ctl->act_exists (raise_flag; thread 0 clears the next parity).
__device__ inline vertex_t init_slot(std::int64_t i, int count, vertex_t* __restrict__ a_c,
                                     const vertex_t* __restrict__ a_p, const vertex_t* col4row,
                                     const vertex_t* row4col, int* __restrict__ ia, int loop) {
  vertex_t v = i < count ? a_c[i] : none;
  if (v == none) return none;
  if (!column_active(v, row4col, col4row)) {  // v's push won: the slot takes w
    const vertex_t w = a_p[i];
    v = (w != none && column_active(w, row4col, col4row)) ? w : none;
  } else if (row4col[v] == given_up) {  // v gave up (Alg. 9 line 20)
    v = none;
  }  // else: roll back, v stays
  a_c[i] = v;
  if (v != none) ia[v] = loop;  // Alg. 8 line 10
  return v;
}

__global__ __launch_bounds__(threads_per_block) void pr_init_kernel(
    int count, vertex_t* __restrict__ a_c, const vertex_t* __restrict__ a_p,
    const vertex_t* __restrict__ col4row, const vertex_t* __restrict__ row4col,
    int* __restrict__ ia, int loop, control* ctl) {
  if (blockIdx.x == 0 && threadIdx.x == 0) ctl->act_exists[(loop + 1) & 1] = 0;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const vertex_t v = init_slot(i, count, a_c, a_p, col4row, row4col, ia, loop);
  raise_flag(&ctl->act_exists[loop & 1], v != none);  // line 11
}

/// Result of scanning Gamma(v): the row of minimum label and that label.
struct min_row {
  vertex_t u;
  label_t psi;
};

/// Algorithm 9 lines 4-11 by one thread: first row of minimum label, stopping
/// early at an admissible row (psi(u) = psi(v) - 1, the lower bound).
__device__ inline min_row scan_thread(vertex_t v, const offset_t* __restrict__ col_ptr,
                                      const vertex_t* __restrict__ col_adj, const label_t* psi_row,
                                      label_t psi_v, label_t infinity) {
  // Neighbours are read `scan_chunk` at a time so that their loads overlap
  // (a low-degree column costs one round trip, not one per neighbour); the
  // early stop is tested after each chunk.
  min_row best{none, infinity};
  const offset_t end = col_ptr[v + 1];
  for (offset_t e = col_ptr[v]; e < end; e += scan_chunk) {
    vertex_t u[scan_chunk];
    label_t p[scan_chunk];
#pragma unroll
    for (int k = 0; k < scan_chunk; ++k) u[k] = e + k < end ? col_adj[e + k] : none;
#pragma unroll
    for (int k = 0; k < scan_chunk; ++k)
      p[k] = u[k] != none ? atomic_read(&psi_row[u[k]]) : infinity;
#pragma unroll
    for (int k = 0; k < scan_chunk; ++k) {
      if (p[k] < best.psi) best = {u[k], p[k]};
    }
    if (best.psi <= psi_v - 1) break;
  }
  return best;
}

/// The same scan by a whole warp (for columns of high degree): lanes read
/// 32 neighbours at a time, a warp min-reduction picks the smallest label
/// (lowest lane on ties), and the warp stops after the chunk that reached
/// the lower bound.  All 32 lanes must call it with the same v.
__device__ inline min_row scan_warp(vertex_t v, const offset_t* __restrict__ col_ptr,
                                    const vertex_t* __restrict__ col_adj, const label_t* psi_row,
                                    label_t psi_v, label_t infinity, int lane) {
  min_row best{none, infinity};
  const offset_t begin = col_ptr[v], end = col_ptr[v + 1];
  for (offset_t base = begin; base < end; base += warp_size) {
    const offset_t e = base + lane;
    vertex_t u = none;
    label_t p = infinity;
    if (e < end) {
      u = col_adj[e];
      p = atomic_read(&psi_row[u]);
    }
    const label_t chunk_min = label_t(__reduce_min_sync(0xffffffffu, static_cast<unsigned>(p)));
    if (chunk_min < best.psi) {
      const unsigned holders = __ballot_sync(0xffffffffu, p == chunk_min);
      const vertex_t chunk_u = __shfl_sync(0xffffffffu, u, __ffs(holders) - 1);
      best = {chunk_u, chunk_min};
      if (chunk_min == psi_v - 1) break;  // uniform across the warp
    }
  }
  return best;
}

/// Algorithm 9 lines 12-22 for column v (slot i) given the scan result.
/// Returns nothing; writes the matching, labels and a_p[i].
__device__ inline void push_or_give_up(int i, vertex_t v, min_row best, vertex_t* a_c,
                                       vertex_t* a_p, vertex_t* col4row, vertex_t* row4col,
                                       label_t* psi_row, label_t* psi_col, const int* ia, int loop,
                                       label_t infinity) {
  if (best.psi >= infinity) {  // lines 19-22: v cannot reach an unmatched row
    row4col[v] = given_up;
    a_c[i] = none;
    a_p[i] = none;
    return;
  }
  const vertex_t u = best.u;
  const vertex_t w = atomic_read(&col4row[u]);  // u's current column
  // Line 13: w must not be a column that is active in this iteration
  // (it may have pushed onto u in this very launch); else retry later.
  if (w != none && ia[w] == loop) {
    a_p[i] = none;
    return;
  }
  atomic_write(&col4row[u], v);                      // line 14 (raced: last wins)
  row4col[v] = u;                                    // line 15
  psi_col[v] = best.psi + 1;                         // line 16
  atomic_write(&psi_row[u], label_t(best.psi + 2));  // line 17
  a_p[i] = w;                                        // line 18: displaced column
}

/// G-PR-PUSHKRNL (Algorithm 9).  Thread mapping: one thread per slot
/// i < count; a column of degree > warp_degree is scanned by its whole warp
/// (the lanes take turns, in ballot order), then its own lane pushes.
/// sync: col4row, psi_row (raced between columns pushing onto the same row:
///       relaxed atomics; the last store wins, see the header).
/// safe: row4col[v], psi_col[v] (only v's slot touches v: each active column
///       is in one slot); a_c[i], a_p[i] (slot owner); ia (read only).
__device__ inline void push_slot(std::int64_t i, int count, vertex_t v, vertex_t* a_c,
                                 vertex_t* a_p, const offset_t* __restrict__ col_ptr,
                                 const vertex_t* __restrict__ col_adj, vertex_t* col4row,
                                 vertex_t* row4col, label_t* psi_row, label_t* psi_col,
                                 const int* ia, int loop, label_t infinity) {
  const int lane = threadIdx.x % warp_size;
  const bool has = v != none;  // line 3
  const label_t psi_v = has ? psi_col[v] : 0;
  const bool wide = has && (col_ptr[v + 1] - col_ptr[v]) > warp_degree;

  min_row best{none, infinity};
  if (has && !wide) best = scan_thread(v, col_ptr, col_adj, psi_row, psi_v, infinity);
  // Whole-warp scans; every lane of the warp reaches this loop (no early
  // return above), so the full-mask shuffles are safe.
  unsigned wide_lanes = __ballot_sync(0xffffffffu, wide);
  while (wide_lanes) {
    const int owner = __ffs(wide_lanes) - 1;
    wide_lanes &= wide_lanes - 1;
    const vertex_t wv = __shfl_sync(0xffffffffu, v, owner);
    const label_t wpsi = __shfl_sync(0xffffffffu, psi_v, owner);
    const min_row r = scan_warp(wv, col_ptr, col_adj, psi_row, wpsi, infinity, lane);
    if (lane == owner) best = r;
  }
  if (!has) {
    if (i < count) a_p[i] = none;  // lines 23-24
    return;
  }
  push_or_give_up(int(i), v, best, a_c, a_p, col4row, row4col, psi_row, psi_col, ia, loop,
                  infinity);
}

__global__ __launch_bounds__(threads_per_block) void pr_push_kernel(
    int count, vertex_t* __restrict__ a_c, vertex_t* __restrict__ a_p,
    const offset_t* __restrict__ col_ptr, const vertex_t* __restrict__ col_adj, vertex_t* col4row,
    vertex_t* __restrict__ row4col, label_t* psi_row, label_t* __restrict__ psi_col,
    const int* __restrict__ ia, int loop, label_t infinity) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const vertex_t v = i < count ? a_c[i] : none;  // line 2
  push_slot(i, count, v, a_c, a_p, col_ptr, col_adj, col4row, row4col, psi_row, psi_col, ia, loop,
            infinity);
}

constexpr int tail_block = 1024;  ///< lists this short run in pr_tail_kernel

/// Several iterations of Algorithm 7 (lines 16-20: INIT then PUSH) in one
/// launch of one block, for short lists (count <= tail_block), where
/// launch latency, not work, bounds an iteration.  Deviation from the
/// paper's host loop, same kernels: __syncthreads() stands in for the
/// kernel boundary between INIT and PUSH and between iterations (it orders
/// the block's global-memory accesses), and actExists is the block-wide OR.
/// Stops early when no slot is active.  On exit thread 0 records the
/// iterations run and leaves actExists of the last loop value as the host
/// loop would (act_exists[last & 1] = any active, the next parity cleared).
/// Thread mapping: one block; thread i owns slot i.
/// sync/safe: as pr_init_kernel and pr_push_kernel.
__global__ __launch_bounds__(tail_block) void pr_tail_kernel(
    int count, vertex_t* __restrict__ a_c, vertex_t* __restrict__ a_p,
    const offset_t* __restrict__ col_ptr, const vertex_t* __restrict__ col_adj, vertex_t* col4row,
    vertex_t* __restrict__ row4col, label_t* psi_row, label_t* __restrict__ psi_col,
    int* __restrict__ ia, int loop0, int iterations, label_t infinity, control* ctl) {
  const std::int64_t i = threadIdx.x;
  int done = 0;
  bool active = true;
  for (; done < iterations; ++done) {
    const int loop = loop0 + done;
    const vertex_t v = init_slot(i, count, a_c, a_p, col4row, row4col, ia, loop);
    active = __syncthreads_or(v != none);  // also the INIT -> PUSH barrier
    if (!active) break;
    push_slot(i, count, v, a_c, a_p, col_ptr, col_adj, col4row, row4col, psi_row, psi_col, ia, loop,
              infinity);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const int last = loop0 + iterations - 1;
    ctl->act_exists[last & 1] = active ? 1 : 0;
    ctl->act_exists[(last + 1) & 1] = 0;
    ctl->tail_iterations = done;
  }
}

// ---------------------------------------------------------------------------
// Predicates for the CUB compactions of G-PR-SHRKRNL, and FIXMATCHING
// ---------------------------------------------------------------------------

/// Keeps a slot's column when it is active and has a finite label.
struct active_in_list {
  const vertex_t* row4col;
  const vertex_t* col4row;
  const label_t* psi_col;
  label_t infinity;
  __device__ bool operator()(vertex_t v) const {
    return v != none && psi_col[v] < infinity && column_active(v, row4col, col4row);
  }
};

/// Same predicate over all column ids (building A_c from scratch).
using active_column = active_in_list;

/// FIXMATCHING: row4col[v] = -1 wherever v is not consistently matched.
/// Thread mapping: one thread per column.  safe: everything (no other kernel
/// runs; each thread writes its own column).
__global__ __launch_bounds__(threads_per_block) void fix_matching_kernel(
    vertex_t n, const vertex_t* __restrict__ col4row, vertex_t* __restrict__ row4col) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= n) return;
  if (column_active(vertex_t(v), row4col, col4row)) row4col[v] = none;
}

}  // namespace matchflow::cuda::gpr

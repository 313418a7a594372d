// APFB / APsB device code: maximum cardinality bipartite matching by GPU
// augmenting paths.
//
// Paper 004 (Deveci, Kaya, Ucar, Catalyurek, "GPU accelerated maximum
// cardinality matching algorithms for bipartite graphs", Euro-Par 2013):
//   first_init_kernel +    INITBFSARRAY (section 3, text after Algorithm 2)
//   phase_begin_kernel
//   bfs_kernel<false, .>   Algorithm 2, GPUBFS
//   bfs_kernel<true, .>    Algorithm 4, GPUBFS-WR (root array, early exit;
//                          <true, true>: with tree grafting, see below)
//   alternate_kernel       Algorithm 3, ALTERNATE
//   fix_reset_kernel       FIXMATCHING (rmatch[r] <- -1 if cmatch[rmatch[r]]
//                          != r) fused with the next phase's INITBFSARRAY
//   graft_classify_kernel, graft_apply_kernel: the same with tree grafting
// The host driver (apfb_dispatch.cu) wires them into Algorithm 1 (APsB; APFB
// is Algorithm 1 without lines 9-10) as one CUDA graph whose two `while`
// loops are conditional nodes, so the loop control of Algorithm 1 runs on
// the device and the host never synchronizes between levels or phases.
//
// Terms.  Columns are the BFS sources (the paper's cxadj/cadj = our CSC,
// g.cols; or the graph's rows over the CSR, when the host runs the
// transposed problem: apfb_dispatch.cu, "Search side").  rmatch = col4row
// (row -> column), cmatch = row4col (column -> row).  bfs_array[c] is
// column c's BFS level: L0 - 1 = matched and not yet reached, L0 = free
// column (a BFS root), L0 + k = reached at level k.  We
// take L0 = 2 as the paper suggests, so that every "done" marker of
// GPUBFS-WR is <= 0: APFB-WR writes L0 - 2 = 0 into bfs_array[root] once the
// root's tree found an augmenting path; APsB-WR writes -(row + 1), naming
// the path's end row (the paper writes -(row); +1 keeps row 0 distinct),
// and ALTERNATE then starts only from that row (section 3, last paragraph).
//
// Thread layouts (section 4): every kernel strides over its items with
// `i * total_threads + tid` (getProcessCount); the grid is 256 x 256 (CT) or
// min(n, resident threads of the device) (MT); the host picks the grid.
//
// Deviations from the paper, for speed:
//  * Frontier queue.  The paper's BFS kernel scans every column for
//    bfs_array[c] == bfs_level (Algorithm 2 line 4), i.e. O(n_cols) work per
//    level.  Here the columns of a phase are kept in a queue in BFS order
//    (the roots, then level by level), and a level launch strides over its
//    segment [level_begin, level_end) only.  A column enters the queue when
//    its atomicCAS(bfs_array, L0 - 1, level + 1) succeeds, so it enters once
//    (the paper's plain store lets several threads insert it; that race is
//    still allowed for predecessor and root, see bfs_visit).
//  * The same queue bounds the per-phase bookkeeping: end rows are listed
//    when claimed, ALTERNATE runs over that list, and FIXMATCHING plus the
//    next phase's INITBFSARRAY run over the phase's queue and end rows
//    (mate0[c] remembers the row each queued column was matched to when it
//    was reached; those and the end rows are the only rows ALTERNATE
//    touches).  Only the first INITBFSARRAY scans all columns.
//    Queues are appended with warp-aggregated atomicAdd (push) rather than
//    CUB compaction: the appends happen inside the BFS and FIXMATCHING
//    kernels, whose sizes only the device knows.
//  * A column of degree > warp_degree is scanned by a whole warp (lanes
//    stride over its rows) instead of by its own thread, one of degree >
//    block_degree by its whole block (R-MAT hubs; on scale 20 the warp
//    form left one warp walking a 40k-row column per level).
//  * Tried and dropped: direction-optimizing (bottom-up) levels over the
//    CSR; on uniform random n = 2^22 they changed the solve time by < 5%
//    (noise), at the cost of a second copy of the graph on the device.
//  * Loop control on the device (ap_control, conditional graph nodes).
//  * Tree grafting (APFB with GPUBFS-WR; graft_* below): the forest
//    outlives its phase, as in MS-BFS-Graft (Azad, Buluc, Pothen, IEEE TPDS
//    2017).  Only the trees that found a path are torn down; a tree that
//    did not is maximal, and only its columns that met a torn-down tree
//    search again.  Its columns then hold their tree (L0 + root) in
//    bfs_array, set by the CAS that queues them, instead of a level, and
//    predecessor is written by that CAS's winner alone, so that every tree
//    is one consistent forest across phases.
// Deviations for robustness:
//  * A free row is claimed as a path end with atomicCAS(rmatch[r], -1, -2)
//    instead of a plain store, so only one thread writes its predecessor.
//    With ALTERNATE's predecessor check this guarantees progress: every BFS
//    tree holding a claimed (for APsB-WR: selected) end row gets its root
//    column written in ALTERNATE, a net +1 matched pair, so each phase that
//    found a path augments and the outer loop ends with a maximum matching.
//  * ALTERNATE guards the root step (cmatch[root] = -1 has no predecessor;
//    the paper would read predecessor[-1]).  FIXMATCHING also clears end
//    rows left at -2 (their walk lost every race).
//  * Phases are capped at min(n_rows, n_cols) + 2: unreachable when the
//    above holds, but a bug then reports an error instead of hanging.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/atomics.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda::ap {

/// BFS start level L0 (paper: "By choosing L0 as 2 ...").
constexpr int L0 = 2;
/// Columns of larger degree are scanned by a whole warp.
constexpr offset_t warp_degree = 32;
/// Columns of larger degree (R-MAT hubs: up to ~40k rows at scale 20) are
/// scanned by the whole block of the thread that dequeued them.
constexpr offset_t block_degree = 512;
constexpr unsigned full_mask = 0xffffffffu;

/// Grafting's bfs_array values: a column of root r's tree holds L0 + r
/// (the root too, while its tree has found no path); L0 - 1 and L0 - 2
/// keep their meanings (unreached; a root whose tree found its path).
__host__ __device__ constexpr int tree_mark(vertex_t root) { return L0 + root; }
__host__ __device__ constexpr vertex_t tree_of(int mark) { return mark - L0; }

/// Algorithm 1's loop state, in device memory (one per solve, zeroed).
struct ap_control {
  int bfs_level;    ///< level being expanded (Algorithm 1, bfs_level)
  int cur;          ///< which of the two queues this phase uses
  int tail;         ///< columns queued in this phase
  int next_tail;    ///< roots queued for the next phase
  int level_begin;  ///< queue segment of the current level
  int level_end;
  int level_mark;  ///< tail when the current level began: its columns are queued from here
  int kept;        ///< grafting: this phase's forest also holds queue[n_cols - kept, n_cols)
  int next_kept;   ///< ... and the next phase's
  int augmented;   ///< grafting: roots matched by the finished phases
  int n_roots;     ///< queue[0, n_roots) are this phase's roots
  int n_ends;      ///< end rows claimed in this phase
  int error;       ///< the phase cap was hit (never expected)
  unsigned int blocks_done;  ///< last-block ticket of the BFS launch
  int first_free;            ///< free columns before the first phase
  long long phases;          ///< outer iterations run
  long long bfs_levels;      ///< BFS launches run
};

/// Everything the kernels read or write; passed by value to every kernel.
struct ap_args {
  vertex_t n_rows, n_cols;
  const offset_t* __restrict__ cxadj;  ///< column offsets, n_cols + 1
  const vertex_t* __restrict__ cadj;   ///< column -> row ids
  vertex_t* rmatch;                    ///< row -> column (col4row)
  vertex_t* cmatch;                    ///< column -> row (row4col)
  vertex_t* predecessor;               ///< row -> column that reached it
  int* bfs_array;                      ///< column -> BFS level / marker
  vertex_t* root;                      ///< column -> root of its BFS tree (WR only;
                                       ///< grafting: the column's class, graft_class)
  int4* touch;                         ///< grafting: column -> trees its last scan met
  vertex_t* mate0;                     ///< queued column -> its row when reached
  vertex_t* queue[2];                  ///< per-phase column queues (ping-pong)
  vertex_t* ends;                      ///< end rows claimed in this phase
  ap_control* ctl;
  long long max_phases;
  cudaGraphConditionalHandle level_loop;  ///< inner while (BFS levels)
  cudaGraphConditionalHandle phase_loop;  ///< outer while (phases)
  bool shortest;                          ///< APsB: stop the BFS at the first path
};

__device__ inline std::int64_t global_tid() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t total_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// ---------------------------------------------------------------------------
// INITBFSARRAY for the first phase: every column.  Thread mapping: column
// c = i * total + tid.  Free columns are queued as roots (into queue[1],
// which the first phase_begin_kernel selects).  Deviation: a column with no
// rows is not a root (it can never be matched; R-MAT scale 20 has ~500k of
// them, which every phase would otherwise queue again); it is marked
// unreached, which nothing can change, since no row leads to it.
// sync: ctl->next_tail (atomic)
// safe: bfs_array, root (own entries), cmatch (read only)
template <bool WR, bool GRAFT>
__global__ __launch_bounds__(threads_per_block) void first_init_kernel(const ap_args a) {
  const std::int64_t tot = total_threads();
  for (std::int64_t c = global_tid(); c < a.n_cols; c += tot) {
    const bool is_free = a.cmatch[c] == -1 && a.cxadj[c + 1] > a.cxadj[c];
    const int root_mark = GRAFT ? tree_mark(static_cast<vertex_t>(c)) : L0;
    a.bfs_array[c] = is_free ? root_mark : L0 - 1;
    if (is_free) {
      if (WR) a.root[c] = static_cast<vertex_t>(c);
      push(a.queue[1], &a.ctl->next_tail, static_cast<vertex_t>(c));
    }
  }
}

// ---------------------------------------------------------------------------
// Start of a phase (Algorithm 1 lines 3-5), one thread: switch to the queue
// the previous phase filled with the remaining free columns.
__global__ void phase_begin_kernel(const ap_args a) {
  ap_control* ctl = a.ctl;
  if (ctl->phases == 0) ctl->first_free = ctl->next_tail;
  ctl->cur ^= 1;
  ctl->tail = ctl->next_tail;
  ctl->next_tail = 0;
  ctl->kept = ctl->next_kept;
  ctl->next_kept = 0;
  ctl->n_roots = ctl->tail;
  ctl->level_begin = 0;
  ctl->level_end = ctl->tail;
  ctl->level_mark = ctl->tail;
  ctl->n_ends = 0;
  ctl->bfs_level = L0;
  ctl->blocks_done = 0;
  ctl->phases += 1;
  cudaGraphSetConditional(a.level_loop, ctl->tail > 0 ? 1u : 0u);
}

// ---------------------------------------------------------------------------
// One BFS edge (column c at `level` -> row), Algorithm 2 lines 6-17 /
// Algorithm 4 lines 9-22.
template <bool WR>
__device__ inline void bfs_visit(const ap_args& a, vertex_t* q, vertex_t c, vertex_t row, int level,
                                 vertex_t my_root) {
  // Benign race: rmatch[row] may turn -1 -> -2 under us (another thread
  // claims it as a path end); both values mean "free row" below.
  const vertex_t col_match = atomic_read(&a.rmatch[row]);
  if (col_match >= 0) {
    if (atomic_read(&a.bfs_array[col_match]) != L0 - 1) return;
    // Benign race (paper): several level-`level` columns may reach the
    // same row; each writes a valid level-`level` predecessor (and, WR, a
    // root), and any winner gives a valid BFS forest.  The CAS only decides
    // who queues col_match.
    atomic_write(&a.predecessor[row], c);
    if (WR) atomic_write(&a.root[col_match], my_root);
    if (atomicCAS(&a.bfs_array[col_match], L0 - 1, level + 1) == L0 - 1) {
      a.mate0[col_match] = row;
      push(q, &a.ctl->tail, col_match);
    }
  } else if (col_match == -1) {
    // Deviation: claim the free row once, so that its predecessor (and the
    // APsB-WR end-row marker) is written by one thread only.
    if (atomicCAS(&a.rmatch[row], vertex_t{-1}, vertex_t{-2}) == -1) {
      atomic_write(&a.predecessor[row], c);
      if (WR) atomic_write(&a.bfs_array[my_root], a.shortest ? -(row + 1) : L0 - 2);
      push(a.ends, &a.ctl->n_ends, row);
    }
  }
}

// ---------------------------------------------------------------------------
// Grafting's bookkeeping: the other trees one column's scan met.  After the
// phase the column searches again only if one of them was torn down
// (graft_classify_kernel); a column that met more than `touch_slots` trees,
// or a free row another tree claimed (whose tree is torn down for sure),
// or that a warp or block scanned, is "many": it searches again whenever
// any tree was torn down.  A model of the phases on R-MAT 2^16 (edge factor
// 8; benchmarks/apfb_phase_model.py) scanned 241k edges with 4 slots, 202k
// with exact sets and 335k without grafting (NOTES.md, "APFB's tree
// grafting").
constexpr int touch_slots = 4;
constexpr vertex_t met_many = -2;  ///< touch.x of a "many" column
constexpr int4 met_none{-1, -1, -1, -1};
constexpr int4 met_all{met_many, -1, -1, -1};

struct touches {
  vertex_t t[touch_slots] = {-1, -1, -1, -1};
  int n = 0;
  __device__ void add(vertex_t root) {
    if (n > touch_slots) return;
    bool seen = false;
#pragma unroll
    for (int i = 0; i < touch_slots; ++i) seen |= t[i] == root;
    if (seen) return;
#pragma unroll
    for (int i = 0; i < touch_slots; ++i) {
      if (i == n) t[i] = root;
    }
    ++n;
  }
  __device__ void add_many() { n = touch_slots + 1; }
  __device__ int4 packed() const {
    return n > touch_slots ? met_all : int4{t[0], t[1], t[2], t[3]};
  }
};

/// A met tree's root, or met_many (a claimed free row), or -1 (nothing met).
constexpr vertex_t met_nothing = -1;

/// One BFS edge with grafting (bfs_visit's APFB-WR case): the CAS that
/// queues col_match writes its tree, and its winner alone the predecessor,
/// so that the forest is consistent when it outlives the phase.
__device__ inline vertex_t graft_visit(const ap_args& a, vertex_t* q, vertex_t c, vertex_t row,
                                       vertex_t my_root) {
  const vertex_t col_match = atomic_read(&a.rmatch[row]);
  if (col_match >= 0) {
    int seen = atomic_read(&a.bfs_array[col_match]);
    if (seen == L0 - 1) {
      seen = atomicCAS(&a.bfs_array[col_match], L0 - 1, tree_mark(my_root));
      if (seen == L0 - 1) {
        atomic_write(&a.predecessor[row], c);
        a.mate0[col_match] = row;
        push(q, &a.ctl->tail, col_match);
        return met_nothing;
      }
    }
    // A matched column is never a root, so `seen` is a tree's mark.
    const vertex_t other = tree_of(seen);
    return other == my_root ? met_nothing : other;
  }
  if (col_match == -1 && atomicCAS(&a.rmatch[row], vertex_t{-1}, vertex_t{-2}) == -1) {
    atomic_write(&a.predecessor[row], c);
    atomic_write(&a.bfs_array[my_root], L0 - 2);
    push(a.ends, &a.ctl->n_ends, row);
    return met_nothing;
  }
  return met_many;  // a free row another tree claimed
}

/// GPUBFS-WR's early exit (Algorithm 4 lines 6-7): whether `root`'s tree has
/// not found its path yet.  Checked per column, and again per pass over a
/// wide or hub column: a hub's tree often finds its path in the first passes
/// (R-MAT), and the rest of its scan would be wasted.  Benign race: the
/// marker may appear during a launch; exploring a finished tree is only
/// wasted work.
template <bool WR>
__device__ inline bool tree_live(const ap_args& a, vertex_t root) {
  return !WR || atomic_read(&a.bfs_array[root]) >= L0 - 1;
}

/// The last block of a BFS launch decides whether the level loop goes on.
__device__ inline void bfs_level_done(const ap_args& a) {
  ap_control* ctl = a.ctl;
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  const unsigned ticket = atomicAdd(&ctl->blocks_done, 1u);
  if (ticket != gridDim.x - 1) return;
  __threadfence();
  const int tail = atomic_read(&ctl->tail);
  const bool any_found = atomic_read(&ctl->n_ends) > 0;
  // Algorithm 1 lines 6-11 (APFB drops lines 9-10): go on while the level
  // inserted a column (the queue grew) and, for APsB, no path was found.
  const bool go_on = tail > ctl->level_mark && !(a.shortest && any_found);
  ctl->level_begin = ctl->level_mark;
  ctl->level_end = tail;
  ctl->level_mark = tail;
  ctl->blocks_done = 0;
  ctl->bfs_level += 1;
  ctl->bfs_levels += 1;
  cudaGraphSetConditional(a.level_loop, go_on ? 1u : 0u);
}

/// One edge of a BFS level: bfs_visit, or graft_visit recording what it met.
template <bool WR, bool GRAFT>
__device__ inline void visit(const ap_args& a, vertex_t* q, vertex_t c, vertex_t row, int level,
                             vertex_t my_root, touches& met) {
  if constexpr (GRAFT) {
    const vertex_t other = graft_visit(a, q, c, row, my_root);
    if (other == met_many) {
      met.add_many();
    } else if (other != met_nothing) {
      met.add(other);
    }
  } else {
    bfs_visit<WR>(a, q, c, row, level, my_root);
  }
}

/// A queued column's tree and whether it is still live (GPUBFS-WR), from
/// root[] or (grafting) from the column's own mark.
template <bool WR, bool GRAFT>
__device__ inline bool queued_tree(const ap_args& a, vertex_t c, vertex_t& my_root) {
  if constexpr (GRAFT) {
    const int mark = atomic_read(&a.bfs_array[c]);
    if (mark == L0 - 2) return false;  // c is a root whose tree found its path
    my_root = tree_of(mark);           // stable: written by the CAS that queued c
  } else if constexpr (WR) {
    my_root = a.root[c];  // stable: written before c was queued
  }
  return tree_live<WR>(a, my_root);
}

// ---------------------------------------------------------------------------
// GPUBFS (WR = false, Algorithm 2) and GPUBFS-WR (WR = true, Algorithm 4):
// one BFS level.  Thread mapping: queue entry k = level_begin + i * total +
// tid; a column of degree > warp_degree is handed to its whole warp (lanes
// stride over its rows), one of degree > block_degree to its whole block
// (listed in shared memory, then the block's threads stride over its rows).
// All threads of a block run the same number of rounds so that the warp
// and block collectives see every thread.
// sync: rmatch (-1 -> -2 by CAS), bfs_array (CAS), root, predecessor
//       (benign races, see bfs_visit), ctl->tail, ctl->n_ends (atomic),
//       ctl (last-block ticket)
// safe: cxadj, cadj (read only), mate0 (one writer per column: the CAS
//       winner), touch (grafting: written once per scanned column, by its
//       thread, warp leader or block's thread 0), hub_c / hub_root / n_hubs
//       (shared; written between barriers)
template <bool WR, bool GRAFT>
__global__ __launch_bounds__(threads_per_block) void bfs_kernel(const ap_args a) {
  __shared__ vertex_t hub_c[threads_per_block];
  __shared__ vertex_t hub_root[threads_per_block];
  __shared__ int n_hubs;
  const ap_control* ctl = a.ctl;
  // Written by the previous launch (or phase_begin) only.
  const int level = ctl->bfs_level;
  const int begin = ctl->level_begin, end = ctl->level_end;
  vertex_t* const q = a.queue[ctl->cur];
  const std::int64_t tot = total_threads();
  const std::int64_t rounds = (end - begin + tot - 1) / tot;
  const int lane = threadIdx.x % warp_size;
  if (threadIdx.x == 0) n_hubs = 0;
  __syncthreads();
  for (std::int64_t i = 0; i < rounds; ++i) {
    const std::int64_t k = begin + i * tot + global_tid();
    vertex_t c = -1, my_root = -1;
    bool wide = false;
    if (k < end) {
      c = q[k];
      if (queued_tree<WR, GRAFT>(a, c, my_root)) {
        const offset_t b = a.cxadj[c], e = a.cxadj[c + 1];
        if (e - b > block_degree) {
          const int slot = atomicAdd(&n_hubs, 1);
          hub_c[slot] = c;
          hub_root[slot] = my_root;
        } else if (e - b > warp_degree) {
          wide = true;
        } else {
          touches met;
          for (offset_t j = b; j < e; ++j)
            visit<WR, GRAFT>(a, q, c, a.cadj[j], level, my_root, met);
          if (GRAFT) a.touch[c] = met.packed();
        }
      }
    }
    for (unsigned wide_lanes = __ballot_sync(full_mask, wide); wide_lanes;
         wide_lanes &= wide_lanes - 1) {
      const int leader = __ffs(wide_lanes) - 1;
      const vertex_t wc = __shfl_sync(full_mask, c, leader);
      const vertex_t wroot = __shfl_sync(full_mask, my_root, leader);
      const offset_t e = a.cxadj[wc + 1];
      touches met;
      for (offset_t j = a.cxadj[wc] + lane; j < e && tree_live<WR>(a, wroot); j += warp_size)
        visit<WR, GRAFT>(a, q, wc, a.cadj[j], level, wroot, met);
      if (GRAFT) {
        const bool any_met = __any_sync(full_mask, met.n > 0);
        if (lane == leader) a.touch[wc] = any_met ? met_all : met_none;
      }
    }
    __syncthreads();  // the hub list is complete
    const int hubs = n_hubs;
    for (int h = 0; h < hubs; ++h) {
      const vertex_t hc = hub_c[h], hroot = hub_root[h];
      const offset_t e = a.cxadj[hc + 1];
      touches met;
      for (offset_t j = a.cxadj[hc] + threadIdx.x; j < e && tree_live<WR>(a, hroot);
           j += blockDim.x)
        visit<WR, GRAFT>(a, q, hc, a.cadj[j], level, hroot, met);
      if (GRAFT) {
        const bool any_met = __syncthreads_or(met.n > 0);
        if (threadIdx.x == 0) a.touch[hc] = any_met ? met_all : met_none;
      }
    }
    __syncthreads();  // everyone has read the list
    if (threadIdx.x == 0) n_hubs = 0;
    __syncthreads();
  }
  bfs_level_done(a);
}

// ---------------------------------------------------------------------------
// ALTERNATE (Algorithm 3).  Thread mapping: end row ends[i * total + tid];
// each walks its path back to its root.  Block 0 thread 0 also sets the
// phase loop's condition (Algorithm 1 line 2: go on while a path was found).
// sync: cmatch, rmatch (benign races: paths of one BFS tree may meet; the
//       predecessor check of line 8 stops a walk at a column another walk
//       already alternated, and FIXMATCHING repairs concurrent writes)
// safe: predecessor, bfs_array, root, ends (read only here)
template <bool SELECT_END>
__global__ __launch_bounds__(threads_per_block) void alternate_kernel(const ap_args a) {
  const int n_ends = a.ctl->n_ends;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ap_control* ctl = a.ctl;
    bool go_on = n_ends > 0;
    if (go_on && ctl->phases >= a.max_phases) {
      ctl->error = 1;
      go_on = false;
    }
    cudaGraphSetConditional(a.phase_loop, go_on ? 1u : 0u);
  }
  const std::int64_t tot = total_threads();
  for (std::int64_t i = global_tid(); i < n_ends; i += tot) {
    vertex_t row = a.ends[i];
    if (SELECT_END) {
      // APsB-WR: start only from the end row recorded for this tree's root.
      const vertex_t tree_root = a.root[a.predecessor[row]];
      if (a.bfs_array[tree_root] != -(row + 1)) continue;  // FIXMATCHING frees it
    }
    while (row != -1) {
      const vertex_t matched_col = a.predecessor[row];
      const vertex_t matched_row = atomic_read(&a.cmatch[matched_col]);
      // Line 8: matched_col already alternated by another walk.  (A root
      // column has no matched row: the walk ends after writing it.)
      if (matched_row >= 0 && a.predecessor[matched_row] == matched_col) break;
      atomic_write(&a.cmatch[matched_col], row);
      atomic_write(&a.rmatch[row], matched_col);
      row = matched_row;
    }
  }
}

/// FIXMATCHING for one row.
__device__ inline void fix_row(const ap_args& a, vertex_t r) {
  const vertex_t c = a.rmatch[r];
  if (c == -2 || (c >= 0 && a.cmatch[c] != r)) a.rmatch[r] = -1;
}

// ---------------------------------------------------------------------------
// FIXMATCHING fused with the next phase's INITBFSARRAY.  Thread mapping:
// item k = i * total + tid over the phase's queue [0, tail) then its end
// rows.  A queued column is reset to unreached, or, if it was a root and is
// still free, queued again as a root for the next phase; the row it was
// matched to when reached (mate0) and every end row are fixed.  These are
// all the rows ALTERNATE can have touched.
// sync: ctl->next_tail (atomic)
// safe: rmatch (each row is fixed by one thread: mate0 rows are distinct
//       and were matched, end rows were free), cmatch (read only),
//       bfs_array, root (one thread per queued column)
template <bool WR>
__global__ __launch_bounds__(threads_per_block) void fix_reset_kernel(const ap_args a) {
  const ap_control* ctl = a.ctl;
  const int tail = ctl->tail, n_roots = ctl->n_roots;
  const std::int64_t items = static_cast<std::int64_t>(tail) + ctl->n_ends;
  const vertex_t* q = a.queue[ctl->cur];
  vertex_t* next = a.queue[ctl->cur ^ 1];
  const std::int64_t tot = total_threads();
  for (std::int64_t k = global_tid(); k < items; k += tot) {
    if (k >= tail) {
      fix_row(a, a.ends[k - tail]);
      continue;
    }
    const vertex_t c = q[k];
    if (k < n_roots) {
      if (a.cmatch[c] == -1) {
        a.bfs_array[c] = L0;
        push(next, &a.ctl->next_tail, c);  // root[c] == c still
      } else {
        a.bfs_array[c] = L0 - 1;
      }
    } else {
      a.bfs_array[c] = L0 - 1;
      fix_row(a, a.mate0[c]);
    }
  }
}

// ---------------------------------------------------------------------------
// Grafting, after ALTERNATE: the phase's forest is queue[cur][0, tail) (the
// columns that searched from the phase's start, then those it reached) and
// queue[cur][n_cols - kept, n_cols) (columns of live trees that did not
// search again).  Thread mapping: item k = i * total + tid over the forest,
// then (apply) the phase's end rows.
__device__ inline vertex_t forest_column(const ap_args& a, const vertex_t* q, std::int64_t k,
                                         int tail) {
  return k < tail ? q[k] : q[a.n_cols - 1 - (k - tail)];
}

/// graft_class values, per forest column.
enum graft_class : vertex_t { keep = 0, search_again = 1, torn_down = 2, torn_down_root = 3 };

/// Whether a column that met the trees `met` must search again: it met a
/// torn-down tree (one whose root holds L0 - 2), or too many to tell.
__device__ inline bool met_torn_down(const ap_args& a, int4 met) {
  if (met.x == met_many) return true;
  const vertex_t t[touch_slots] = {met.x, met.y, met.z, met.w};
  bool torn = false;
#pragma unroll
  for (int i = 0; i < touch_slots; ++i) torn |= t[i] >= 0 && a.bfs_array[t[i]] == L0 - 2;
  return torn;
}

// Sorts the forest (MS-BFS-Graft's tree renewal): a tree whose root holds
// L0 - 2 found a path and is torn down; a live tree is maximal, so only its
// columns that met a torn-down tree can reach anything new.  A separate
// launch from graft_apply_kernel, which resets the marks read here.
// safe: bfs_array, touch (read only), root (= the class; one thread per column)
__global__ __launch_bounds__(threads_per_block) void graft_classify_kernel(const ap_args a) {
  const ap_control* ctl = a.ctl;
  const int tail = ctl->tail;
  const std::int64_t items = static_cast<std::int64_t>(tail) + ctl->kept;
  const vertex_t* q = a.queue[ctl->cur];
  const std::int64_t tot = total_threads();
  for (std::int64_t k = global_tid(); k < items; k += tot) {
    const vertex_t c = forest_column(a, q, k, tail);
    const int mark = a.bfs_array[c];
    graft_class cls = keep;
    if (mark == L0 - 2) {
      cls = torn_down_root;
    } else if (a.bfs_array[tree_of(mark)] == L0 - 2) {
      cls = torn_down;
    } else if (met_torn_down(a, a.touch[c])) {
      cls = search_again;
    }
    a.root[c] = cls;
  }
}

// FIXMATCHING and the next phase's start, by class: a torn-down column is
// unreached again and its row (mate0) fixed; a torn-down root still free
// (its walks lost) is a root again; columns that search again, and the new
// roots, go to the front of the next queue, the other live columns to its
// back.  Then the end rows are fixed.
// sync: ctl->next_tail, ctl->next_kept, ctl->augmented (atomic)
// safe: rmatch (each row fixed by one thread, as in fix_reset_kernel),
//       cmatch, root (read only), bfs_array (one thread per column)
__global__ __launch_bounds__(threads_per_block) void graft_apply_kernel(const ap_args a) {
  ap_control* ctl = a.ctl;
  const int tail = ctl->tail, n_ends = ctl->n_ends;
  const std::int64_t forest = static_cast<std::int64_t>(tail) + ctl->kept;
  const vertex_t* q = a.queue[ctl->cur];
  vertex_t* next = a.queue[ctl->cur ^ 1];
  const std::int64_t tot = total_threads();
  for (std::int64_t k = global_tid(); k < forest + n_ends; k += tot) {
    if (k >= forest) {
      fix_row(a, a.ends[k - forest]);
      continue;
    }
    const vertex_t c = forest_column(a, q, k, tail);
    switch (static_cast<graft_class>(a.root[c])) {
      case torn_down:
        a.bfs_array[c] = L0 - 1;
        fix_row(a, a.mate0[c]);
        break;
      case torn_down_root:
        if (a.cmatch[c] == -1) {
          a.bfs_array[c] = tree_mark(c);
          push(next, &ctl->next_tail, c);
        } else {
          a.bfs_array[c] = L0 - 1;
          atomicAdd(&ctl->augmented, 1);
        }
        break;
      case search_again: push(next, &ctl->next_tail, c); break;
      case keep: next[a.n_cols - 1 - claim_place(&ctl->next_kept)] = c; break;
    }
  }
}

}  // namespace matchflow::cuda::ap

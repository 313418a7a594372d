// APFB / APsB device code: maximum cardinality bipartite matching by GPU
// augmenting paths.
//
// Paper 004 (Deveci, Kaya, Ucar, Catalyurek, "GPU accelerated maximum
// cardinality matching algorithms for bipartite graphs", Euro-Par 2013):
//   init_bfs_array_kernel  INITBFSARRAY (section 3, text after Algorithm 2)
//   bfs_kernel<false,..>   Algorithm 2, GPUBFS
//   bfs_kernel<true,..>    Algorithm 4, GPUBFS-WR (root array, early exit)
//   alternate_kernel       Algorithm 3, ALTERNATE
//   fix_matching_kernel    FIXMATCHING: rmatch[r] <- -1 if cmatch[rmatch[r]] != r
// The host driver (apfb_dispatch.cu) wires them into Algorithm 1 (APsB; APFB
// is Algorithm 1 without lines 9-10) as one CUDA graph whose two `while`
// loops are conditional nodes, so the loop control of Algorithm 1 runs on
// the device and the host never synchronizes between levels or phases.
//
// Terms.  Columns are the BFS sources (the paper's cxadj/cadj = our CSC,
// g.cols).  rmatch = col4row (row -> column), cmatch = row4col (column ->
// row).  bfs_array[c] is column c's BFS level: L0 - 1 = matched and not yet
// reached, L0 = free column (a BFS root), L0 + k = reached at level k.  We
// take L0 = 2 as the paper suggests, so that every "done" marker of
// GPUBFS-WR is <= 0: APFB-WR writes L0 - 2 = 0 into bfs_array[root] once the
// root's tree found an augmenting path; APsB-WR writes -(row + 1), naming
// the path's end row (the paper writes -(row); +1 keeps row 0 distinct),
// and ALTERNATE then starts only from that row (section 3, last paragraph).
//
// Thread layouts (section 4): every kernel strides over its vertices with
// `i * total_threads + tid` (getProcessCount); the grid is 256 x 256 (CT) or
// min(n, resident threads of the device) (MT); the host picks the grid.
//
// Deviations from the paper, all for robustness or speed:
//  * A free row is claimed as a path end with atomicCAS(rmatch[r], -1, -2)
//    instead of a plain store, so only one thread writes its predecessor.
//    Together with ALTERNATE's predecessor check this guarantees progress:
//    every BFS tree that holds a claimed (and, for APsB-WR, selected) end
//    row gets its root column written in ALTERNATE, which nets +1 matched
//    pair, so each phase that found a path augments at least once and the
//    outer loop terminates with a maximum matching.
//  * A column of degree > warp_degree is scanned by a whole warp (lanes
//    stride over its rows) instead of by its own thread; the work per edge
//    is the paper's.
//  * ALTERNATE guards the root step (cmatch[root] = -1 has no predecessor;
//    the paper would read predecessor[-1]).  FIXMATCHING also clears end
//    rows left at -2 (their path lost every race).
//  * Level and phase counts are capped (n_cols + 2 levels per phase,
//    min(n_rows, n_cols) + 2 phases): unreachable when the algorithm is
//    right, but a bug then reports an error instead of hanging the GPU.
//  * The loop-control flags of Algorithm 1 (vertex_inserted,
//    augmenting_path_found, bfs_level) live in device memory (ap_control);
//    the last block of each BFS launch decides whether the level loop goes
//    on and sets the graph's conditional handle.
#pragma once

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
constexpr unsigned full_mask = 0xffffffffu;

/// Algorithm 1's loop state, in device memory (one per solve).
struct ap_control {
  int bfs_level;            ///< level being expanded (Algorithm 1, bfs_level)
  int vertex_inserted;      ///< a column was added to the next level
  int path_found;           ///< augmenting_path_found of this phase
  int error;                ///< a safety cap was hit (never expected)
  unsigned int blocks_done; ///< last-block ticket of the BFS launch
  int pad_;
  long long phases;         ///< outer iterations run
  long long bfs_levels;     ///< BFS launches run
};

/// Everything the kernels read or write; passed by value to every kernel.
struct ap_args {
  vertex_t n_rows, n_cols;
  const offset_t* __restrict__ cxadj;  ///< CSC offsets, n_cols + 1
  const vertex_t* __restrict__ cadj;   ///< CSC row ids
  vertex_t* rmatch;                    ///< row -> column (col4row)
  vertex_t* cmatch;                    ///< column -> row (row4col)
  vertex_t* predecessor;               ///< row -> column that reached it
  int* bfs_array;                      ///< column -> BFS level / marker
  vertex_t* root;                      ///< column -> root of its BFS tree (WR only)
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
// INITBFSARRAY.  Thread mapping: column c = i * total + tid.
// sync: none (each thread writes only its own columns; ctl by block 0 thread 0)
// safe: bfs_array, root (own entries), cmatch (read only)
template <bool WR>
__global__ __launch_bounds__(threads_per_block) void init_bfs_array_kernel(const ap_args a) {
  const std::int64_t tot = total_threads();
  for (std::int64_t c = global_tid(); c < a.n_cols; c += tot) {
    const bool is_free = a.cmatch[c] == -1;
    a.bfs_array[c] = is_free ? L0 : L0 - 1;
    if (WR) a.root[c] = is_free ? static_cast<vertex_t>(c) : -1;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ap_control* ctl = a.ctl;
    ctl->bfs_level = L0;
    ctl->vertex_inserted = 0;
    ctl->path_found = 0;
    ctl->blocks_done = 0;
    ctl->phases += 1;
    cudaGraphSetConditional(a.level_loop, 1u);
  }
}

// ---------------------------------------------------------------------------
// One BFS edge (column c at `level` -> row), Algorithm 2 lines 6-17 /
// Algorithm 4 lines 9-22.
template <bool WR>
__device__ inline void bfs_visit(const ap_args& a, vertex_t c, vertex_t row, int level,
                                 vertex_t my_root, bool& inserted, bool& found) {
  // Benign race: rmatch[row] may turn -1 -> -2 under us (another thread
  // claims it as a path end); both values mean "free row" below.
  const vertex_t col_match = atomic_read(&a.rmatch[row]);
  if (col_match >= 0) {
    // Benign race (paper): several level-`level` columns may all see
    // col_match unvisited and all insert it; they write the same level and
    // each a valid level-`level` predecessor (and, WR, a root of the same
    // level), so any winner gives a valid BFS forest.
    if (atomic_read(&a.bfs_array[col_match]) == L0 - 1) {
      atomic_write(&a.bfs_array[col_match], level + 1);
      if (WR) atomic_write(&a.root[col_match], my_root);
      atomic_write(&a.predecessor[row], c);
      inserted = true;
    }
  } else if (col_match == -1) {
    // Deviation: claim the free row once, so that its predecessor (and the
    // APsB-WR end-row marker) is written by one thread only.
    if (atomicCAS(&a.rmatch[row], vertex_t{-1}, vertex_t{-2}) == -1) {
      atomic_write(&a.predecessor[row], c);
      if (WR) atomic_write(&a.bfs_array[my_root], a.shortest ? -(row + 1) : L0 - 2);
      found = true;
    }
  }
}

/// Whether column c is on the frontier and (WR) its tree has no path yet.
template <bool WR>
__device__ inline bool on_frontier(const ap_args& a, vertex_t c, int level, vertex_t& my_root) {
  // Benign race: bfs_array[c] may be set to level + 1 during this launch
  // (never to `level`), so a stale read cannot admit a wrong column.
  if (atomic_read(&a.bfs_array[c]) != level) return false;
  if (!WR) return true;
  my_root = atomic_read(&a.root[c]);
  // Early exit (Algorithm 4 lines 6-7); benign race: the marker may appear
  // during this launch, and exploring a finished tree is only wasted work.
  return atomic_read(&a.bfs_array[my_root]) >= L0 - 1;
}

/// The last block of a BFS launch decides whether the level loop goes on.
__device__ inline void bfs_level_done(const ap_args& a, bool inserted, bool found) {
  ap_control* ctl = a.ctl;
  if (threadIdx.x != 0) return;
  if (inserted) atomic_write(&ctl->vertex_inserted, 1);
  if (found) atomic_write(&ctl->path_found, 1);
  __threadfence();
  const unsigned ticket = atomicAdd(&ctl->blocks_done, 1u);
  if (ticket != gridDim.x - 1) return;
  __threadfence();
  const bool any_inserted = atomic_read(&ctl->vertex_inserted) != 0;
  const bool any_found = atomic_read(&ctl->path_found) != 0;
  const int next_level = ctl->bfs_level + 1;
  // Algorithm 1 lines 6-11 (APFB drops lines 9-10); the level cap never
  // binds for a correct run (each level inserts a new column).
  bool go_on = any_inserted && !(a.shortest && any_found);
  if (go_on && next_level - L0 > a.n_cols + 1) {
    ctl->error = 1;
    go_on = false;
  }
  ctl->vertex_inserted = 0;
  ctl->blocks_done = 0;
  ctl->bfs_level = next_level;
  ctl->bfs_levels += 1;
  cudaGraphSetConditional(a.level_loop, go_on ? 1u : 0u);
}

// ---------------------------------------------------------------------------
// GPUBFS (WR = false, Algorithm 2) and GPUBFS-WR (WR = true, Algorithm 4):
// one BFS level.  Thread mapping: column c = i * total + tid; a frontier
// column of degree > warp_degree is handed to its whole warp (lanes stride
// over its rows).  Every thread of a warp runs the same number of rounds so
// that the warp collectives see full warps.
// sync: rmatch (-1 -> -2 by CAS), bfs_array, root, predecessor (benign
//       races, see bfs_visit), ctl (last-block ticket)
// safe: cxadj, cadj (read only)
template <bool WR>
__global__ __launch_bounds__(threads_per_block) void bfs_kernel(const ap_args a) {
  const int level = a.ctl->bfs_level;  // written by the previous launch only
  const std::int64_t tot = total_threads();
  const std::int64_t rounds = (a.n_cols + tot - 1) / tot;
  const int lane = threadIdx.x % warp_size;
  bool inserted = false, found = false;
  for (std::int64_t i = 0; i < rounds; ++i) {
    const std::int64_t c64 = i * tot + global_tid();
    const vertex_t c = static_cast<vertex_t>(c64);
    vertex_t my_root = -1;
    bool wide = false;
    if (c64 < a.n_cols && on_frontier<WR>(a, c, level, my_root)) {
      const offset_t begin = a.cxadj[c], end = a.cxadj[c + 1];
      if (end - begin > warp_degree) {
        wide = true;
      } else {
        for (offset_t j = begin; j < end; ++j)
          bfs_visit<WR>(a, c, a.cadj[j], level, my_root, inserted, found);
      }
    }
    for (unsigned wide_lanes = __ballot_sync(full_mask, wide); wide_lanes;
         wide_lanes &= wide_lanes - 1) {
      const int leader = __ffs(wide_lanes) - 1;
      const vertex_t wc = __shfl_sync(full_mask, c, leader);
      const vertex_t wroot = __shfl_sync(full_mask, my_root, leader);
      const offset_t end = a.cxadj[wc + 1];
      for (offset_t j = a.cxadj[wc] + lane; j < end; j += warp_size)
        bfs_visit<WR>(a, wc, a.cadj[j], level, wroot, inserted, found);
    }
  }
  inserted = __syncthreads_or(inserted);
  found = __syncthreads_or(found);
  bfs_level_done(a, inserted, found);
}

// ---------------------------------------------------------------------------
// ALTERNATE (Algorithm 3).  Thread mapping: row r = i * total + tid; rows
// claimed as path ends (rmatch = -2) walk their path back to its root.
// sync: cmatch, rmatch (benign races: paths of one BFS tree may meet; the
//       predecessor check of line 8 stops a walk at a column another walk
//       already alternated, and FIXMATCHING repairs concurrent writes)
// safe: predecessor, bfs_array, root (read only here)
template <bool SELECT_END>
__global__ __launch_bounds__(threads_per_block) void alternate_kernel(const ap_args a) {
  const std::int64_t tot = total_threads();
  for (std::int64_t r = global_tid(); r < a.n_rows; r += tot) {
    // Only this thread writes rmatch of an end row (others write matched rows).
    if (atomic_read(&a.rmatch[r]) != -2) continue;
    vertex_t row = static_cast<vertex_t>(r);
    if (SELECT_END) {
      // APsB-WR: start only from the end row recorded for this tree's root.
      const vertex_t tree_root = a.root[a.predecessor[row]];
      if (a.bfs_array[tree_root] != -(row + 1)) {
        atomic_write(&a.rmatch[row], vertex_t{-1});
        continue;
      }
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

// ---------------------------------------------------------------------------
// FIXMATCHING.  Thread mapping: row r = i * total + tid.  Also ends the
// phase: block 0 thread 0 sets the phase loop's condition (Algorithm 1
// line 2: go on while a path was found).
// sync: none (each thread writes only its own rmatch entries)
// safe: cmatch (read only)
__global__ __launch_bounds__(threads_per_block) void fix_matching_kernel(const ap_args a) {
  const std::int64_t tot = total_threads();
  for (std::int64_t r = global_tid(); r < a.n_rows; r += tot) {
    const vertex_t c = a.rmatch[r];
    if (c == -2 || (c >= 0 && a.cmatch[c] != r)) a.rmatch[r] = -1;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ap_control* ctl = a.ctl;
    bool go_on = ctl->path_found != 0 && ctl->error == 0;
    if (go_on && ctl->phases >= a.max_phases) {
      ctl->error = 2;
      go_on = false;
    }
    cudaGraphSetConditional(a.phase_loop, go_on ? 1u : 0u);
  }
}

}  // namespace matchflow::cuda::ap

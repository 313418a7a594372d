// Device code for the GPU Hungarian algorithms (linear sum assignment).
//
// Problem: minimise sum_i C[i][col4row[i]] over injective maps rows -> columns
// of a dense row-major n_rows x n_cols matrix, n_rows <= n_cols; return the
// assignment and a dual certificate u_i + v_j <= c_ij (equality on assigned
// pairs, v_j <= 0, v_j = 0 on unassigned columns).
//
// Paper: K. Date, R. Nagi, "GPU-accelerated Hungarian algorithms for the
// Linear Assignment Problem", Parallel Computing 57 (2016) (paper 001):
//   Algorithm 1  initial reduction        -> row_reduce_kernel, col_reduce_kernel
//   Algorithm 2  optimality check         -> root lists (tree: augment_step; classic: host)
//   Algorithm 3  classical forward pass   -> classic_expand_kernel over the zero-slack CSR
//   Algorithm 4  alternating-tree forward -> tree_expand_* (one thread per column)
//   Algorithm 5  reverse pass             -> reverse_walk
//   Algorithm 6  augmentation pass        -> augment_walk
//   Algorithms 7/8  classical dual update -> classic_min_slack_kernel, classic_dual_kernel
//   Algorithm 9  tree dual update         -> tree_dual_step
//
// Deviations from the paper (each says why):
//  * Dual update by +theta on tree rows and -theta on tree columns instead of
//    +-theta/2 on uncovered/covered vertices: the same reduced costs, but exact
//    for integer costs and it keeps v <= 0, which the certificate needs for
//    rectangular problems (column reduction is done for square problems only,
//    and a final shift makes max v = 0 there).
//  * Cover/visit flags are iteration stamps (== it means "set in iteration
//    it"), so no O(n) reset kernel runs between iterations.
//  * CU-TREE runs as ONE persistent cooperative kernel (tree_solve_kernel):
//    every kernel of the paper becomes a step separated by grid.sync(), the
//    host never waits inside the solve, and the frontier is built by atomic
//    appends (order is irrelevant) instead of a CUB compaction, which cannot
//    run inside a kernel.  The paper's per-column expansion is split over
//    K row chunks (tree_partial_step) when the frontier is large, so that more
//    threads than columns are busy; the theta reduction is fused into the
//    expansion step that precedes it.
//  * The reverse pass keeps the paper's race on S_r (last writer wins) and
//    adds an early exit: a walker stops at a row another walker has already
//    passed, since that walker writes the same path above it.
//  * Integer costs that fit in int16 or int32 are uploaded and read as such
//    (a quarter or half of the copy and of the memory traffic of every
//    pass); c - u - v and all duals stay int64, so the solve is still exact
//    (cost_ref).
//  * Floating costs: an edge is tight when its reduced cost is <= tol, with
//    tol = 16 eps max|c| (0 for integers), so that rounding in c - u - v can
//    neither hide a tight edge nor stall on tiny dual steps.
//
// Terms: tree rows/columns = vertices reached in the current iteration's
// alternating forest (vr/vc == it); slack[j] = min reduced cost from a tree
// row to column j (CU-TREE); root = unassigned row; reverse column =
// unassigned tight column (an augmenting path ends there).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "common/atomics.cuh"

namespace matchflow::cuda::hungarian {

namespace cg = cooperative_groups;

using key_t = unsigned long long;
constexpr int none = -1;
constexpr int solve_threads = 1024;  // persistent kernel block size

// ---------------------------------------------------------------- cost traits

/// "Infinity" of a cost type: +inf for floats, INT64_MAX for integers.
template <class T>
__host__ __device__ constexpr T cost_inf() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

/// Order-preserving encoding of a non-negative cost into 64 bits, so that
/// atomicMin/atomicMax on keys reduce costs (floats through double bits).
template <class T>
__device__ inline key_t encode(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<key_t>(__double_as_longlong(static_cast<double>(x)));
  else
    return static_cast<key_t>(x);
}
template <class T>
__device__ inline T decode(key_t k) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(__longlong_as_double(static_cast<long long>(k)));
  else
    return static_cast<T>(k);
}
template <class T>
__host__ __device__ constexpr key_t key_inf() {
  if constexpr (std::is_floating_point_v<T>)
    return 0x7FF0000000000000ull;  // +inf as double bits
  else
    return static_cast<key_t>(std::numeric_limits<T>::max());
}

/// Tightness tolerance from the largest finite |c| (encoded in max_abs_key).
template <class T>
__device__ inline T tolerance(key_t max_abs_key) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(16) * std::numeric_limits<T>::epsilon() * decode<T>(max_abs_key);
  else
    return 0;
}

/// The cost matrix on the device: T, or int32 or int16 for int64 costs that
/// fit (`narrow` or `narrow16` set; see the dispatch's upload).  The tests
/// are uniform over the grid, so they cost no divergence.
template <class T>
struct cost_ref {
  const T* wide;
  const std::int32_t* narrow;    // non-null only for T = int64 costs stored as int32
  const std::int16_t* narrow16;  // non-null only for T = int64 costs stored as int16
  __device__ inline T operator[](std::int64_t k) const {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      if (narrow16) return static_cast<T>(narrow16[k]);
      if (narrow) return static_cast<T>(narrow[k]);
    }
    return wide[k];
  }
};

template <class T>
__device__ inline T reduced_cost(const cost_ref<T>& cost, std::int64_t n_cols, int i, int j, T ui,
                                 T vj) {
  return cost[static_cast<std::int64_t>(i) * n_cols + j] - ui - vj;
}

__device__ inline key_t warp_min(key_t x) {
  for (int off = 16; off > 0; off >>= 1) {
    const key_t y = __shfl_down_sync(0xffffffffu, x, off);
    x = y < x ? y : x;
  }
  return x;
}

// ---------------------------------------------------- initial reduction (Alg. 1)

/// One warp per row: u[i] = min_j c_ij; also the largest finite |c| (floats).
/// sync: max_abs_key (atomicMax).  safe: u (one writer per row).
template <class T>
__global__ __launch_bounds__(256) void row_reduce_kernel(cost_ref<T> cost, int n_rows, int n_cols,
                                                         T* __restrict__ u, key_t* max_abs_key) {
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= n_rows) return;
  const std::int64_t row = warp * n_cols;
  T m = cost_inf<T>();
  T a = 0;
  for (int j = lane; j < n_cols; j += 32) {
    const T c = cost[row + j];
    m = c < m ? c : m;
    if constexpr (std::is_floating_point_v<T>) {
      const T ac = c < 0 ? -c : c;
      if (ac != cost_inf<T>() && ac > a) a = ac;
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const T y = __shfl_down_sync(0xffffffffu, m, off);
    m = y < m ? y : m;
    if constexpr (std::is_floating_point_v<T>) {
      const T b = __shfl_down_sync(0xffffffffu, a, off);
      a = b > a ? b : a;
    }
  }
  if (lane == 0) {
    u[warp] = m;
    if constexpr (std::is_floating_point_v<T>) atomicMax(max_abs_key, encode<T>(a));
  }
}

/// Square problems only: v[j] = min_i (c_ij - u_i).  Block (32, 32): 32
/// columns per block, threadIdx.y strides the rows, shared-memory reduction.
/// safe: v (one writer per column).
template <class T>
__global__ __launch_bounds__(1024) void col_reduce_kernel(cost_ref<T> cost, int n_rows, int n_cols,
                                                          const T* __restrict__ u,
                                                          T* __restrict__ v) {
  __shared__ T part[32][33];
  const int j = blockIdx.x * 32 + threadIdx.x;
  T m = cost_inf<T>();
  if (j < n_cols)
    for (int i = threadIdx.y; i < n_rows; i += 32) {
      const T r = reduced_cost(cost, n_cols, i, j, u[i], T(0));
      m = r < m ? r : m;
    }
  part[threadIdx.y][threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.y == 0 && j < n_cols) {
    for (int k = 1; k < 32; ++k) m = part[k][threadIdx.x] < m ? part[k][threadIdx.x] : m;
    v[j] = m;
  }
}

// ------------------------------------------------------------- shared state

/// Scalars shared between steps and with the host.
struct control {
  int fcount[3];       // sizes of frontier[3]
  int rcount[2];       // sizes of roots[2]
  key_t theta_key[3];  // min uncovered slack found in step s, slot s % 3
  key_t max_abs_key;   // largest finite |c| (tolerance of floating costs)
  int rev_found;       // stamp: an augmenting path exists in iteration rev_found
  int rev_step[3];     // CU-TREE: stamp `it` when step s found a reverse column, slot s % 3
  int error;           // 1 = no finite dual step (infeasible input); multi_gpu_error
  int revs[2];         // multi-GPU: this part's reverse columns of iterations of each parity
  long long iterations, augmenting_paths, dual_updates;
  long long steps;  // CU-TREE: forward and dual steps (exchanges, multi-GPU)
};

/// Everything both variants keep on the device (see hungarian_dispatch.cu
/// for sizes).  Stamps: vr, vc, rev, rvis, aug hold the iteration that set them.
template <class T>
struct state {
  cost_ref<T> cost;
  int n_rows, n_cols;
  T *u, *v, *slack;
  int *ar, *ac;      // A_r / A_c (col4row / row4col), -1 = unassigned
  int *pr, *pc;      // P_r / P_c predecessors
  int *sr, *sc;      // S_r / S_c successors (reverse pass)
  int *vr, *vc;      // tree-row / tree-column stamps (the paper's covers)
  int *rev, *rvis;   // reverse-column stamps; rows passed by a reverse walker
  int* aug;          // roots whose tree yields a path this iteration
  int* frontier[3];  // CU-TREE frontier queues, used round robin by step
  int* roots[2];     // CU-TREE roots of this / next iteration
  T* part_val;       // CU-TREE split expansion: per (chunk, column) minimum
  int* part_row;     //   and its row
  int k_max;         //   chunks of one-column items that fill the grid (part_* hold
                     //   max_item_columns * k_max * n_cols)
  long long* paths;  // paths[it - 1]: paths augmented in iteration it (capacity n_rows)
  control* ctl;
};

// ------------------------------------------- reverse and augmentation passes

/// Algorithm 5 from reverse column j: records successors up to the root and
/// marks the root "augment".  Intentional races (paper Proposition 2): two
/// walkers of one tree may both write sr[r]; whichever value survives names
/// a branch whose lower part its writer has completed, so the path read by
/// augment_walk is valid.  A walker that sees rvis[r] == it stops: another
/// walker passes r and writes the identical path above it.
/// sync: sr, rvis, aug (atomic_read/atomic_write); sc gets equal values from
/// every writer (the row matched to the column).
template <class T>
__device__ inline void reverse_walk(const state<T>& s, int j, int it) {
  s.sc[j] = none;
  int c = j;
  int r = s.pc[c];
  while (true) {
    if (atomic_read(&s.rvis[r]) == it) return;
    atomic_write(&s.rvis[r], it);
    atomic_write(&s.sr[r], c);
    const int cp = s.pr[r];
    if (cp == none) {
      atomic_write(&s.aug[r], it);
      return;
    }
    atomic_write(&s.sc[cp], r);
    c = cp;
    r = s.pc[c];
  }
}

/// Algorithm 6 from root r: flips the path recorded in sr/sc.  Paths of
/// different roots are vertex-disjoint (Propositions 1, 2), so the writes to
/// ar/ac do not conflict.  safe: ar, ac.
template <class T>
__device__ inline void augment_walk(const state<T>& s, int r) {
  while (r != none) {
    const int c = s.sr[r];
    const int next = s.sc[c];
    s.ar[r] = c;
    s.ac[c] = r;
    r = next;
  }
}

// ------------------------------------------------- CU-TREE persistent kernel

/// A column becomes tight (slack <= tol): cover it; its assigned row joins the
/// tree (appended to `out`), or it is a reverse column.
template <class T>
__device__ inline void tighten(const state<T>& s, int j, int it, int slot, int* out,
                               int* out_count) {
  s.vc[j] = it;
  const int inew = s.ac[j];
  if (inew == none) {
    s.rev[j] = it;
    atomic_write(&s.ctl->rev_found, it);
    atomic_write(&s.ctl->rev_step[slot], it);
  } else {
    s.pr[inew] = j;  // vr[inew] is stamped when the row is expanded (see tree_expand_step)
    push(out, out_count, inew);
  }
}

/// Per-block minimum of `local` folded into *key (one atomic per warp).
__device__ inline void reduce_min_into(key_t local, key_t* key) {
  local = warp_min(local);
  if ((threadIdx.x & 31) == 0 && local != ~0ull) atomicMin(key, local);
}

/// Algorithm 4, split version, first half: for every (chunk k, column j),
/// min over frontier rows f = k, k + K, ... of the reduced cost.
/// Thread mapping: grid-stride over K * ceil(n_cols / C) items, an item being
/// C consecutive columns of one chunk, columns fastest (coalesced cost reads).
/// C = 2 for large frontiers: a warp then reads 128 bytes of each int16 row,
/// not 64: half as many scattered accesses for the same rows (the solve is
/// not bandwidth-bound, ncu: 5-7 % of DRAM throughput); at n = 10000, costs
/// [0, n/10] (frontiers of ~2400 rows) the solve took 4.6-4.9 ms instead of
/// 5.9-6.3.  Used at every frontier size, it made solves of small frontiers
/// slower (NOTES.md, "Assignment").  safe: part_val, part_row (one writer
/// per (chunk, column)).
constexpr int max_item_columns = 2;

/// Frontier rows read a batch at a time: their loads (and then their u and
/// cost loads) are all in flight at once, where a loop of one row each
/// waits out two memory round trips per row; a step of a small frontier was
/// that chain.  Rows f0, f0 + K, ...; indices past nf repeat row f0, whose
/// reduced cost is then compared again (strict <: the result is unchanged).
constexpr int row_batch = 4;

template <class Frontier>
__device__ inline void load_rows(const Frontier& fr, int f0, int K, int nf, int (&row)[row_batch]) {
#pragma unroll
  for (int b = 0; b < row_batch; ++b) {
    const int f = f0 + b * K;
    row[b] = fr[f < nf ? f : f0];
  }
}

template <int C, class T, class Frontier>
__device__ void tree_partial_step(const state<T>& s, const Frontier& fr, int nf, int K, int it,
                                  std::int64_t tid, std::int64_t nthreads) {
  const int groups = (s.n_cols + C - 1) / C;
  const std::int64_t items = static_cast<std::int64_t>(K) * groups;
  for (std::int64_t idx = tid; idx < items; idx += nthreads) {
    const int k = static_cast<int>(idx / groups);
    const int j0 = static_cast<int>(idx - static_cast<std::int64_t>(k) * groups) * C;
    int col[C];
    bool open[C];  // in range and not yet in the tree
    T vj[C], best[C];
    int best_row[C];
    bool any = false;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      col[c] = j0 + c < s.n_cols ? j0 + c : j0;  // a repeated column is computed, not written
      open[c] = j0 + c < s.n_cols && s.vc[j0 + c] != it;
      any = any || open[c];
      best[c] = cost_inf<T>();
      best_row[c] = none;
    }
    if (!any) continue;
#pragma unroll
    for (int c = 0; c < C; ++c) vj[c] = s.v[col[c]];
    for (int f0 = k; f0 < nf; f0 += row_batch * K) {
      int row[row_batch];
      T rc[row_batch][C];
      load_rows(fr, f0, K, nf, row);
#pragma unroll
      for (int b = 0; b < row_batch; ++b) {
        const T ui = s.u[row[b]];
#pragma unroll
        for (int c = 0; c < C; ++c)
          rc[b][c] = reduced_cost(s.cost, s.n_cols, row[b], col[c], ui, vj[c]);
      }
#pragma unroll
      for (int b = 0; b < row_batch; ++b)
#pragma unroll
        for (int c = 0; c < C; ++c)
          if (rc[b][c] < best[c]) {
            best[c] = rc[b][c];
            best_row[c] = row[b];
          }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (!open[c]) continue;
      const std::int64_t at = static_cast<std::int64_t>(k) * s.n_cols + j0 + c;
      s.part_val[at] = best[c];
      s.part_row[at] = best_row[c];
    }
  }
}

/// tree_partial_step over the frontier when it pays, then a grid barrier;
/// returns its chunk count K (<= 1: none ran).  About 8 rows an item, at
/// most as many items as the grid has threads; where one-column items
/// would take over 16 rows each, two-column items of half as many rows.
template <class T, class Frontier>
__device__ int partial_step(const state<T>& s, const Frontier& fr, int nf, int k_cap, int it,
                            cg::grid_group& grid, std::int64_t tid, std::int64_t nthreads) {
  int K = nf / 8;
  const bool pairs = K > max_item_columns * k_cap;
  K = pairs ? max_item_columns * k_cap : K < k_cap ? K : k_cap;
  if (K > 1) {
    if (pairs)
      tree_partial_step<max_item_columns>(s, fr, nf, K, it, tid, nthreads);
    else
      tree_partial_step<1>(s, fr, nf, K, it, tid, nthreads);
    grid.sync();
  }
  return K;
}

/// Column j's least slack over the K partial minima of tree_partial_step,
/// folded into (sl, p).  Loads a batch at a time (indices past K repeat one)
/// and compares after, instead of a load and a compare per chunk: K doubles
/// with two-column items, and this chain was part of every split step.
template <class T>
__device__ inline void fold_partials(const state<T>& s, int K, int j, T& sl, int& p) {
  constexpr int batch = 8;
  int least = none;
  for (int k0 = 0; k0 < K; k0 += batch) {
    T val[batch];
#pragma unroll
    for (int b = 0; b < batch; ++b) {
      const int k = k0 + b < K ? k0 + b : k0;
      val[b] = s.part_val[static_cast<std::int64_t>(k) * s.n_cols + j];
    }
#pragma unroll
    for (int b = 0; b < batch; ++b)
      if (val[b] < sl) {
        sl = val[b];
        least = k0 + b;
      }
  }
  if (least != none) p = s.part_row[static_cast<std::int64_t>(least) * s.n_cols + j];
}

/// Algorithm 4 over this part's columns (one thread per column), or its
/// second half after tree_partial_step (K > 1): `join(j)` for each column
/// that becomes tight.  Also folds the minimum uncovered slack into
/// ctl->theta_key[slot] for a dual update that may follow.  `fr[f]` is the
/// f-th frontier row (a row list, or the multi-GPU exchange's entries).
/// sync: theta_key (atomicMin); what `join` writes.  safe: slack, pc (one
/// writer per column).
template <class T, class Frontier, class Join>
__device__ void expand_columns(const state<T>& s, const Frontier& fr, int nf, int K, int it, T tol,
                               int slot, std::int64_t tid, std::int64_t nthreads, Join&& join) {
  key_t local = ~0ull;
  for (std::int64_t jj = tid; jj < s.n_cols; jj += nthreads) {
    const int j = static_cast<int>(jj);
    if (s.vc[j] == it) continue;
    T sl = s.slack[j];
    int p = s.pc[j];
    if (K > 1) {
      fold_partials(s, K, j, sl, p);
    } else {
      const T vj = s.v[j];
      for (int f0 = 0; f0 < nf && sl > tol; f0 += row_batch) {
        int row[row_batch];
        T rc[row_batch];
        load_rows(fr, f0, 1, nf, row);
#pragma unroll
        for (int b = 0; b < row_batch; ++b)
          rc[b] = reduced_cost(s.cost, s.n_cols, row[b], j, s.u[row[b]], vj);
#pragma unroll
        for (int b = 0; b < row_batch; ++b)
          if (sl > tol && rc[b] < sl) {  // the first tight row ends the scan
            sl = rc[b];
            p = row[b];
          }
      }
    }
    s.slack[j] = sl;
    s.pc[j] = p;
    if (sl <= tol)
      join(j);
    else
      local = encode<T>(sl) < local ? encode<T>(sl) : local;
  }
  reduce_min_into(local, &s.ctl->theta_key[slot]);
}

/// Algorithm 4 on one GPU: expand_columns joining through tighten().
/// sync: frontier/fcount (atomic append), theta_key, rev_found.  safe: vc
/// (one writer per column), pr (one writer per row: a row is reached only
/// through its assigned column), vr (frontier rows).
template <class T>
__device__ void tree_expand_step(const state<T>& s, const int* fr, int nf, int K, int it, T tol,
                                 int slot, std::int64_t tid, std::int64_t nthreads) {
  // The frontier rows join the tree now, not when tighten() found them: a
  // row found in a dual step must not get that step's +theta, and the row
  // loop of tree_dual_step reads vr while its column loop would write it.
  for (std::int64_t f = tid; f < nf; f += nthreads) s.vr[fr[f]] = it;
  int* out = s.frontier[slot];
  int* out_count = &s.ctl->fcount[slot];
  expand_columns(s, fr, nf, K, it, tol, slot, tid, nthreads,
                 [&](int j) { tighten(s, j, it, slot, out, out_count); });
}

/// Algorithm 9: u += theta on tree rows, v -= theta on tree columns, slack
/// -= theta elsewhere; `join(j)` for columns reaching zero slack.  Also
/// folds the new minimum uncovered slack into theta_key[slot].
/// safe: u (row owner), v, slack (column owner); sync as expand_columns.
template <class T, class Join>
__device__ void dual_step(const state<T>& s, T theta, int it, T tol, int slot, std::int64_t tid,
                          std::int64_t nthreads, Join&& join) {
  for (std::int64_t i = tid; i < s.n_rows; i += nthreads)
    if (s.vr[i] == it) s.u[i] += theta;
  key_t local = ~0ull;
  for (std::int64_t jj = tid; jj < s.n_cols; jj += nthreads) {
    const int j = static_cast<int>(jj);
    if (s.vc[j] == it) {
      s.v[j] -= theta;
      continue;
    }
    const T sl = s.slack[j] == cost_inf<T>() ? s.slack[j] : s.slack[j] - theta;
    s.slack[j] = sl;
    if (sl <= tol)
      join(j);
    else
      local = encode<T>(sl) < local ? encode<T>(sl) : local;
  }
  reduce_min_into(local, &s.ctl->theta_key[slot]);
}

/// Algorithm 9 on one GPU: dual_step joining through tighten().
template <class T>
__device__ void tree_dual_step(const state<T>& s, T theta, int it, T tol, int slot,
                               std::int64_t tid, std::int64_t nthreads) {
  int* out = s.frontier[slot];
  int* out_count = &s.ctl->fcount[slot];
  dual_step(s, theta, it, tol, slot, tid, nthreads,
            [&](int j) { tighten(s, j, it, slot, out, out_count); });
}

/// Roots of iteration `it`: unassigned rows (the optimality check, Alg. 2).
template <class T>
__device__ void tree_roots_step(const state<T>& s, int it, std::int64_t tid,
                                std::int64_t nthreads) {
  for (std::int64_t i = tid; i < s.n_rows; i += nthreads)
    if (s.ar[i] == none) {
      s.vr[i] = it;
      s.pr[i] = none;
      push(s.roots[it & 1], &s.ctl->rcount[it & 1], static_cast<int>(i));
    }
  for (std::int64_t j = tid; j < s.n_cols; j += nthreads) s.slack[j] = cost_inf<T>();
}

/// The end of iteration `it`'s augmentation on every thread: the paths
/// this thread augmented counted, and the slacks reset.
/// sync: the counts (atomicAdd).  safe: slack (column owner).
template <class T>
__device__ inline void close_iteration(const state<T>& s, int it, long long paths, std::int64_t tid,
                                       std::int64_t nthreads) {
  if (paths) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&s.ctl->augmenting_paths),
              static_cast<unsigned long long>(paths));
    // it <= n_rows: every iteration augments at least one path
    atomicAdd(reinterpret_cast<unsigned long long*>(&s.paths[it - 1]),
              static_cast<unsigned long long>(paths));
  }
  for (std::int64_t j = tid; j < s.n_cols; j += nthreads) s.slack[j] = cost_inf<T>();
}

/// Algorithm 6 over this iteration's roots, fused with the next optimality
/// check: roots without a path become the next iteration's roots, and the
/// slacks are reset.  safe: roots[next] (atomic append), slack (column owner).
template <class T>
__device__ void tree_augment_step(const state<T>& s, int it, int nroots, std::int64_t tid,
                                  std::int64_t nthreads) {
  const int* roots = s.roots[it & 1];
  long long paths = 0;
  for (std::int64_t p = tid; p < nroots; p += nthreads) {
    const int r = roots[p];
    if (s.aug[r] == it) {
      augment_walk(s, r);
      ++paths;
    } else {
      s.vr[r] = it + 1;
      s.pr[r] = none;
      push(s.roots[(it + 1) & 1], &s.ctl->rcount[(it + 1) & 1], r);
    }
  }
  close_iteration(s, it, paths, tid, nthreads);
}

/// What every thread decides a step's sequel on: the new frontier's size,
/// the least uncovered slack and whether the step found a reverse column
/// (slot `slot` of the control words), read as block_read reads (one load
/// per block, under the same contract), all three behind one barrier.
/// Read by every warp they cost about 2 us of each step (NOTES.md, "Host
/// copies": the control words).
struct step_outcome {
  int nf;
  key_t theta_key;
  int rev_step;
};

__device__ inline step_outcome read_outcome(const control* ctl, int slot) {
  __shared__ step_outcome shared;
  if (threadIdx.x == 0) {
    shared = {atomic_read(&ctl->fcount[slot]), atomic_read(&ctl->theta_key[slot]),
              atomic_read(&ctl->rev_step[slot])};
  }
  __syncthreads();
  return shared;
}

/// CU-TREE, whole solve in one cooperative launch.  Every thread runs the
/// same control flow; decisions read values written before the last
/// grid.sync().  `step` numbers the expansion/dual steps: step s appends to
/// frontier[s % 3] and theta_key[s % 3] and resets slot (s + 1) % 3, which
/// was last read in step s - 1.
template <class T>
__global__ __launch_bounds__(solve_threads, 1) void tree_solve_kernel(state<T> s) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t tid = grid.thread_rank();
  const std::int64_t nthreads = grid.size();
  control* ctl = s.ctl;
  const T tol = tolerance<T>(ctl->max_abs_key);
  const int k_cap = s.k_max;
  int it = 1;
  int step = 0;
  tree_roots_step(s, it, tid, nthreads);
  grid.sync();
  while (true) {
    const int nroots = block_read(&ctl->rcount[it & 1]);
    if (nroots == 0) {
      if (tid == 0) ctl->steps = step;
      break;
    }
    if (tid == 0) ctl->rcount[(it + 1) & 1] = 0;
    if (tid == 0) ++ctl->iterations;
    const int* fr = s.roots[it & 1];
    int nf = nroots;
    bool found = false, rev = false;
    while (!found) {
      // forward pass: one BFS level
      const int slot = step % 3;
      if (tid == 0) {
        ctl->fcount[(step + 1) % 3] = 0;
        ctl->theta_key[(step + 1) % 3] = key_inf<T>();
      }
      const int K = partial_step(s, fr, nf, k_cap, it, grid, tid, nthreads);
      tree_expand_step(s, fr, nf, K, it, tol, slot, tid, nthreads);
      grid.sync();
      ++step;
      fr = s.frontier[slot];
      const step_outcome out = read_outcome(ctl, slot);
      nf = out.nf;
      key_t theta_key = out.theta_key;
      // A per-step slot, not ctl->rev_found: a fast thread may already be in
      // the next step (and find a reverse column there) while a slow one
      // reads; slot s % 3 is written again only in step s + 3, and a stale
      // `it` there means a reverse column was found earlier in this iteration.
      rev = rev || out.rev_step == it;
      // dual updates until a row joins or a reverse column appears
      while (nf == 0 && !rev) {
        if (theta_key >= key_inf<T>()) {  // no finite slack: infeasible input
          if (tid == 0) ctl->error = 1;
          return;
        }
        const int dslot = step % 3;
        if (tid == 0) {
          ctl->fcount[(step + 1) % 3] = 0;
          ctl->theta_key[(step + 1) % 3] = key_inf<T>();
          ++ctl->dual_updates;
        }
        tree_dual_step(s, decode<T>(theta_key), it, tol, dslot, tid, nthreads);
        grid.sync();
        ++step;
        fr = s.frontier[dslot];
        const step_outcome dual = read_outcome(ctl, dslot);
        nf = dual.nf;
        theta_key = dual.theta_key;
        rev = rev || dual.rev_step == it;
      }
      found = nf == 0;  // frontier exhausted with a reverse column
    }
    // reverse pass (Alg. 5) over reverse columns, then augmentation (Alg. 6)
    for (std::int64_t j = tid; j < s.n_cols; j += nthreads)
      if (s.rev[j] == it) reverse_walk(s, static_cast<int>(j), it);
    grid.sync();
    tree_augment_step(s, it, nroots, tid, nthreads);
    grid.sync();
    ++it;
  }
}

// ------------------------------------------------ CU-CLASS (host-driven) kernels

/// Roots of iteration `it` (rows listed in `rows`): stamp them as tree rows.
/// safe: vr, pr (one writer per row).
static __global__ __launch_bounds__(256) void mark_rows_kernel(const int* __restrict__ rows,
                                                               const int* __restrict__ count,
                                                               int it, int* __restrict__ vr,
                                                               int* __restrict__ pr, bool root) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= *count) return;
  vr[rows[k]] = it;
  if (root) pr[rows[k]] = none;
}

/// Zero-slack CSR, pass 1: one warp per row counts tight edges.  safe: deg.
template <class T>
__global__ __launch_bounds__(256) void classic_count_kernel(state<T> s, T tol,
                                                            long long* __restrict__ deg) {
  const std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= s.n_rows) return;
  const T ui = s.u[i];
  int count = 0;
  for (int j = lane; j < s.n_cols; j += 32)
    count += reduced_cost(s.cost, s.n_cols, static_cast<int>(i), j, ui, s.v[j]) <= tol;
  for (int off = 16; off > 0; off >>= 1) count += __shfl_down_sync(0xffffffffu, count, off);
  if (lane == 0) deg[i] = count;
}

/// Zero-slack CSR, pass 2: one warp per row writes its tight columns in
/// order at ptr[i] (ballot + popc give each lane its place).  safe: z.
template <class T>
__global__ __launch_bounds__(256) void classic_scatter_kernel(state<T> s, T tol,
                                                              const long long* __restrict__ ptr,
                                                              int* __restrict__ z) {
  const std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= s.n_rows) return;
  const T ui = s.u[i];
  long long pos = ptr[i];
  for (int base = 0; base < s.n_cols; base += 32) {
    const int j = base + lane;
    const bool tight =
        j < s.n_cols && reduced_cost(s.cost, s.n_cols, static_cast<int>(i), j, ui, s.v[j]) <= tol;
    const unsigned ballot = __ballot_sync(0xffffffffu, tight);
    if (tight) z[pos + __popc(ballot & ((1u << lane) - 1u))] = j;
    pos += __popc(ballot);
  }
}

/// Algorithm 3: one thread per frontier row walks its zero-slack list.
/// Intentional races (the paper's): several rows may claim an uncovered
/// column j at once; each writes pc[j] and the last write survives, which is
/// fine since every writer is a tree row with a tight edge to j.  A row
/// reached twice is stamped twice with the same level and compacted once.
/// sync: vc, pc, pr, act, rev, rev_found (atomic_read/atomic_write).
template <class T>
__global__ __launch_bounds__(256) void classic_expand_kernel(state<T> s,
                                                             const long long* __restrict__ ptr,
                                                             const int* __restrict__ z,
                                                             const int* __restrict__ fr,
                                                             const int* __restrict__ nf, int it,
                                                             int level, int* __restrict__ act) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= *nf) return;
  const int i = fr[k];
  for (long long e = ptr[i]; e < ptr[i + 1]; ++e) {
    const int j = z[e];
    if (atomic_read(&s.vc[j]) == it) continue;
    atomic_write(&s.pc[j], i);
    atomic_write(&s.vc[j], it);
    const int inew = s.ac[j];
    if (inew == none) {
      atomic_write(&s.rev[j], it);
      atomic_write(&s.ctl->rev_found, it);
    } else {
      atomic_write(&s.pr[inew], j);
      atomic_write(&act[inew], level);
    }
  }
}

/// Algorithm 7: one warp per tree row, minimum reduced cost to non-tree
/// columns (non-tree rows get +inf).  safe: row_min.
template <class T>
__global__ __launch_bounds__(256) void classic_min_slack_kernel(state<T> s, int it,
                                                                T* __restrict__ row_min) {
  const std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= s.n_rows) return;
  T m = cost_inf<T>();
  if (s.vr[i] == it) {
    const T ui = s.u[i];
    for (int j = lane; j < s.n_cols; j += 32)
      if (s.vc[j] != it) {
        const T rc = reduced_cost(s.cost, s.n_cols, static_cast<int>(i), j, ui, s.v[j]);
        m = rc < m ? rc : m;
      }
    for (int off = 16; off > 0; off >>= 1) {
      const T y = __shfl_down_sync(0xffffffffu, m, off);
      m = y < m ? y : m;
    }
  }
  if (lane == 0) row_min[i] = m;
}

/// Algorithm 8: u += theta on tree rows, v -= theta on tree columns.
/// theta = +inf means no finite step exists: flag the error instead.
/// safe: u, v (one writer each).
template <class T>
__global__ __launch_bounds__(256) void classic_dual_kernel(state<T> s, int it,
                                                           const T* __restrict__ theta_ptr) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const T theta = *theta_ptr;
  if (theta == cost_inf<T>()) {
    if (k == 0) s.ctl->error = 1;
    return;
  }
  if (k < s.n_rows && s.vr[k] == it) s.u[k] += theta;
  if (k < s.n_cols && s.vc[k] == it) s.v[k] -= theta;
}

/// Algorithm 5 over the compacted reverse columns.
template <class T>
__global__ __launch_bounds__(256) void classic_reverse_kernel(state<T> s,
                                                              const int* __restrict__ frev,
                                                              const int* __restrict__ count,
                                                              int it) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < *count) reverse_walk(s, frev[k], it);
}

/// Algorithm 6 over the compacted augmenting roots.  safe: ar, ac (disjoint paths).
template <class T>
__global__ __launch_bounds__(256) void classic_augment_kernel(state<T> s,
                                                              const int* __restrict__ faug,
                                                              const int* __restrict__ count) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < *count) augment_walk(s, faug[k]);
}

/// Predicates for CUB compaction over counting iterators.
struct stamp_equals {
  const int* stamp;
  int value;
  __host__ __device__ bool operator()(int k) const { return stamp[k] == value; }
};
struct stamp_differs {
  const int* stamp;
  int value;
  __host__ __device__ bool operator()(int k) const { return stamp[k] != value; }
};
struct root_without_path {  // roots[k] whose aug stamp is not `it`
  const int* aug;
  int it;
  __host__ __device__ bool operator()(int r) const { return aug[r] != it; }
};

}  // namespace matchflow::cuda::hungarian

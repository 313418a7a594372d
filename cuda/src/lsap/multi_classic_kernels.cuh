// Device code of the multi-GPU CU-CLASS (paper 001, Section 5): the rows are
// split into `parts` blocks, one per GPU.  Each part keeps its rows' costs
// (all columns), their u and their zero-slack lists; the column side (v,
// row4col, the column covers) and the tree links are replicated, every part
// updating them alike from what the parts exchange.  Its CPU reference is
// cpp/src/lsap/split_classic.cpp.
//
// The compression step (Section 3.3) is local: after each dual update a
// part lists the tight columns of its own rows (count, grid-wide scan,
// scatter).  Each BFS level (Algorithm 3) a part expands its own frontier
// rows and writes every column it covers (with the column's row and the
// covering row: a tree_entry) straight into every part's entry list; the
// parts then exchange the counts (multi_gpu_kernels.cuh's exchange()).  A
// column covered by several parts in one level goes to the least part,
// decided alike on every part, and the winners' rows are the next level.
// Dual updates (Algorithms 7 and 8): each part's least slack over its own
// tree rows, their minimum through the exchange.  Augmentation is
// multi_gpu_kernels.cuh's, replicated.
//
// A row whose list would not fit the part's list buffer is scanned densely
// at each expansion instead (the same columns).
#pragma once

#include <cub/block/block_scan.cuh>

#include "lsap/multi_gpu_kernels.cuh"

namespace matchflow::cuda::hungarian {

/// What the row split keeps besides multi_state (whose s.n_cols is every
/// column and s.u holds this part's rows' duals, row i at u[i - row0]).
struct row_block {
  int row0, rows;        // the part's rows [row0, row0 + rows)
  int* deg;              // rows: tight columns of each row
  long long* ptr;        // rows + 1: list offsets
  int* z;                // tight columns, z_cap of them
  long long z_cap;       // a row whose list ends past z_cap is scanned densely
  long long* block_sum;  // per block of the grid: its rows' tight columns
  int* won;              // column -> winner_key of its winning entry
  const void* col_min;   // this part's column minima (square problems' v), T
};

/// The key of part q's entry in step `step`: larger for later steps and,
/// within one, for lesser parts (atomicMax keeps the least part's).
__device__ inline int winner_key(int step, int q) { return step * max_parts + (max_parts - 1 - q); }

template <class T>
__device__ inline T row_reduced(const multi_state<T>& m, const row_block& b, int i, int j) {
  return reduced_cost(m.s.cost, m.s.n_cols, i - b.row0, j, m.s.u[i - b.row0], m.s.v[j]);
}

/// Grid rows [first, last) of block `blk` for a per-block pass over own rows.
__device__ inline void block_rows(const row_block& b, int blk, int* first, int* last) {
  const int per = (b.rows + gridDim.x - 1) / gridDim.x;
  *first = min(b.rows, blk * per);
  *last = min(b.rows, *first + per);
}

/// The compression (Section 3.3) of this part's rows: count (a warp per
/// row), grid-wide exclusive scan (block sums, then a block scan), scatter
/// in column order (ballot).  Ends behind a grid barrier.
template <class T>
__device__ void compress(const multi_state<T>& m, const row_block& b, T tol, cg::grid_group& grid) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  int first, last;
  block_rows(b, blockIdx.x, &first, &last);
  __shared__ unsigned long long block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  for (int k = first + warp; k < last; k += warps) {
    int count = 0;
    for (int j = lane; j < m.s.n_cols; j += 32) count += row_reduced(m, b, b.row0 + k, j) <= tol;
    for (int off = 16; off > 0; off >>= 1) count += __shfl_down_sync(0xffffffffu, count, off);
    if (lane == 0) {
      b.deg[k] = count;
      atomicAdd(&block_total, static_cast<unsigned long long>(count));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) b.block_sum[blockIdx.x] = static_cast<long long>(block_total);
  grid.sync();
  using scan = cub::BlockScan<long long, solve_threads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ long long base;
  if (threadIdx.x == 0) {
    long long sum = 0;
    for (unsigned q = 0; q < blockIdx.x; ++q) sum += b.block_sum[q];
    base = sum;
  }
  __syncthreads();
  for (int k0 = first; k0 < last; k0 += solve_threads) {
    const int k = k0 + static_cast<int>(threadIdx.x);
    long long x = k < last ? b.deg[k] : 0, offset, chunk;
    scan(temp).ExclusiveSum(x, offset, chunk);
    if (k < last) b.ptr[k] = base + offset;
    // Only the block holding the last row: another block's threads past
    // its own rows reach k == rows - 1 too (with x = 0).
    if (k < last && k + 1 == b.rows) b.ptr[b.rows] = base + offset + x;
    __syncthreads();
    if (threadIdx.x == 0) base += chunk;
    __syncthreads();
  }
  grid.sync();
  for (int k = first + warp; k < last; k += warps) {
    if (b.ptr[k + 1] > b.z_cap) continue;  // scanned densely
    long long pos = b.ptr[k];
    for (int base_j = 0; base_j < m.s.n_cols; base_j += 32) {
      const int j = base_j + lane;
      const bool tight = j < m.s.n_cols && row_reduced(m, b, b.row0 + k, j) <= tol;
      const unsigned ballot = __ballot_sync(0xffffffffu, tight);
      if (tight) b.z[pos + __popc(ballot & ((1u << lane) - 1u))] = j;
      pos += __popc(ballot);
    }
  }
  grid.sync();
}

/// Column j covered from own row i (Algorithm 3's claim, made once per
/// part by the exchange of vc): its entry into every part's list `slot`.
/// Returns whether this thread wrote one.
template <class T>
__device__ inline bool cover(const multi_state<T>& m, int j, int i, int it, int slot) {
  if (atomic_read(&m.s.vc[j]) == it || atomicExch(&m.s.vc[j], it) == it) return false;
  const int at = claim_place(&m.s.ctl->fcount[slot]);
  const tree_entry e{m.s.ac[j], j, i};
  for (int q = 0; q < m.parts; ++q) m.entries(q, slot, m.part)[at] = e;
  return true;
}

/// Algorithm 3 for one own row (a warp): its list, or a dense scan.
/// Returns whether this thread wrote an entry.
template <class T>
__device__ bool expand_row(const multi_state<T>& m, const row_block& b, int i, int it, T tol,
                           int slot) {
  const int lane = threadIdx.x & 31;
  const int k = i - b.row0;
  const long long end = b.ptr[k + 1];
  bool wrote = false;
  if (end <= b.z_cap) {
    for (long long e = b.ptr[k] + lane; e < end; e += 32) wrote |= cover(m, b.z[e], i, it, slot);
    return wrote;
  }
  for (int j = lane; j < m.s.n_cols; j += 32)
    if (row_reduced(m, b, i, j) <= tol) wrote |= cover(m, j, i, it, slot);
  return wrote;
}

__device__ inline bool owns(const row_block& b, int i) {
  return i >= b.row0 && i < b.row0 + b.rows;
}

/// Whether the entry f of the frontier (from part q, exchange `step`) won its column.
__device__ inline bool won_column(const row_block& b, const tree_entry& e, int step, int q) {
  return b.won[e.col] == winner_key(step, q);
}

/// The part of frontier entry f.
__device__ inline int segment_of(const multi_frontier& fr, int f) {
  int q = 0;
  while (f >= fr.start[q + 1]) ++q;
  return q;
}

/// A level after exchange `step`: first every entry bids for its column
/// (the least part wins), then the winners are applied alike on every
/// part: the column covered, its row joined to the tree with its links,
/// or, for an unassigned column, the tree's path claimed (least (column,
/// parent), as multi_gpu_kernels.cuh's claim_paths).  Ends behind a grid
/// barrier.  sync: won (atomicMax), claim (atomicMin), revs (atomicAdd).
template <class T>
__device__ void apply_level(const multi_state<T>& m, const row_block& b, const multi_frontier& fr,
                            int nf, int step, int it, cg::grid_group& grid, std::int64_t tid,
                            std::int64_t nthreads) {
  for (std::int64_t f = tid; f < nf; f += nthreads) {
    const int q = segment_of(fr, static_cast<int>(f));
    atomicMax(&b.won[fr.entry(static_cast<int>(f)).col], winner_key(step, q));
  }
  grid.sync();
  const state<T>& s = m.s;
  for (std::int64_t f = tid; f < nf; f += nthreads) {
    const tree_entry e = fr.entry(static_cast<int>(f));
    if (!won_column(b, e, step, segment_of(fr, static_cast<int>(f)))) continue;
    atomic_write(&s.vc[e.col], it);
    if (e.row == none) {
      const unsigned long long key =
          (static_cast<unsigned long long>(e.col) << 32) | static_cast<unsigned>(e.parent);
      atomicMin(&m.claim[m.root[e.parent]], key);
      atomicAdd(&s.ctl->revs[it & 1], 1);
      continue;
    }
    s.vr[e.row] = it;
    s.pr[e.row] = e.col;
    m.parent[e.row] = e.parent;
    m.root[e.row] = m.root[e.parent];
  }
  grid.sync();
}

/// The next level's expansion: the own rows that won in exchange `step`
/// (a warp each).
template <class T>
__device__ bool expand_level(const multi_state<T>& m, const row_block& b, const multi_frontier& fr,
                             int nf, int step, int it, T tol, int slot, std::int64_t tid,
                             std::int64_t nthreads) {
  bool wrote = false;
  for (std::int64_t f = tid / 32; f < nf; f += nthreads / 32) {
    const tree_entry e = fr.entry(static_cast<int>(f));
    if (e.row == none || !owns(b, e.row) ||
        !won_column(b, e, step, segment_of(fr, static_cast<int>(f))))
      continue;
    wrote |= expand_row(m, b, e.row, it, tol, slot);
  }
  return wrote;
}

/// Algorithm 7 on this part's tree rows (a warp each): their least reduced
/// cost to an uncovered column, into theta_key[slot].
template <class T>
__device__ void least_slack(const multi_state<T>& m, const row_block& b, int it, int slot,
                            std::int64_t tid, std::int64_t nthreads) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t k = tid / 32; k < b.rows; k += nthreads / 32) {
    const int i = b.row0 + static_cast<int>(k);
    if (m.s.vr[i] != it) continue;
    key_t least = ~0ull;
    for (int j = lane; j < m.s.n_cols; j += 32)
      if (m.s.vc[j] != it) {
        const key_t x = encode<T>(row_reduced(m, b, i, j));
        least = x < least ? x : least;
      }
    least = warp_min(least);
    if (lane == 0 && least != ~0ull) atomicMin(&m.s.ctl->theta_key[slot], least);
  }
}

/// Algorithm 8: u += theta on own tree rows, v -= theta on covered columns.
template <class T>
__device__ void classic_duals(const multi_state<T>& m, const row_block& b, T theta, int it,
                              std::int64_t tid, std::int64_t nthreads) {
  for (std::int64_t k = tid; k < b.rows; k += nthreads)
    if (m.s.vr[b.row0 + k] == it) m.s.u[k] += theta;
  for (std::int64_t j = tid; j < m.s.n_cols; j += nthreads)
    if (m.s.vc[j] == it) m.s.v[j] -= theta;
}

/// The prologue: this part's column minima into every part's arena (the
/// exchange then orders them), or nothing for rectangular problems.
template <class T>
__device__ void share_column_minima(const multi_state<T>& m, const row_block& b, bool square,
                                    std::int64_t tid, std::int64_t nthreads) {
  if (!square) return;
  const T* mine = static_cast<const T*>(b.col_min);
  for (std::int64_t j = tid; j < m.s.n_cols; j += nthreads)
    for (int q = 0; q < m.parts; ++q)
      m.peer[q].row_min[static_cast<std::int64_t>(m.part) * m.s.n_cols + j] = mine[j];
  m.fence();
}

template <class T>
__device__ void reduce_columns(const multi_state<T>& m, bool square, std::int64_t tid,
                               std::int64_t nthreads) {
  if (!square) return;
  const T* minima = m.peer[m.part].row_min;
  for (std::int64_t j = tid; j < m.s.n_cols; j += nthreads) {
    T least = minima[j];
    for (int q = 1; q < m.parts; ++q) {
      const T x = minima[static_cast<std::int64_t>(q) * m.s.n_cols + j];
      least = x < least ? x : least;
    }
    m.s.v[j] = least;
  }
}

/// One part's whole solve (a cooperative launch per part, all parts at
/// once); multi_tree_solve_kernel's frame, with the classical levels.
/// Every branch is taken on what exchange() returned: the same on every part.
template <class T>
__global__ __launch_bounds__(solve_threads,
                             1) void multi_classic_solve_kernel(multi_state<T> m, row_block b,
                                                                verdict_box* vb, bool square) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t tid = grid.thread_rank();
  const std::int64_t nthreads = grid.size();
  const state<T>& s = m.s;
  control* ctl = s.ctl;
  auto post = [&](int step, int it) { return &exchange(m, step, it, vb); };
  share_column_minima(m, b, square, tid, nthreads);
  const exchange_totals* t = post(0, 0);
  if (t->error) {
    if (tid == 0) ctl->error = t->error;
    return;
  }
  const T tol = tolerance<T>(t->max_abs);
  reduce_columns(m, square, tid, nthreads);
  if (tid == 0) ctl->revs[1] = ctl->revs[0] = 0;
  multi_roots_step(m, 1, tid, nthreads);
  grid.sync();
  compress(m, b, tol, grid);
  int step = 1, error = 0;
  for (int it = 1;; ++it) {
    const int nroots = block_read(&ctl->rcount[it & 1]);
    if (nroots == 0) {
      if (tid == 0) ctl->steps = step;
      break;
    }
    const int* roots = s.roots[it & 1];
    for (std::int64_t p = tid; p < nroots; p += nthreads) s.vr[roots[p]] = it;
    if (tid == 0) {
      ctl->rcount[(it + 1) & 1] = 0;
      ctl->revs[(it + 1) & 1] = 0;
      ++ctl->iterations;
    }
    // The level to expand: this iteration's roots, a previous exchange's
    // winners, or (after a dual update) every tree row.
    enum { roots_level, entries_level, tree_level } from = roots_level;
    multi_frontier fr{};
    int nf = 0;
    const int first_step = step;
    while (true) {
      if (stalled(step - first_step, m.n_cols_total)) {
        error = multi_gpu_error::no_progress;
        if (tid == 0) record_stall(ctl, step - first_step, t->theta, nf);
        break;
      }
      const int slot = step % 3;
      if (tid == 0) {  // slots of step + 1, last read in exchange step - 2
        ctl->fcount[(step + 1) % 3] = 0;
        ctl->theta_key[(step + 1) % 3] = key_inf<T>();
      }
      bool wrote = false;
      if (from == roots_level) {
        for (std::int64_t p = tid / 32; p < nroots; p += nthreads / 32)
          if (owns(b, roots[p])) wrote |= expand_row(m, b, roots[p], it, tol, slot);
      } else if (from == entries_level) {
        wrote = expand_level(m, b, fr, nf, step - 1, it, tol, slot, tid, nthreads);
      } else {
        for (std::int64_t k = tid / 32; k < b.rows; k += nthreads / 32)
          if (s.vr[b.row0 + k] == it)
            wrote |= expand_row(m, b, b.row0 + static_cast<int>(k), it, tol, slot);
      }
      if (wrote) m.fence();  // each writer its entries, before the exchange
      t = post(step, it);
      if ((error = t->error)) break;
      fr = multi_frontier{nullptr, m.entries(m.part, slot, 0), t->start, m.seg};
      nf = t->start[m.parts];
      apply_level(m, b, fr, nf, step, it, grid, tid, nthreads);
      ++step;
      from = entries_level;
      if (nf > 0) continue;
      if (block_read(&ctl->revs[it & 1]) > 0) break;
      // No level left and no path: a dual update (its own exchange).
      const int dslot = step % 3;
      if (tid == 0) {
        ctl->fcount[(step + 1) % 3] = 0;
        ctl->theta_key[(step + 1) % 3] = key_inf<T>();
        ++ctl->dual_updates;
      }
      least_slack(m, b, it, dslot, tid, nthreads);
      t = post(step, it);
      ++step;
      if ((error = t->error)) break;
      if (t->theta >= key_inf<T>()) {
        error = multi_gpu_error::infeasible;
        break;
      }
      classic_duals(m, b, decode<T>(t->theta), it, tid, nthreads);
      grid.sync();
      compress(m, b, tol, grid);
      from = tree_level;
    }
    if (error) {
      if (tid == 0) ctl->error = error;
      return;
    }
    multi_augment_step(m, it, nroots, tid, nthreads);
    grid.sync();
  }
}

}  // namespace matchflow::cuda::hungarian

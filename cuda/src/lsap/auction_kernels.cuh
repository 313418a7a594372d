// Device code of gpu-auction: dense assignment by an epsilon-scaling auction
// (Bertsekas), finished exactly by shortest augmenting paths (host side:
// auction_dispatch.cu).
//
// Why: the GPU tree Hungarian (hungarian_kernels.cuh) augments about one
// path per iteration on floating costs (few ties).  An auction moves every
// free row at once, and its prices are near-optimal column duals; the few
// rows the auction leaves are then assigned by exact Dijkstra searches.
//
// Minimisation form, everything in float64 (float32 and integer costs are
// converted as they are read, never widened in memory): row i values column
// j at x_ij = c_ij - v_j, where v_j = -price_j <= 0.
//
// 1. Scale: C = the largest finite |c| (one pass, which also resets the state).
// 2. Square problems (0 < C < 2^900): epsilon-scaling phases (Bertsekas 1988), eps from C/theta
//    down to the final eps, divided by theta each phase; each phase frees
//    every row and runs until at most schedule::phase_free rows are free
//    (or a bid cap): the last free rows of a phase bounce along long
//    eviction chains one bid at a time, and the exact steps below place
//    them faster.  The phases
//    are asynchronous (Bertsekas & Castanon 1991): one warp per free row
//    finds its best x (w1 at j1) and second best (w2) and bids
//    v_j1 - (w2 - w1) - eps by one atomicCAS on column j1's record (v and
//    owner in one word: column_record); the bid stands if v_j1 is still the
//    value it saw, else the row bids again on fresh prices.  The warp then
//    carries the evicted owner, or takes the next unstarted row, so the
//    eviction chains that make up most of a phase run without any grid-wide
//    step (Jacobi rounds cost 12-22 us each: NOTES.md, "gpu-auction").
//    Integer costs use integer eps (final 1).
// 3. Exact duals: u_i = min_j x_ij (dual feasible whatever v is); rows whose
//    assigned column is not exactly at that minimum are freed (so every
//    assigned pair is tight).
// 4. Augmenting row reduction (Jonker & Volgenant 1987), in parallel: Jacobi
//    rounds with eps = 0 (a round: every free row bids, per column the
//    lowest bid wins by atomicMax on (float32 price, row + 1): the float32
//    rounding only picks the winner among near-equal bids, the winner writes
//    its exact float64 bid; the winner evicts the column's owner), the
//    winner taking u_i = c_ij1 - v_j1 (= w2): prices only rise, so every
//    assigned row stays tight and every row stays feasible (its u_i <= x_ik
//    for all k).  On a tie (w1 = w2) a row takes its second column instead
//    of evicting j1's owner (JV's rule).  Capped: eps = 0 need not
//    terminate.  Rounds with at most one bidder per warp of a block run in
//    block 0 alone, with __syncthreads() instead of grid.sync().
//    Rectangular problems start here from v = 0 (no auction: unassigned
//    columns must end with v = 0, which this keeps, a column once assigned
//    stays assigned).
// 5. The rows still free: one Dijkstra search each, in one block
//    (batched_kernels.cuh's shortest_path and augment: Crouse's
//    shortest augmenting path), which keeps the duals exact, so the result
//    is optimal with the certificate u_i + v_j <= c_ij (equality on
//    assigned pairs), v <= 0, v = 0 on unassigned columns.
//
// Races.  Step 2: a column's record changes only by atomicCAS against the
// record the bidder checked, so a column has one owner at a time and its v
// only falls; bids read records with stale values allowed (prices only
// rise, so a row's eps-CS holds against fresher prices too); a row is
// carried by one warp at a time.  Step 4: bids of one round race only
// through atomicMax on key[j]; the winner of column j is the one thread
// whose row id is in key[j]'s low word, and only it writes v[j],
// row4col[j], col4row of the evicted row and resets key[j] (a loser reading
// the reset key sees 0: still a loser).  Every other array is written by
// one thread per step, steps separated by grid.sync().
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "common/atomics.cuh"
#include "lsap/batched_kernels.cuh"

namespace matchflow::cuda::auction {

namespace cg = cooperative_groups;

constexpr int solve_threads = 512;                          ///< cooperative kernel block size
constexpr int finish_threads = batched::max_block_threads;  ///< the search block

/// Tunables of the schedule (defaults in auction_dispatch.cu).
struct schedule {
  double theta;          ///< eps divisor between phases
  double final_divisor;  ///< floats: final eps = C / (final_divisor * n^2) (clamped)
  int phase_bids;        ///< bid cap of one auction phase, per row (a safety net)
  int arr_rounds;        ///< round cap of the augmenting row reduction
  int phase_free;        ///< a phase ends with at most this many rows free
};

/// Scalars shared between steps and with the host.
struct control {
  int count[3];                     ///< sizes of list[3], used round robin
  int final_list;                   ///< the list holding the rows left to the searches
  int error;                        ///< 1: a row with no allowed column, or a search found none
  unsigned long long max_abs_bits;  ///< largest finite |c| (non-negative double's bits)
  long long phases, rounds, bids, searches;
  int tail_slot, tail_round;      ///< where block 0's tail rounds stopped
  int next_row;                   ///< asynchronous phase: the next row not yet started
  int capped;                     ///< 1: a phase hit its bid cap (the phases stop)
  unsigned long long phase_bids;  ///< bids of the current phase, counted in batches
  int assigned;                   ///< chains of the current phase ended on a free column
};

/// Everything the kernels share (sizes: auction_dispatch.cu).
template <class S>
struct params {
  const S* cost;  ///< n_rows x n_cols, row-major, in the stored type
  int n_rows, n_cols;
  bool integer;  ///< integer costs: integer eps
  schedule sched;
  double *u, *v;
  int *col4row, *row4col;
  int* bid_col;             ///< per row: the column it bid on this round (-1: none)
  double* bid_v;            ///< per row: its bid (the new v of bid_col)
  unsigned long long* key;  ///< per column: this round's best (price, row + 1); 0 = none
  int* list[3];             ///< free rows, round robin
  int* path;                ///< search state (finish)
  control* ctl;
};

template <class S>
__device__ inline double cost_at(const params<S>& p, int i, int j) {
  return static_cast<double>(p.cost[static_cast<std::int64_t>(i) * p.n_cols + j]);
}

// ------------------------------------------------------------ the bid

/// Tie order of columns for row i: rotated by i, so that rows with equal
/// values spread their bids instead of all bidding on the lowest column.
__device__ inline int tie_rank(int j, int offset, int n) {
  return j < 0 ? INT_MAX : (j >= offset ? j - offset : j + n - offset);
}

/// (value, column) of the best and second best, lexicographic by tie rank;
/// r1: the best column's record as read (asynchronous phases only).
struct top2 {
  double w1, w2;
  int j1, j2;
  unsigned long long r1;
};

__device__ inline bool before(double x, int j, double y, int k, int offset, int n) {
  return x < y || (x == y && tie_rank(j, offset, n) < tie_rank(k, offset, n));
}

__device__ inline void insert(top2& t, double x, int j, int offset, int n,
                              unsigned long long r = 0) {
  if (before(x, j, t.w1, t.j1, offset, n)) {
    t.w2 = t.w1;
    t.j2 = t.j1;
    t.w1 = x;
    t.j1 = j;
    t.r1 = r;
  } else if (before(x, j, t.w2, t.j2, offset, n)) {
    t.w2 = x;
    t.j2 = j;
  }
}

/// Best two over the warp (every lane gets them).
__device__ inline void warp_top2(top2& t, int offset, int n) {
  for (int d = 16; d > 0; d >>= 1) {
    const double b1 = __shfl_xor_sync(batched::full_mask, t.w1, d);
    const double b2 = __shfl_xor_sync(batched::full_mask, t.w2, d);
    const int k1 = __shfl_xor_sync(batched::full_mask, t.j1, d);
    const int k2 = __shfl_xor_sync(batched::full_mask, t.j2, d);
    const unsigned long long s1 = __shfl_xor_sync(batched::full_mask, t.r1, d);
    if (before(b1, k1, t.w1, t.j1, offset, n)) {
      if (!before(t.w1, t.j1, b2, k2, offset, n)) {
        t.w2 = b2;
        t.j2 = k2;
      } else {
        t.w2 = t.w1;
        t.j2 = t.j1;
      }
      t.w1 = b1;
      t.j1 = k1;
      t.r1 = s1;
    } else if (before(b1, k1, t.w2, t.j2, offset, n)) {
      t.w2 = b1;
      t.j2 = k1;
    }
  }
}

/// Packs a bid for atomicMax: float32 price (>= 0, so its bits order as
/// unsigned) over row + 1 (so that 0 means "no bid").
__device__ inline unsigned long long bid_key(double new_v, int row) {
  const double price = new_v < 0 ? -new_v : 0.0;
  const unsigned hi = __float_as_uint(__double2float_rn(price));
  return (static_cast<unsigned long long>(hi) << 32) | static_cast<unsigned>(row + 1);
}

/// One warp per free row: find the best two columns and bid (step 2/4).
/// `big` (3 C) replaces w2 - w1 for a row with one allowed column.
template <class S>
__device__ void bid_step(const params<S>& p, const int* rows, int m, double eps, double big,
                         std::int64_t warp, std::int64_t n_warps, int lane) {
  const int n = p.n_cols;
  for (std::int64_t k = warp; k < m; k += n_warps) {
    const int i = rows[k];
    const int offset = i % n;
    const S* row = p.cost + static_cast<std::int64_t>(i) * n;
    top2 t{INFINITY, INFINITY, -1, -1, 0};
    for (int j = lane; j < n; j += 32)
      insert(t, static_cast<double>(row[j]) - p.v[j], j, offset, n);
    warp_top2(t, offset, n);
    if (lane != 0) continue;
    if (!(t.w1 < INFINITY)) {  // no allowed column: infeasible (Python checks it first)
      p.bid_col[i] = -1;
      atomicExch(&p.ctl->error, 1);
      continue;
    }
    int j = t.j1;
    double inc = t.w2 < INFINITY ? t.w2 - t.w1 : big;
    if (inc == 0 && eps == 0 && p.row4col[j] >= 0) j = t.j2;  // JV's tie rule
    const double new_v = p.v[j] - inc - eps;
    p.bid_col[i] = j;
    p.bid_v[i] = new_v;
    atomicMax(&p.key[j], bid_key(new_v, i));
  }
}

/// The dense problem's bookkeeping of a won column: the row's column and
/// its tight dual, the evicted owner's column cleared (resolve_step).
template <class S>
__device__ void record_win(const params<S>& p, int i, int j, int owner) {
  p.col4row[i] = j;
  p.u[i] = cost_at(p, i, j) - p.bid_v[i];  // tight (exactly so once eps = 0)
  if (owner >= 0) p.col4row[owner] = -1;
}

/// One thread per bidder: the winner of each column takes it (step 2/4);
/// losers and evicted owners form the next list.  P as in rounds(), with
/// its record_win.
template <class P>
__device__ void resolve_step(const P& p, const int* rows, int m, int* next, int* next_count,
                             std::int64_t tid, std::int64_t n_threads) {
  for (std::int64_t k = tid; k < m; k += n_threads) {
    const int i = rows[k];
    const int j = p.bid_col[i];
    const bool won =
        j >= 0 && static_cast<unsigned>(atomic_read(&p.key[j])) == static_cast<unsigned>(i + 1);
    if (!won) {
      push(next, next_count, i);
      continue;
    }
    const int owner = p.row4col[j];
    p.row4col[j] = i;
    p.v[j] = p.bid_v[i];
    record_win(p, i, j, owner);
    atomic_write(&p.key[j], 0ull);
    if (owner >= 0) push(next, next_count, owner);
  }
}

// ------------------------------------------------------------ asynchronous phases

/// A column's state during the auction phases, v_j and its owner in one
/// 64-bit word, so that one atomicCAS checks the v a bid was made against
/// and installs the new v and owner together.  The owner (row + 1; 0: none)
/// takes the low `bits` bits of v's float64 pattern; a stored v is the bid
/// rounded towards -inf to the 52 - bits mantissa bits left (its magnitude
/// rounded up: v < 0 once bid on), so every accepted bid lowers v, and the
/// row's x_ij exceeds w2 + eps by at most 2^(bits - 52) |v| (exactness comes
/// from steps 3-5, which read plain v).
struct column_record {
  unsigned long long mask;  ///< the owner's bits

  __device__ static column_record for_rows(int n_rows) {
    const int bits = 32 - __clz(n_rows);  // row + 1 <= n_rows fits
    return {(1ull << bits) - 1};
  }
  __device__ double v(unsigned long long r) const { return __longlong_as_double(r & ~mask); }
  __device__ int owner(unsigned long long r) const { return static_cast<int>(r & mask) - 1; }
  /// The record of a bid `bid` (< 0) on a column whose record was `old`:
  /// strictly below old's v even where bid - old's v is under the grid's
  /// step (one step down then: -0.0 plus a step for v = 0).
  __device__ unsigned long long make(double bid, unsigned long long old, int row) const {
    constexpr unsigned long long sign = 1ull << 63;
    auto b = (static_cast<unsigned long long>(__double_as_longlong(bid)) + mask) & ~mask;
    if (!(__longlong_as_double(b) < v(old))) b = ((old & ~mask) | sign) + mask + 1;
    return b | static_cast<unsigned long long>(row + 1);
  }
};

/// Lane 0's bid for row i on the best two `t` (read on records that may be
/// stale): the row the warp carries next, i.e. the evicted owner, -1 when
/// the column was free (or the row has no allowed column), or i itself when
/// the column's v fell since it was read (bid again on fresh prices).
template <class S>
__device__ int claim(const params<S>& p, const column_record& rec, int i, const top2& t, double eps,
                     double big) {
  if (!(t.w1 < INFINITY)) {  // no allowed column: infeasible (Python checks it first)
    atomicExch(&p.ctl->error, 1);
    return -1;
  }
  const int j = t.j1;
  const double c = cost_at(p, i, j), inc = t.w2 < INFINITY ? t.w2 - t.w1 : big;
  unsigned long long seen = t.r1;  // c - v(seen) = w1
  for (;;) {
    const double v = rec.v(seen);
    const unsigned long long r = atomicCAS(&p.key[j], seen, rec.make(v - inc - eps, seen, i));
    if (r == seen) return rec.owner(seen);
    if (c - rec.v(r) > t.w1) return i;  // outbid since the scan: stale
    seen = r;
  }
}

/// The best two of row i for a bid (step 2), one warp: each lane loads
/// `batch` costs and records before using any, so a bid waits on a few
/// memory round trips rather than one per 32 columns.  The records are read
/// as they are now (raced reads: claim() checks the one it bids on).
template <class S>
__device__ top2 scan_row(const params<S>& p, const column_record& rec, int i, int lane) {
  constexpr int batch = 16;
  const int n = p.n_cols, offset = i % n;
  const S* row = p.cost + static_cast<std::int64_t>(i) * n;
  top2 t{INFINITY, INFINITY, -1, -1, 0};
  for (int base = lane; base < n; base += 32 * batch) {
    S c[batch];
    unsigned long long r[batch];
#pragma unroll
    for (int k = 0; k < batch; ++k) {
      const int j = base + 32 * k;
      if (j < n) {
        c[k] = row[j];
        r[k] = atomic_read(&p.key[j]);
      }
    }
#pragma unroll
    for (int k = 0; k < batch; ++k) {
      const int j = base + 32 * k;
      if (j < n) insert(t, static_cast<double>(c[k]) - rec.v(r[k]), j, offset, n, r[k]);
    }
  }
  warp_top2(t, offset, n);
  return t;
}

/// One asynchronous phase (step 2): every warp takes unstarted rows in turn
/// and bids for the row it carries until that row's chain of evictions ends
/// at a free column.  Returns when at most schedule::phase_free rows are
/// free, or the phase's bid cap is reached (ctl->capped: no further phase);
/// the rows then left free go to steps 3-5.
template <class S>
__device__ void async_phase(const params<S>& p, const column_record& rec, double eps, double big,
                            unsigned long long bid_cap, int lane) {
  constexpr int batch = 64;  // the most bids a warp makes between two looks at the count
  control* ctl = p.ctl;
  int i = -1, uncounted = 0;
  for (;;) {
    if ((i < 0 && uncounted > 0) || uncounted == batch) {  // count, and check the cap
      int stop = 0;
      if (lane == 0) {
        const auto counted =
            atomicAdd(&ctl->phase_bids, static_cast<unsigned long long>(uncounted));
        stop = counted + uncounted > bid_cap;  // so too for every later count
        if (stop) atomicExch(&ctl->capped, 1);
      }
      uncounted = 0;
      if (__shfl_sync(batched::full_mask, stop, 0)) break;  // row i, if any, stays free
    }
    if (i < 0) {
      int k = 0;
      if (lane == 0) k = atomicAdd(&ctl->next_row, 1);
      i = __shfl_sync(batched::full_mask, k, 0);
      if (i >= p.n_rows) break;
    }
    // Read before the scan, used after it: the phase's end costs no extra wait.
    const int assigned = lane == 0 ? atomic_read(&ctl->assigned) : 0;
    const top2 t = scan_row(p, rec, i, lane);
    int next = 0;
    if (lane == 0) {
      // The last few free rows bounce along long eviction chains, one bid at
      // a time: leave them to the exact steps (a phase's only product is
      // its prices, and the next phase frees every row again).
      const bool done = p.n_rows - assigned <= p.sched.phase_free;
      next = done ? -2 : claim(p, rec, i, t, eps, big);
      if (next == -1) atomicAdd(&ctl->assigned, 1);  // (or infeasible: ctl->error ends the solve)
    }
    i = __shfl_sync(batched::full_mask, next, 0);
    if (i == -2) break;  // row i stays free
    ++uncounted;
  }
}

/// After the phases: plain v, row4col and col4row from the records, and the
/// records zeroed (the rounds of step 4 use key[] as their bid keys).
template <class S>
__device__ void decode_records(const params<S>& p, const column_record& rec, std::int64_t tid,
                               std::int64_t n_threads) {
  for (std::int64_t j = tid; j < p.n_cols; j += n_threads) {
    const unsigned long long r = p.key[j];
    const int owner = rec.owner(r);
    p.v[j] = rec.v(r);
    p.row4col[j] = owner;
    if (owner >= 0) p.col4row[owner] = static_cast<int>(j);
    p.key[j] = 0;
  }
}

// ------------------------------------------------------------ steps

/// Step 1: reset the state, all rows into list 0, C into ctl->max_abs_bits.
template <class S>
__device__ void scale_step(const params<S>& p, std::int64_t tid, std::int64_t n_threads,
                           std::int64_t warp, std::int64_t n_warps, int lane) {
  for (std::int64_t j = tid; j < p.n_cols; j += n_threads) {
    p.v[j] = 0;
    p.row4col[j] = -1;
    p.key[j] = 0;
  }
  for (std::int64_t i = tid; i < p.n_rows; i += n_threads) {
    p.u[i] = 0;
    p.col4row[i] = -1;
    p.list[0][i] = static_cast<int>(i);
  }
  for (std::int64_t i = warp; i < p.n_rows; i += n_warps) {
    const S* row = p.cost + i * p.n_cols;
    double a = 0;
    for (int j = lane; j < p.n_cols; j += 32) {
      const double x = fabs(static_cast<double>(row[j]));
      if (x < INFINITY && x > a) a = x;
    }
    for (int d = 16; d > 0; d >>= 1) a = fmax(a, __shfl_xor_sync(batched::full_mask, a, d));
    if (lane == 0)
      atomicMax(&p.ctl->max_abs_bits, static_cast<unsigned long long>(__double_as_longlong(a)));
  }
}

/// Step 3: u_i = min_j x_ij; a row whose column is not at that minimum is
/// freed; the free rows are appended to `out`.
template <class S>
__device__ void exact_duals_step(const params<S>& p, int* out, int* out_count, std::int64_t warp,
                                 std::int64_t n_warps, int lane) {
  for (std::int64_t i = warp; i < p.n_rows; i += n_warps) {
    const S* row = p.cost + i * p.n_cols;
    double w = INFINITY;
    for (int j = lane; j < p.n_cols; j += 32) w = fmin(w, static_cast<double>(row[j]) - p.v[j]);
    for (int d = 16; d > 0; d >>= 1) w = fmin(w, __shfl_xor_sync(batched::full_mask, w, d));
    if (lane != 0) continue;
    p.u[i] = w;
    int j = p.col4row[i];
    if (j >= 0 && static_cast<double>(row[j]) - p.v[j] != w) {
      p.col4row[i] = -1;
      p.row4col[j] = -1;
      j = -1;
    }
    if (j < 0) push(out, out_count, static_cast<int>(i));
  }
}

/// The next eps of the schedule (integers: integer eps down to 1).
__device__ inline double next_eps(double eps, const schedule& s, bool integer) {
  const double e = eps / s.theta;
  return integer ? fmax(1.0, floor(e)) : e;
}

/// Tail rounds in one block (block 0), while at most one row per warp bids:
/// most rounds of a phase move a handful of rows along an eviction chain,
/// and there a grid.sync() would cost more than the round's work.  The
/// same steps as in rounds(), with __syncthreads() between them.
template <class P>
__device__ void block_rounds(const P& p, int slot, int r, int cap, double eps, double big,
                             int stop_at) {
  const int warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5, lane = threadIdx.x & 31;
  control* ctl = p.ctl;
  for (; r < cap; ++r, ++slot) {
    const int cur = slot % 3, nxt = (slot + 1) % 3;
    const int m = atomic_read(&ctl->count[cur]);
    if (m <= stop_at || m > n_warps) break;
    if (threadIdx.x == 0) {
      ctl->count[(slot + 2) % 3] = 0;
      ++ctl->rounds;
      ctl->bids += m;
    }
    bid_step(p, p.list[cur], m, eps, big, warp, n_warps, lane);
    __syncthreads();
    resolve_step(p, p.list[cur], m, p.list[nxt], &ctl->count[nxt], threadIdx.x, blockDim.x);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ctl->tail_slot = slot;
    ctl->tail_round = r;
  }
}

/// Jacobi rounds on list slot % 3 until it holds at most `stop_at` rows or
/// `cap` rounds ran.  On entry ctl->count[(slot + 1) % 3] is 0; on exit the
/// same holds for the returned slot, whose list holds the rows still free.
/// P: params<S>, or the sparse problem of sparse_auction.cu, with its own
/// bid_step and record_win (found by argument-dependent lookup): the rounds
/// are the same.
template <class P>
__device__ int rounds(const P& p, cg::grid_group& grid, int slot, double eps, double big, int cap,
                      int stop_at = 0) {
  const std::int64_t tid = grid.thread_rank(), n_threads = grid.size();
  const std::int64_t warp = tid / 32, n_warps = n_threads / 32;
  const int lane = threadIdx.x & 31;
  control* ctl = p.ctl;
  for (int r = 0; r < cap; ++r) {
    const int cur = slot % 3, nxt = (slot + 1) % 3;
    const int m = block_read(&ctl->count[cur]);
    if (m <= stop_at) break;
    if (m <= static_cast<int>(blockDim.x >> 5)) {
      grid.sync();  // every thread has read m before block 0 changes the counts
      if (blockIdx.x == 0) block_rounds(p, slot, r, cap, eps, big, stop_at);
      grid.sync();
      slot = atomic_read(&ctl->tail_slot);
      r = atomic_read(&ctl->tail_round) - 1;  // the loop's ++r
      continue;
    }
    if (tid == 0) {
      ctl->count[(slot + 2) % 3] = 0;  // read last in the previous round
      ++ctl->rounds;
      ctl->bids += m;
    }
    bid_step(p, p.list[cur], m, eps, big, warp, n_warps, lane);
    grid.sync();
    resolve_step(p, p.list[cur], m, p.list[nxt], &ctl->count[nxt], tid, n_threads);
    grid.sync();
    ++slot;
  }
  grid.sync();  // every thread has read count[slot % 3] before anyone changes it
  return slot;
}

/// Steps 1-4 in one cooperative launch; the searches (step 5) follow in
/// finish_kernel.  Every thread runs the same control flow; decisions read
/// values written before the last grid.sync().
template <class S>
__global__ __launch_bounds__(solve_threads) void auction_kernel(params<S> p) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t tid = grid.thread_rank(), n_threads = grid.size();
  const std::int64_t warp = tid / 32, n_warps = n_threads / 32;
  const int lane = threadIdx.x & 31;
  control* ctl = p.ctl;
  scale_step(p, tid, n_threads, warp, n_warps, lane);
  if (tid == 0) {
    ctl->count[0] = p.n_rows;
    ctl->count[1] = ctl->count[2] = 0;
  }
  grid.sync();
  const double c_max =
      __longlong_as_double(static_cast<long long>(atomic_read(&ctl->max_abs_bits)));
  // Capped so that the capped rounds' bids cannot overflow float64.
  const double big = c_max > 0 ? fmin(3 * c_max, 0x1p1000) : 1.0;
  int slot = 0;
  if (p.n_rows == p.n_cols && c_max > 0 && c_max < 0x1p900) {
    const double n2 = static_cast<double>(p.n_cols) * p.n_cols;
    const double final_eps =
        p.integer ? 1.0 : fmax(c_max / (p.sched.final_divisor * n2), c_max * 0x1p-40);
    double eps = p.integer ? fmax(1.0, floor(c_max / p.sched.theta)) : c_max / p.sched.theta;
    const column_record rec = column_record::for_rows(p.n_rows);
    const auto bid_cap = static_cast<unsigned long long>(p.sched.phase_bids) * p.n_rows;
    for (;;) {
      if (tid == 0) {
        ++ctl->phases;
        ctl->next_row = 0;
        ctl->assigned = 0;
        ctl->bids += static_cast<long long>(ctl->phase_bids);
        ctl->phase_bids = 0;
      }
      grid.sync();
      async_phase(p, rec, eps, big, bid_cap, lane);
      grid.sync();
      if (eps <= final_eps || atomic_read(&ctl->capped)) break;
      eps = fmax(next_eps(eps, p.sched, p.integer), final_eps);
      // A new phase: every row free again, the prices kept.
      for (std::int64_t j = tid; j < p.n_cols; j += n_threads) p.key[j] &= ~rec.mask;
    }
    if (tid == 0) ctl->bids += static_cast<long long>(ctl->phase_bids);
    decode_records(p, rec, tid, n_threads);
    grid.sync();
    // Step 3 into list (slot + 1) % 3; its rows still free stay free.
    const int out = (slot + 1) % 3;
    if (tid == 0) ctl->count[(slot + 2) % 3] = 0;
    exact_duals_step(p, p.list[out], &ctl->count[out], warp, n_warps, lane);
    grid.sync();
    slot = out;
  }
  slot = rounds(p, grid, slot, 0.0, big, p.sched.arr_rounds);
  if (tid == 0) ctl->final_list = slot % 3;
}

/// Step 5: one Dijkstra search per row left, one block; each thread holds
/// K columns' duals and search state in registers (batched::owned_columns).
template <class S, int K>
__global__ __launch_bounds__(finish_threads) void finish_kernel(params<S> p) {
  __shared__ unsigned long long slot_val[2 * batched::max_warps];
  __shared__ unsigned slot_key[2 * batched::max_warps];
  batched::clear_slots(slot_val, slot_key);
  __syncthreads();
  int parity = 0;
  const int which = p.ctl->final_list;
  const int m = p.ctl->count[which];
  const int* roots = p.list[which];
  batched::owned_columns<K> own;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = own.column(k);
    own.v[k] = j < p.n_cols ? p.v[j] : 0.0;
  }
  own.read_assigned(p.row4col, p.n_cols);
  for (int k = 0; k < m; ++k) {
    const int root = roots[k];
    double reached = 0;
    const int sink =
        batched::shortest_path<false, S, K>(p.cost, p.n_cols, 1.0, root, p.u, own, p.path,
                                            p.row4col, slot_val, slot_key, parity, &reached);
    if (sink < 0) {  // uniform over the block
      if (threadIdx.x == 0) p.ctl->error = 1;
      return;
    }
    batched::augment<K>(root, sink, reached, p.u, own, p.path, p.row4col, p.col4row, p.n_cols);
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = own.column(k);
    if (j < p.n_cols) p.v[j] = own.v[k];
  }
  if (threadIdx.x == 0) p.ctl->searches = m;
}

}  // namespace matchflow::cuda::auction

// Device code of gpu-sap: many small assignment problems, one thread block
// per problem (host side: batched_dispatch.cu).
//
// Algorithm: the shortest augmenting path of Crouse (2016, pages 1685-1686;
// SciPy's algorithm, cpp/src/lsap/shortest_augmenting_path.cpp is the CPU
// version), after a start that is dual feasible and tight on the pairs it
// assigns.  Every problem: a row reduction, u_i = min_j c_ij, v = 0, and
// each row takes its cheapest column while it is free (greedy_start); v = 0
// on every column keeps this valid for rectangular problems.  Square
// problems, whose columns all end up assigned, then also take Jonker and
// Volgenant's column reduction, v_j = min_i (c_ij - u_i) (column_minima),
// and each column still free takes the first row where its minimum lies
// when that row is free (greedy_columns): in a NumPy model of the searches
// on uniform costs this cut the sequential arg-mins per problem by ~40 %
// (300 x 300: mean 3463 -> 1924, most of 40 problems 4590 -> 2784; 64 x 64:
// 318 -> 175).  (Jonker-Volgenant's augmenting row reduction, two passes
// after it, raised them instead, 219 -> 322 at 64 x 64 and 2400 -> 2665 at
// 300 x 300, in the same model.)
// Each remaining free row then runs one Dijkstra search over reduced costs
// c_ij - u_i - v_j, in which the block's threads relax the row just
// reached over their columns and one block-wide arg-min picks the next
// column to scan; a dual update and the path flip close the search.
//
// Who owns what: column j = t + k * blockDim.x belongs to thread t, which
// keeps its dual v[j], distance and arg-min key (whose assigned bit
// mirrors row4col[j] >= 0) in registers (slot k of its K-long arrays, K a
// template argument; owned_columns) and alone writes its predecessor
// path[j]; so a search step reads no shared memory for its columns and
// needs no barrier beyond the one inside the arg-min.  u, col4row and
// row4col live in shared memory, are read by every thread and written
// only between searches (u by the owner of the scanned column the row was
// reached through; col4row/row4col by thread 0 in the path flip), each
// write followed by a barrier.
//
// A search step is latency bound (one row, then one arg-min) and its
// length is the chain of dependent instructions: a thread issues the
// loads of all its K costs of the row before using any; its K columns'
// work is branch-free (a scanned or absent column has distance NaN, which
// no comparison selects), so the K chains overlap; the arg-min runs on an
// order-preserving 64-bit image of the distance with three warp reductions
// (redux.sync) instead of five shuffle rounds, then one barrier and the
// warps' slots read four at a time (a one-warp block skips both).  Loading rows ahead
// (warming the L1 or L2 cache with each warp's candidate row, before the
// arg-min or after the step's own loads, or the runner-up's row into
// registers) made steps no faster or slower (benchmarks/NOTES.md,
// Batched), so a step loads only its own row.
//
// Among columns at the same least distance the arg-min takes a free one
// first (the search ends there), then the lowest index: every thread
// computes the same winner, deterministically.
//
// The costs are read in the caller's type and converted to float64 as they
// are used (float32 input is never widened in memory), with the sign of
// `maximize`; from shared memory when the problem fits there with the
// search state, else from global memory (tall problems are then transposed
// first by transpose_kernel, so rows stay contiguous).  The first pass over
// a problem's costs checks them: NaN and the wrong infinity make the
// problem `invalid`, a search that reaches no free column (every path
// forbidden) makes it `infeasible`.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace matchflow::cuda::batched {

/// A problem's outcome.  A failed problem p is reported as p * 4 + outcome,
/// atomicMin'd into one word (sap_params::first_failure), so that the host
/// reads eight bytes, whatever the batch, to learn the lowest failing
/// problem and why (no_failure: none failed).
enum problem_status : int { solved = 0, infeasible = 1, invalid = 2 };
constexpr unsigned long long no_failure = ~0ull;

constexpr int max_block_threads = 512;
constexpr int max_warps = max_block_threads / 32;
constexpr int max_columns_per_thread = 16;  ///< the largest K instantiated
constexpr unsigned assigned_bit = 30;       ///< arg-min key: (column assigned) << 30 | column
constexpr unsigned column_mask = (1u << assigned_bit) - 1;
constexpr unsigned no_key = 0xffffffffu;
constexpr unsigned long long no_value = ~0ull;  ///< above the image of +inf
constexpr unsigned full_mask = 0xffffffffu;

/// Byte offsets of one block's dynamic shared memory: the search state, the
/// arg-min slots, then (when `costs_shared`) the costs.
struct smem_layout {
  std::size_t u, path, row4col, col4row, slot_val, slot_key, cost;
  std::size_t state_bytes, total_bytes;

  __host__ __device__ static std::size_t align8(std::size_t b) { return (b + 7) & ~std::size_t(7); }

  __host__ __device__ smem_layout(int n_rows, int n_cols, std::size_t cost_size,
                                  bool costs_shared) {
    std::size_t at = 0;
    auto take = [&](std::size_t bytes) {
      const std::size_t here = at;
      at = align8(at + bytes);
      return here;
    };
    u = take(sizeof(double) * n_rows);
    path = take(sizeof(int) * n_cols);
    row4col = take(sizeof(int) * n_cols);
    col4row = take(sizeof(int) * n_rows);
    slot_val = take(sizeof(unsigned long long) * 2 * max_warps);
    slot_key = take(sizeof(unsigned) * 2 * max_warps);
    state_bytes = at;
    cost = costs_shared ? take(cost_size * n_rows * n_cols) : 0;
    total_bytes = at;
  }
};

/// What the kernel needs; `cost` holds `batch` problems back to back.
template <class T>
struct sap_params {
  const T* cost;  ///< per problem n_rows x n_cols, or n_cols x n_rows when load_transposed
  std::int64_t batch;
  std::int64_t first_problem;  ///< the caller's index of problem 0 here (failures name it)
  int n_rows, n_cols;          ///< the oriented problem: n_rows <= n_cols
  bool load_transposed;  ///< the caller's problems are tall: transpose them into shared memory
  bool transposed;       ///< report the caller's rows as our columns
  bool costs_shared;
  double sign;            ///< -1 when maximising
  std::int64_t* row_ind;  ///< batch x n_rows
  std::int64_t* col_ind;
  unsigned long long* first_failure;  ///< see problem_status; the caller sets no_failure
};

/// Order-preserving image of a double (no NaN): a < b iff ordered(a) <
/// ordered(b), except that -0 sorts below +0 (either is a least distance).
__device__ inline unsigned long long ordered(double x) {
  const auto b = static_cast<unsigned long long>(__double_as_longlong(x));
  return b ^ ((b >> 63) ? ~0ull : (1ull << 63));
}

/// The double whose image is `o`.
__device__ inline double from_ordered(unsigned long long o) {
  return __longlong_as_double(static_cast<long long>((o >> 63) ? o ^ (1ull << 63) : ~o));
}

/// (value, key) lexicographic minimum over the warp; every lane gets it.
/// Three redux.sync: the high word, the low word among the lanes that hold
/// the least high word, the key among the lanes that hold the least value.
__device__ inline void warp_argmin(unsigned long long& val, unsigned& key) {
  const auto hi = static_cast<unsigned>(val >> 32), lo = static_cast<unsigned>(val);
  const unsigned min_hi = __reduce_min_sync(full_mask, hi);
  const unsigned min_lo = __reduce_min_sync(full_mask, hi == min_hi ? lo : no_key);
  key = __reduce_min_sync(full_mask, hi == min_hi && lo == min_lo ? key : no_key);
  val = (static_cast<unsigned long long>(min_hi) << 32) | min_lo;
}

/// (v, k) becomes (v2, k2) when that pair is less (value, then key).
__device__ inline void keep_less(unsigned long long& v, unsigned& k, unsigned long long v2,
                                 unsigned k2) {
  if (v2 < v || (v2 == v && k2 < k)) {
    v = v2;
    k = k2;
  }
}

/// The least (value, key) of four slots: four loads in flight at once,
/// then a tree of depth two.
__device__ inline void least_of_four(const unsigned long long* vals, const unsigned* keys,
                                     unsigned long long& val, unsigned& key) {
  unsigned long long v[4];
  unsigned k[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    v[w] = vals[w];
    k[w] = keys[w];
  }
  keep_less(v[0], k[0], v[1], k[1]);
  keep_less(v[2], k[2], v[3], k[3]);
  keep_less(v[0], k[0], v[2], k[2]);
  val = v[0];
  key = k[0];
}

/// Fills both halves of the arg-min slots with (no_value, no_key), so that
/// combine_warps may read the slots of warps the block does not have.  The
/// caller puts a barrier between this and the first combine_warps.
__device__ inline void clear_slots(unsigned long long* slot_val, unsigned* slot_key) {
  for (int t = threadIdx.x; t < 2 * max_warps; t += blockDim.x) {
    slot_val[t] = no_value;
    slot_key[t] = no_key;
  }
}

/// The warps' arg-mins (each warp's in every lane, from warp_argmin)
/// combined over the block; every thread gets it.  One barrier (none for
/// a one-warp block): the slots alternate between two halves (`parity`),
/// so that a fast warp's next write cannot overwrite what a slow one still
/// reads.  Each thread then reads the slots four at a time, the slots past
/// the block's warps included (clear_slots): a group's loads wait together
/// and its least is a tree of depth two, a shorter chain than three more
/// dependent warp reductions or a walk of one load and compare a slot.
__device__ inline void combine_warps(unsigned long long& val, unsigned& key,
                                     unsigned long long* slot_val, unsigned* slot_key,
                                     int& parity) {
  const int n_warps = blockDim.x >> 5;
  if (n_warps == 1) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned long long* vals = slot_val + parity * max_warps;
  unsigned* keys = slot_key + parity * max_warps;
  parity ^= 1;
  if (lane == 0) {
    vals[warp] = val;
    keys[warp] = key;
  }
  __syncthreads();
  static_assert(max_warps % 4 == 0, "slots are read in groups of four");
  least_of_four(vals, keys, val, key);
  for (int g = 4; g < n_warps; g += 4) {
    unsigned long long v;
    unsigned k;
    least_of_four(vals + g, keys + g, v, k);
    keep_less(val, key, v, k);
  }
}

/// Cost x as a float64 to be minimised.
template <class T>
__device__ inline double weight(T x, double sign) {
  return sign * static_cast<double>(x);
}

/// Entry j of a cost row: a plain shared-memory load, or a global one
/// through the read-only path (the costs never change during the kernel).
/// Typed, not generic, loads: the shared and the global kernels are
/// separate instantiations.
template <bool Shared, class T>
__device__ inline T cost_at(const T* row, int j) {
  if constexpr (Shared) {
    return row[j];
  } else {  // j >= 0: widened as unsigned (no sign extension on the address)
    return __ldg(reinterpret_cast<const T*>(reinterpret_cast<const char*>(row) +
                                            static_cast<std::uint64_t>(static_cast<unsigned>(j)) *
                                                sizeof(T)));
  }
}

/// Copies (load_transposed: transposes) problem `src` into `tile` and
/// checks every entry; true when one is NaN or the wrong infinity.  Each
/// thread keeps `batch` loads in flight (the pass is a chain of
/// global-memory latencies otherwise).
template <class T>
__device__ bool copy_and_check(const sap_params<T>& prm, const T* src, T* tile) {
  constexpr int batch = 8;
  const std::int64_t entries = static_cast<std::int64_t>(prm.n_rows) * prm.n_cols;
  bool bad = false;
  for (std::int64_t base = threadIdx.x; base < entries; base += batch * blockDim.x) {
    T x[batch];
#pragma unroll
    for (int b = 0; b < batch; ++b) {
      const std::int64_t e = base + b * blockDim.x;
      x[b] = e < entries ? __ldg(src + e) : T(0);
    }
#pragma unroll
    for (int b = 0; b < batch; ++b) {
      const std::int64_t e = base + b * blockDim.x;
      if (e >= entries) break;
      if constexpr (std::is_floating_point_v<T>) {
        bad |= !(weight(x[b], prm.sign) > -INFINITY);  // NaN, or -inf after the sign
      }
      // Shared problems have fewer than 2^31 entries.  Transposed: e walks
      // the caller's (n_cols x n_rows) problem.
      const int ei = static_cast<int>(e), caller_row = ei / prm.n_rows;
      const int at =
          prm.load_transposed ? (ei - caller_row * prm.n_rows) * prm.n_cols + caller_row : ei;
      tile[at] = x[b];
    }
  }
  return __syncthreads_or(bad) != 0;
}

/// Row i's least entry (u_i) and its first column into u and col4row
/// (-1 when every entry is +inf), from the warp's lanes' (least, column).
__device__ inline void write_row_minimum(int i, double best, unsigned at, double* u, int* col4row) {
  unsigned long long key = ordered(best);
  warp_argmin(key, at);
  if ((threadIdx.x & 31) == 0) {
    u[i] = from_ordered(key);
    col4row[i] = from_ordered(key) < INFINITY ? static_cast<int>(at) : -1;
  }
}

/// u_i and the least column of every row of costs in shared memory, one
/// warp per row.
template <class T>
__device__ void row_minima_shared(const T* cost, int n_rows, int n_cols, double sign, double* u,
                                  int* col4row) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  for (int i = warp; i < n_rows; i += n_warps) {
    const T* row = cost + i * n_cols;
    double best = INFINITY;
    unsigned at = no_key;
    for (int j = lane; j < n_cols; j += 32) {
      const double w = weight(row[j], sign);
      if (w < best) {  // lanes walk increasing j: the first minimum stays
        best = w;
        at = j;
      }
    }
    write_row_minimum(i, best, at, u, col4row);
  }
}

/// u_i and the least column of every row of costs in global memory, and
/// their check (true: an entry is NaN or the wrong infinity), in one pass:
/// a warp per row with every load of the row in flight (`span` a lane; wider
/// rows in slices), so the pass is a chain of one global latency per row of
/// a warp.  Entries are compared in T (the order of their float64 weights:
/// least, or greatest when maximising), and only a row's best is converted.
/// Less than half the time of a check pass and a row loop that issued two or
/// three waves of loads a row (benchmarks/NOTES.md, Batched).
template <class T>
__device__ bool row_minima_global(const T* cost, int n_rows, int n_cols, double sign, double* u,
                                  int* col4row) {
  // Loads in flight per lane: 16 (512 columns a slice) when each takes one
  // register; 8 of 64-bit costs keeps the kernel's registers, and with
  // them its blocks per SM, near what the search needs.
  constexpr int span = sizeof(T) > 4 ? 8 : 16;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  const bool maximize = sign < 0;
  bool bad = false;
  for (int i = warp; i < n_rows; i += n_warps) {
    const T* row = cost + static_cast<std::int64_t>(i) * n_cols;
    T best = T(0);
    unsigned at = no_key;
    for (int base = lane; base < n_cols; base += 32 * span) {
      // One base address and immediate offsets, each load one register,
      // the comparisons in T: ptxas then issues every load before the
      // first use (with an address each and float64 weights, or a `break`
      // at the row's end, it issued a few at a time, each group waited for).
      T x[span];
#pragma unroll
      for (int s = 0; s < span; ++s)
        x[s] = base + 32 * s < n_cols ? __ldg(row + base + 32 * s) : T(0);
#pragma unroll
      for (int s = 0; s < span; ++s) {
        if (base + 32 * s >= n_cols) continue;
        const T c = x[s];
        if constexpr (std::is_floating_point_v<T>) {
          bad |= c != c || c == (maximize ? T(INFINITY) : T(-INFINITY));
        }
        if (at == no_key || (maximize ? c > best : c < best)) {  // the first best stays
          best = c;
          at = base + 32 * s;
        }
      }
    }
    write_row_minimum(i, at == no_key ? INFINITY : weight(best, sign), at, u, col4row);
  }
  return bad;
}

/// The greedy start after the row minima: each row takes its least column
/// while it is free, rows in order, so each column goes to the lowest row
/// whose least it is (decided by an atomicMin per row, not a walk over the
/// rows).  False when a row has no allowed column (the problem is
/// infeasible).  Reads the row minima' col4row only after a barrier, and
/// ends with one.
__device__ inline bool greedy_start(int n_rows, int n_cols, int* row4col, int* col4row) {
  for (int j = threadIdx.x; j < n_cols; j += blockDim.x) row4col[j] = INT_MAX;
  __syncthreads();
  bool feasible = true;
  for (int i = threadIdx.x; i < n_rows; i += blockDim.x) {
    const int j = col4row[i];
    feasible = feasible && j >= 0;
    if (j >= 0) atomicMin(row4col + j, i);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n_rows; i += blockDim.x) {
    const int j = col4row[i];
    if (j >= 0 && row4col[j] != i) col4row[i] = -1;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < n_cols; j += blockDim.x) {
    if (row4col[j] == INT_MAX) row4col[j] = -1;
  }
  return __syncthreads_and(feasible) != 0;
}

/// The columns a thread owns (t, t + blockDim.x, ... : K of them) and
/// their search state, in registers.  A column's distance is NaN once it
/// is scanned (its distance then moves to `done`) and for ever when it is
/// absent (past n_cols): every comparison with NaN is false, so the search
/// step neither relaxes nor picks such a column without testing a flag.
/// `key` is the column's arg-min key: (column assigned) << assigned_bit |
/// column; a column, once assigned, stays so (an augmentation assigns its
/// sink), so a step reads no shared memory for it.
template <int K>
struct owned_columns {
  double v[K];       ///< column duals
  double dist[K];    ///< this search's tentative distances (NaN: scanned or absent)
  double done[K];    ///< the distance at which column k was scanned
  unsigned key[K];   ///< arg-min keys
  unsigned scanned;  ///< bit k: column k scanned in this search

  __device__ static int column(int k) { return threadIdx.x + k * blockDim.x; }

  __device__ void read_assigned(const int* row4col, int n_cols) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int j = column(k);
      key[k] = j >= n_cols ? no_key
                           : (unsigned(row4col[j] >= 0) << assigned_bit) | static_cast<unsigned>(j);
    }
  }

  /// A new search: no column scanned, every present one unreached.
  __device__ void reset(int n_cols) {
    scanned = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) dist[k] = column(k) < n_cols ? INFINITY : NAN;
  }

  /// Column j, if this thread's, scanned at distance d.
  __device__ void scan(int j, double d) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (column(k) == j) {
        scanned |= 1u << k;
        done[k] = d;
        dist[k] = NAN;
      }
    }
  }

  /// Column j, if this thread's, now has a row.
  __device__ void assign(int j) {
#pragma unroll
    for (int k = 0; k < K; ++k) key[k] |= column(k) == j ? 1u << assigned_bit : 0u;
  }
};

/// Thread's K costs of row i into c, every load in flight before any use:
/// unconditional loads (an absent column reads an entry of the row that
/// no one uses), since predicated ones were issued in two or three waves
/// with the columns' arithmetic between them.  `entry[k]` points at the
/// problem's row-0 entry that column k reads (set_entries).
template <bool Shared, class T, int K>
__device__ inline void load_row(const T* const (&entry)[K], int i, int n_cols, T (&c)[K]) {
  const int row = i * n_cols;  // fewer than 2^31 entries a problem (GPU_MAX_DIM)
#pragma unroll
  for (int k = 0; k < K; ++k) c[k] = cost_at<Shared>(entry[k], row);
}

/// entry[k] for load_row: column(k), or for an absent column the last one
/// (a thread past n_cols reads the last column for each k).
template <class T, int K>
__device__ inline void set_entries(const T* cost, int n_cols, const T* (&entry)[K]) {
  const int first = min(static_cast<int>(threadIdx.x), n_cols - 1);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    entry[k] = cost + min(first + k * static_cast<int>(blockDim.x), n_cols - 1);
  }
}

/// Square problems, after the row minima u: each owned column's dual
/// v_j = min_i (w_ij - u_i) (Jonker-Volgenant's column reduction; the
/// search's first step forms (w_ij - u_i) - v_j in the same order, so every
/// reduced cost it sees is >= 0) and the first row attaining it in
/// first_row; absent columns get v = 0.  Rows are read `batch` at a time,
/// all their loads in flight.  False for the block when a column has no
/// allowed row (the problem is then infeasible).
template <bool Shared, class T, int K>
__device__ bool column_minima(const T* cost, int n, double sign, const double* u,
                              owned_columns<K>& own, int (&first_row)[K]) {
  constexpr int batch = K >= 16 ? 1 : 16 / K;
  const T* entry[K];
  set_entries(cost, n, entry);
  double best[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    best[k] = INFINITY;
    first_row[k] = 0;
  }
  for (int i0 = 0; i0 < n; i0 += batch) {
    T c[batch][K];
#pragma unroll
    for (int b = 0; b < batch; ++b) load_row<Shared>(entry, min(i0 + b, n - 1), n, c[b]);
    // Straight-line (a row past the end has u = -inf, so it never wins):
    // an exit there let the compiler sink each row's loads below the
    // previous row's arithmetic, one latency a row.
#pragma unroll
    for (int b = 0; b < batch; ++b) {
      const double u_i = i0 + b < n ? u[i0 + b] : -INFINITY;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const double d = weight(c[b][k], sign) - u_i;
        if (d < best[k]) {  // increasing rows: the first minimum stays
          best[k] = d;
          first_row[k] = i0 + b;
        }
      }
    }
  }
  bool allowed = true;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const bool present = own.column(k) < n;
    own.v[k] = present ? best[k] : 0;
    allowed = allowed && (!present || best[k] < INFINITY);
  }
  return __syncthreads_and(allowed) != 0;
}

/// Square problems, after greedy_start and column_minima: each column still
/// free takes the first row of its column minimum (a zero reduced cost)
/// when that row is free too; of several columns naming one row the lowest
/// wins (atomicMin into `claim`, n ints of scratch).  Ends with a barrier.
template <int K>
__device__ void greedy_columns(const int (&first_row)[K], int n, int* row4col, int* col4row,
                               int* claim) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) claim[i] = INT_MAX;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = owned_columns<K>::column(k);
    if (j < n && row4col[j] < 0 && col4row[first_row[k]] < 0) atomicMin(claim + first_row[k], j);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = owned_columns<K>::column(k);
    if (j < n && row4col[j] < 0 && claim[first_row[k]] == j) {
      row4col[j] = first_row[k];
      col4row[first_row[k]] = j;
    }
  }
  __syncthreads();
}

/// One Dijkstra search from free row `root`; returns the free column it
/// reaches (-1: none, the problem is infeasible) and its distance in *reached.
/// A step's work on the thread's K columns is branch-free and independent
/// per column until the thread's own arg-min, so the K chains of
/// dependent FP64 operations overlap (with a `continue` per column they ran
/// one after the other: benchmarks/NOTES.md, Batched).
template <bool Shared, class T, int K>
__device__ int shortest_path(const T* cost, int n_cols, double sign, int root, const double* u,
                             owned_columns<K>& own, int* path, const int* row4col,
                             unsigned long long* slot_val, unsigned* slot_key, int& parity,
                             double* reached) {
  own.reset(n_cols);
  const T* entry[K];
  set_entries(cost, n_cols, entry);
  double at = 0;  // distance of the last scanned column
  for (int i = root;;) {
    T c[K];
    load_row<Shared>(entry, i, n_cols, c);
    const double u_i = u[i];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      // Crouse's order of operations: (distance + cost) - u_i - v_j.
      const double r = at + weight(c[k], sign) - u_i - own.v[k];
      if (r < own.dist[k]) {  // false for NaN: scanned or absent
        own.dist[k] = r;
        path[own.column(k)] = i;
      }
    }
    // The thread's least (distance, key); the key puts a free column first
    // among equal distances, then the lower index.  If every distance is
    // +inf or NaN, the search fails below whatever the key.
    double least = INFINITY;
    unsigned key = no_key;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (own.dist[k] < least || (own.dist[k] == least && own.key[k] < key)) {
        least = own.dist[k];
        key = own.key[k];
      }
    }
    unsigned long long best = ordered(least);
    warp_argmin(best, key);
    combine_warps(best, key, slot_val, slot_key, parity);
    const double d = from_ordered(best);
    if (!(d < INFINITY)) return -1;
    const int j = static_cast<int>(key & column_mask);
    own.scan(j, d);
    at = d;
    if (!(key >> assigned_bit)) {
      *reached = at;
      return j;
    }
    i = row4col[j];
  }
}

/// Dual update of the search that reached `sink` at distance `reached`, then
/// the path flip (Crouse's); ends with a barrier.
template <int K>
__device__ void augment(int root, int sink, double reached, double* u, owned_columns<K>& own,
                        const int* path, int* row4col, int* col4row, int n_cols) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int j = own.column(k);
    if (!((own.scanned >> k) & 1u)) continue;   // absent columns are never scanned
    const double step = reached - own.done[k];  // 0 at the sink
    own.v[k] -= step;
    if (row4col[j] >= 0) u[row4col[j]] += step;  // the row reached through j
  }
  if (threadIdx.x == 0) u[root] += reached;  // root is free: no column writes it
  own.assign(sink);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int j = sink;;) {
      const int i = path[j];
      row4col[j] = i;
      const int previous = col4row[i];
      col4row[i] = j;
      j = previous;
      if (i == root) break;
    }
  }
  __syncthreads();
}

/// Writes problem p's assignment in the caller's orientation.
__device__ inline void write_assignment(std::int64_t p, int n_rows, int n_cols, bool transposed,
                                        const int* row4col, const int* col4row,
                                        std::int64_t* row_ind, std::int64_t* col_ind) {
  std::int64_t* rows = row_ind + p * n_rows;
  std::int64_t* cols = col_ind + p * n_rows;
  if (!transposed) {
    for (int i = threadIdx.x; i < n_rows; i += blockDim.x) {
      rows[i] = i;
      cols[i] = col4row[i];
    }
    return;
  }
  // The caller's rows are our columns: list the assigned ones in order,
  // one warp, 32 columns per ballot.
  if (threadIdx.x >= 32) return;
  const int lane = threadIdx.x;
  int count = 0;
  for (int base = 0; base < n_cols; base += 32) {
    const int j = base + lane;
    const bool assigned = j < n_cols && row4col[j] >= 0;
    const unsigned mask = __ballot_sync(full_mask, assigned);
    if (assigned) {
      const int k = count + __popc(mask & ((1u << lane) - 1));
      rows[k] = j;
      cols[k] = row4col[j];
    }
    count += __popc(mask);
  }
}

/// gpu-sap: block b solves problems b, b + gridDim.x, ...; needs
/// K * blockDim.x >= n_cols.  Shared: the costs are copied to shared
/// memory (prm.costs_shared), else read from global memory.
template <class T, int K, bool Shared>
__global__ void __launch_bounds__(max_block_threads) sap_kernel(const sap_params<T> prm) {
  extern __shared__ __align__(16) unsigned char smem[];
  const smem_layout at(prm.n_rows, prm.n_cols, sizeof(T), Shared);
  double* u = reinterpret_cast<double*>(smem + at.u);
  int* path = reinterpret_cast<int*>(smem + at.path);
  int* row4col = reinterpret_cast<int*>(smem + at.row4col);
  int* col4row = reinterpret_cast<int*>(smem + at.col4row);
  auto* slot_val = reinterpret_cast<unsigned long long*>(smem + at.slot_val);
  auto* slot_key = reinterpret_cast<unsigned*>(smem + at.slot_key);
  T* tile = reinterpret_cast<T*>(smem + at.cost);
  const std::int64_t entries = static_cast<std::int64_t>(prm.n_rows) * prm.n_cols;
  int parity = 0;
  owned_columns<K> own;
  clear_slots(slot_val, slot_key);  // greedy_start's barriers follow

  for (std::int64_t p = blockIdx.x; p < prm.batch; p += gridDim.x) {
    const T* src = prm.cost + p * entries;
    const T* cost = Shared ? tile : src;
#pragma unroll
    for (int k = 0; k < K; ++k) own.v[k] = 0;
    int outcome = solved;
    bool bad = false;
    if constexpr (Shared) {
      bad = copy_and_check(prm, src, tile);
      row_minima_shared(cost, prm.n_rows, prm.n_cols, prm.sign, u, col4row);
    } else {
      bad = row_minima_global(cost, prm.n_rows, prm.n_cols, prm.sign, u, col4row);
    }
    bool feasible = greedy_start(prm.n_rows, prm.n_cols, row4col, col4row);
    if (prm.n_rows == prm.n_cols && feasible) {  // uniform
      int first_row[K];
      feasible = column_minima<Shared>(cost, prm.n_cols, prm.sign, u, own, first_row);
      if (feasible) greedy_columns(first_row, prm.n_cols, row4col, col4row, path);
    }
    if (__syncthreads_or(bad)) {
      outcome = invalid;
    } else if (!feasible) {
      outcome = infeasible;
    } else {
      own.read_assigned(row4col, prm.n_cols);
      for (int root = 0; root < prm.n_rows; ++root) {
        if (col4row[root] >= 0) continue;  // uniform: col4row changes before barriers only
        double reached = 0;
        const int sink = shortest_path<Shared, T, K>(cost, prm.n_cols, prm.sign, root, u, own, path,
                                                     row4col, slot_val, slot_key, parity, &reached);
        if (sink < 0) {  // uniform: every thread got the same arg-min
          outcome = infeasible;
          break;
        }
        augment<K>(root, sink, reached, u, own, path, row4col, col4row, prm.n_cols);
      }
    }
    if (outcome == solved) {
      write_assignment(p, prm.n_rows, prm.n_cols, prm.transposed, row4col, col4row, prm.row_ind,
                       prm.col_ind);
    }
    if (threadIdx.x == 0 && outcome != solved) {
      atomicMin(prm.first_failure,
                static_cast<unsigned long long>(prm.first_problem + p) * 4 + outcome);
    }
    __syncthreads();  // the next problem reuses the shared memory
  }
}

/// out[p] = in[p] transposed, for `batch` problems of n_rows x n_cols (in)
/// each; 32 x 32 tiles through shared memory (grid: tiles x tiles x problems).
template <class T>
__global__ void transpose_kernel(const T* in, T* out, std::int64_t batch, int n_rows, int n_cols) {
  __shared__ T tile[32][33];
  const std::int64_t entries = static_cast<std::int64_t>(n_rows) * n_cols;
  const int col0 = blockIdx.x * 32, row0 = blockIdx.y * 32;
  for (std::int64_t p = blockIdx.z; p < batch; p += gridDim.z) {
    const T* a = in + p * entries;
    T* b = out + p * entries;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
      const int i = row0 + r, j = col0 + threadIdx.x;
      if (i < n_rows && j < n_cols)
        tile[r][threadIdx.x] = a[static_cast<std::int64_t>(i) * n_cols + j];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
      const int j = col0 + r, i = row0 + threadIdx.x;
      if (i < n_rows && j < n_cols)
        b[static_cast<std::int64_t>(j) * n_rows + i] = tile[threadIdx.x][r];
    }
    __syncthreads();
  }
}

}  // namespace matchflow::cuda::batched

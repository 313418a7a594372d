// Device code of the multi-GPU CU-TREE (paper 001, Section 5): the columns
// are split into `parts` blocks, one per GPU (or several logical parts on
// one GPU: the same code).  Each part keeps its cost block (all rows, its
// columns), and its columns' v, slack, predecessors and cover stamps; the
// row side (u, col4row, tree stamps) is replicated and every part updates
// it identically from what the parts exchange.
//
// Per forward or dual step (Algorithms 4 and 9) the parts exchange, GPU to
// GPU with no host in the loop:
//  * the rows that joined the tree, each with the column it joined through
//    and that column's predecessor row (tree_entry): written by the column's
//    owner straight into every part's entry list (peer stores over NVLink);
//  * their counts, the least uncovered slack (theta) and the reverse
//    columns found so far, posted to every part's mailbox (exchange()).
// The paper gathers each BFS level through the host and MPI; here the whole
// search runs in one persistent kernel per part, and a step costs one
// mailbox round trip (and the verdict's hand-off to the blocks) more than on
// one GPU.
//
// Augmentation (Algorithms 5 and 6) is replicated: every part knows each
// tree row's joining column and parent row, so every part walks every path
// and flips col4row; a column's owner also flips its row4col entry.  Where a
// tree has several reverse columns the least column index wins (claim),
// so that every part picks the same path (one GPU keeps the paper's race).
//
// Faults: a part that sees no post from a peer for `timeout_ns` stops with
// multi_gpu_error::timeout; its own posts stop, so the others stop too.
#pragma once

#include <cuda/atomic>

#include "lsap/hungarian_kernels.cuh"

namespace matchflow::cuda::hungarian {

constexpr int max_parts = 8;

/// `row` joined the tree through global column `col`, whose predecessor is
/// `parent` (pc).  Roots: col = parent = none.
struct tree_entry {
  int row, col, parent;
};

/// Global column `col` became tight with no row assigned: a path ends there.
struct reverse_entry {
  int col, parent;
};

/// One part's post of one exchange; `epoch` is written last.
struct mailbox {
  int epoch;
  int count;  // tree entries this part wrote in the step
  int revs;   // reverse columns this part found in the iteration so far
  int pad;
  key_t theta;    // least uncovered slack over this part's columns
  key_t max_abs;  // prologue: largest finite |c| of this part's block
};

enum multi_gpu_error : int { infeasible = 1, timeout = 2 };

/// Where one part's exchange arena (one allocation, shareable by CUDA IPC)
/// keeps what the parts write into it: mailboxes [3][parts], tree entries
/// [3][parts][lines], reverse entries [2][parts][n_cols], minima
/// [parts][lines]; lines: n_rows for the column split (row minima, a row
/// joins once a step), n_cols for the row split (column minima, a column is
/// covered once a step).  Slots by step % 3 and iteration parity: a part writes
/// a slot again only after an exchange that every part posts after
/// reading it (see multi_tree_solve_kernel).
template <class T>
struct arena_view {
  mailbox* mail;
  tree_entry* entries;
  reverse_entry* revs;
  T* row_min;

  __host__ __device__ static std::size_t bytes(int parts, std::int64_t lines, std::int64_t n_cols) {
    const std::size_t p = static_cast<std::size_t>(parts);
    return 3 * p * sizeof(mailbox) + 3 * p * lines * sizeof(tree_entry) +
           2 * p * n_cols * sizeof(reverse_entry) + p * lines * sizeof(T) + 64;
  }
  __host__ __device__ static arena_view at(void* base, int parts, std::int64_t lines,
                                           std::int64_t n_cols) {
    const std::size_t p = static_cast<std::size_t>(parts);
    char* c = static_cast<char*>(base);
    arena_view a;
    a.mail = reinterpret_cast<mailbox*>(c);
    c += 3 * p * sizeof(mailbox);
    a.entries = reinterpret_cast<tree_entry*>(c);
    c += 3 * p * lines * sizeof(tree_entry);
    a.revs = reinterpret_cast<reverse_entry*>(c);
    c += 2 * p * n_cols * sizeof(reverse_entry);
    a.row_min =
        reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(c) + 7) & ~std::uintptr_t(7));
    return a;
  }
};

/// Everything one part's kernel reads: its single-GPU state (s.n_cols is
/// the part's width, s.pr holds global column indices), the replicated tree
/// links and every part's arena (peer[part] is its own).
template <class T>
struct multi_state {
  state<T> s;
  int part, parts;
  int col0;  // the part's first global column
  int n_cols_total;
  int seg;                    // the arena's lines: one part's entries of a step
  int* parent;                // row -> predecessor row of the column it joined through
  int* root;                  // row -> root of its tree
  unsigned long long* claim;  // root -> least (column, parent) of its reverse columns
  arena_view<T> peer[max_parts];
  long long timeout_ns;
  bool across_devices;  // a peer on another GPU (or process): fences at system scope

  /// Orders this thread's writes to the arenas before what it writes next.
  __device__ void fence() const {
    if (across_devices)
      __threadfence_system();
    else
      __threadfence();
  }

  __device__ tree_entry* entries(int q, int slot, int from) const {
    return peer[q].entries + (static_cast<std::int64_t>(slot) * parts + from) * seg;
  }
  __device__ reverse_entry* revs(int q, int parity, int from) const {
    return peer[q].revs + (static_cast<std::int64_t>(parity) * parts + from) * n_cols_total;
  }
};

/// The frontier of a step: this iteration's roots (a row list), or the
/// entries every part wrote in the previous step: segment q (from part q)
/// at entries + q * seg, `start` its prefix sums (in shared memory, as
/// exchange() leaves them: read often, by every thread).
struct multi_frontier {
  const int* roots;  // non-null: the roots
  const tree_entry* entries;
  const int* start;
  int seg;

  __device__ const tree_entry& entry(int f) const {
    int q = 0;
    while (f >= start[q + 1]) ++q;
    return entries[static_cast<std::int64_t>(q) * seg + (f - start[q])];
  }
  __device__ int operator[](int f) const { return roots ? roots[f] : entry(f).row; }

  /// The frontier rows join the tree (as tree_expand_step's stamp), with
  /// their links.  The parent's root was stamped in an earlier step.
  template <class T>
  __device__ void stamp(const multi_state<T>& m, int nf, int it, std::int64_t tid,
                        std::int64_t nthreads) const {
    for (std::int64_t f = tid; f < nf; f += nthreads) {
      if (roots) {
        m.s.vr[roots[f]] = it;
        continue;
      }
      const tree_entry e = entry(static_cast<int>(f));
      m.s.vr[e.row] = it;
      m.s.pr[e.row] = e.col;
      m.parent[e.row] = e.parent;
      m.root[e.row] = m.root[e.parent];
    }
  }
};

/// What every part decides the next step on: the same values on every part.
struct exchange_totals {
  int start[max_parts + 1];  // entries of the step, prefix sums by part
  int revs[max_parts];       // reverse columns of the iteration, by part
  int rev_total;
  int error;
  key_t theta, max_abs;
};

__device__ inline long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <class X>
using system_ref = ::cuda::atomic_ref<X, ::cuda::thread_scope_system>;

/// Block 0 posts this part's outcome of exchange `step` (of iteration `it`;
/// step 0: the prologue's largest |c|) to every part and waits for all
/// posts of it (or a timeout); it writes the totals to `verdict` (this
/// part's memory), where every block reads them into shared memory.  Called
/// by every thread after a grid.sync(): the part's writes of the step are
/// done, each writer's fenced (multi_state::fence).  Returns the block's
/// shared copy (valid until the next exchange).
template <class T>
__device__ const exchange_totals& exchange(const multi_state<T>& m, int step, int it,
                                           exchange_totals* verdict, int* verdict_epoch) {
  const int slot = step % 3;
  const int epoch = step + 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const control* ctl = m.s.ctl;
    const bool prologue = step == 0;
    mailbox mine{};
    mine.count = prologue ? 0 : atomic_read(&ctl->fcount[slot]);
    mine.revs = prologue ? 0 : atomic_read(&ctl->revs[it & 1]);
    mine.theta = prologue ? ~0ull : atomic_read(&ctl->theta_key[slot]);
    mine.max_abs = prologue ? atomic_read(&ctl->max_abs_key) : 0;
    for (int q = 0; q < m.parts; ++q) {
      mailbox* box = &m.peer[q].mail[slot * m.parts + m.part];
      system_ref<int>(box->count).store(mine.count, ::cuda::memory_order_relaxed);
      system_ref<int>(box->revs).store(mine.revs, ::cuda::memory_order_relaxed);
      system_ref<key_t>(box->theta).store(mine.theta, ::cuda::memory_order_relaxed);
      system_ref<key_t>(box->max_abs).store(mine.max_abs, ::cuda::memory_order_relaxed);
    }
    m.fence();  // the fields (and the step's entries) before the epochs
    for (int q = 0; q < m.parts; ++q)
      system_ref<int>(m.peer[q].mail[slot * m.parts + m.part].epoch)
          .store(epoch, ::cuda::memory_order_relaxed);
    exchange_totals t{};
    t.theta = ~0ull;
    const long long deadline = global_ns() + m.timeout_ns;
    mailbox* boxes = &m.peer[m.part].mail[slot * m.parts];
    for (int q = 0; q < m.parts && !t.error; ++q)
      while (system_ref<int>(boxes[q].epoch).load(::cuda::memory_order_relaxed) != epoch)
        if (global_ns() > deadline) {
          t.error = multi_gpu_error::timeout;
          break;
        }
    m.fence();  // the epochs before the fields
    for (int q = 0; q < m.parts && !t.error; ++q) {
      const int c = system_ref<int>(boxes[q].count).load(::cuda::memory_order_relaxed);
      t.start[q + 1] = t.start[q] + c;
      t.revs[q] = system_ref<int>(boxes[q].revs).load(::cuda::memory_order_relaxed);
      t.rev_total += t.revs[q];
      const key_t th = system_ref<key_t>(boxes[q].theta).load(::cuda::memory_order_relaxed);
      const key_t ma = system_ref<key_t>(boxes[q].max_abs).load(::cuda::memory_order_relaxed);
      t.theta = th < t.theta ? th : t.theta;
      t.max_abs = ma > t.max_abs ? ma : t.max_abs;
    }
    for (int q = m.parts + 1; q <= max_parts; ++q) t.start[q] = t.start[m.parts];
    *verdict = t;
    __threadfence();
    atomicExch(verdict_epoch, epoch);
  }
  __shared__ exchange_totals shared;
  if (threadIdx.x == 0) {
    while (atomic_read(verdict_epoch) != epoch) {
    }
    __threadfence();
    // volatile: past L1, which may hold an earlier exchange's verdict
    const volatile int* from = reinterpret_cast<const volatile int*>(verdict);
    int* to = reinterpret_cast<int*>(&shared);
    for (std::size_t k = 0; k < sizeof(exchange_totals) / sizeof(int); ++k) to[k] = from[k];
  }
  __syncthreads();
  return shared;
}

/// A column of this part became tight (tighten()'s multi-GPU form): its
/// assigned row joins the tree, or it ends a path; either way every part
/// gets an entry (the caller fences its entries once, after its columns).
/// sync: the entry lists' counts (atomic), vc (one writer).
template <class T>
__device__ inline void multi_join(const multi_state<T>& m, int j, int it, int slot) {
  const state<T>& s = m.s;
  s.vc[j] = it;
  const int inew = s.ac[j];
  const int col = m.col0 + j;
  if (inew == none) {
    const int at = claim_place(&s.ctl->revs[it & 1]);
    for (int q = 0; q < m.parts; ++q) m.revs(q, it & 1, m.part)[at] = reverse_entry{col, s.pc[j]};
  } else {
    const int at = claim_place(&s.ctl->fcount[slot]);
    for (int q = 0; q < m.parts; ++q)
      m.entries(q, slot, m.part)[at] = tree_entry{inew, col, s.pc[j]};
  }
}

/// The prologue's first half: this part's row minima (u, from
/// row_reduce_kernel) into every part's arena.
template <class T>
__device__ void share_row_minima(const multi_state<T>& m, std::int64_t tid, std::int64_t nthreads) {
  for (std::int64_t i = tid; i < m.s.n_rows; i += nthreads)
    for (int q = 0; q < m.parts; ++q)
      m.peer[q].row_min[static_cast<std::int64_t>(m.part) * m.s.n_rows + i] = m.s.u[i];
  m.fence();
}

/// The prologue's second half: u = the least row minimum over the parts;
/// for square problems v[j] = min_i c_ij - u_i over this part's columns
/// (Algorithm 1; rectangular problems keep v = 0).
template <class T>
__device__ void reduce_rows_and_columns(const multi_state<T>& m, bool square, cg::grid_group& grid,
                                        std::int64_t tid, std::int64_t nthreads) {
  const state<T>& s = m.s;
  const T* row_min = m.peer[m.part].row_min;
  for (std::int64_t i = tid; i < s.n_rows; i += nthreads) {
    T least = row_min[i];
    for (int q = 1; q < m.parts; ++q) {
      const T x = row_min[static_cast<std::int64_t>(q) * s.n_rows + i];
      least = x < least ? x : least;
    }
    s.u[i] = least;
  }
  grid.sync();
  if (!square) return;
  for (std::int64_t j = tid; j < s.n_cols; j += nthreads) {
    T least = cost_inf<T>();
    for (int i = 0; i < s.n_rows; ++i) {
      const T r = reduced_cost(s.cost, s.n_cols, i, static_cast<int>(j), s.u[i], T(0));
      least = r < least ? r : least;
    }
    s.v[j] = least;
  }
}

/// Roots of iteration `it` (unassigned rows; the same list on every part)
/// and the slacks reset.  safe: row stamps (row owner), slack (column owner).
template <class T>
__device__ void multi_roots_step(const multi_state<T>& m, int it, std::int64_t tid,
                                 std::int64_t nthreads) {
  const state<T>& s = m.s;
  for (std::int64_t i = tid; i < s.n_rows; i += nthreads)
    if (s.ar[i] == none) {
      s.pr[i] = none;
      m.root[i] = static_cast<int>(i);
      push(s.roots[it & 1], &s.ctl->rcount[it & 1], static_cast<int>(i));
    }
  for (std::int64_t j = tid; j < s.n_cols; j += nthreads) s.slack[j] = cost_inf<T>();
}

/// Algorithm 5's choice made the same on every part: each tree with
/// reverse columns keeps its least (column, parent).  sync: claim (atomicMin).
template <class T>
__device__ void claim_paths(const multi_state<T>& m, const exchange_totals& t, int it,
                            std::int64_t tid, std::int64_t nthreads) {
  for (int q = 0; q < m.parts; ++q) {
    const reverse_entry* revs = m.revs(m.part, it & 1, q);
    for (std::int64_t k = tid; k < t.revs[q]; k += nthreads) {
      const reverse_entry e = revs[k];
      const unsigned long long key =
          (static_cast<unsigned long long>(e.col) << 32) | static_cast<unsigned>(e.parent);
      atomicMin(&m.claim[m.root[e.parent]], key);
    }
  }
}

/// Algorithm 6 on every part: the claimed path of each root is flipped in
/// col4row (replicated) and, for this part's columns, in row4col; roots
/// without a path become the next iteration's; slacks are reset.  Paths of
/// different roots are vertex-disjoint.  safe: ar, ac, claim (one root's path).
template <class T>
__device__ void multi_augment_step(const multi_state<T>& m, int it, int nroots, std::int64_t tid,
                                   std::int64_t nthreads) {
  const state<T>& s = m.s;
  const int* roots = s.roots[it & 1];
  long long paths = 0;
  for (std::int64_t p = tid; p < nroots; p += nthreads) {
    const int r = roots[p];
    const unsigned long long key = m.claim[r];
    if (key == ~0ull) {
      s.pr[r] = none;
      push(s.roots[(it + 1) & 1], &s.ctl->rcount[(it + 1) & 1], r);
      continue;
    }
    m.claim[r] = ~0ull;
    int col = static_cast<int>(key >> 32);
    int row = static_cast<int>(key & 0xffffffffu);
    while (true) {
      const int joined_by = s.pr[row];
      s.ar[row] = col;
      if (col >= m.col0 && col < m.col0 + s.n_cols) s.ac[col - m.col0] = row;
      if (joined_by == none) break;
      col = joined_by;
      row = m.parent[row];
    }
    ++paths;
  }
  close_iteration(s, it, paths, tid, nthreads);
}

/// Where exchange() leaves its verdict in this part's memory.
struct verdict_box {
  exchange_totals totals;
  int epoch;
};

/// The frontier of the entries of step `step` (exchange totals t).
template <class T>
__device__ multi_frontier entry_frontier(const multi_state<T>& m, int step,
                                         const exchange_totals& t) {
  return multi_frontier{nullptr, m.entries(m.part, step % 3, 0), t.start, m.seg};
}

/// One part's whole solve (a cooperative launch per part, all parts
/// running at once).  tree_solve_kernel's control flow, with every step's
/// outcome taken from exchange(): the same on every part, so every part
/// takes the same branches.  `step` counts exchanges (the prologue's is 0);
/// step s writes entry slot s % 3 and mailbox slot s % 3.
template <class T>
__global__ __launch_bounds__(solve_threads, 1) void multi_tree_solve_kernel(multi_state<T> m,
                                                                            verdict_box* vb,
                                                                            bool square) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t tid = grid.thread_rank();
  const std::int64_t nthreads = grid.size();
  const state<T>& s = m.s;
  control* ctl = s.ctl;
  const int k_cap = s.k_max;
  // The outcome of exchange `step`: every block's shared copy.
  auto post = [&](int step, int it) { return &exchange(m, step, it, &vb->totals, &vb->epoch); };
  // A step's columns joined by multi_join, each writer fencing its entries once.
  auto joining = [&](int it, int slot, auto&& step_body) {
    bool joined = false;
    step_body([&](int j) {
      multi_join(m, j, it, slot);
      joined = true;
    });
    if (joined) m.fence();
    grid.sync();
  };
  share_row_minima(m, tid, nthreads);
  grid.sync();
  const exchange_totals* t = post(0, 0);
  if (t->error) {
    if (tid == 0) ctl->error = t->error;
    return;
  }
  const T tol = tolerance<T>(t->max_abs);
  reduce_rows_and_columns(m, square, grid, tid, nthreads);
  int it = 1;
  int step = 1;
  int error = 0;
  if (tid == 0) ctl->revs[1] = ctl->revs[0] = 0;
  multi_roots_step(m, it, tid, nthreads);
  grid.sync();
  while (true) {
    const int nroots = block_read(&ctl->rcount[it & 1]);
    if (nroots == 0) {
      if (tid == 0) ctl->steps = step;
      break;
    }
    if (tid == 0) {
      ctl->rcount[(it + 1) & 1] = 0;
      ctl->revs[(it + 1) & 1] = 0;
      ++ctl->iterations;
    }
    multi_frontier fr{s.roots[it & 1], nullptr, nullptr, s.n_rows};
    int nf = nroots;
    // Exchange `step`; the next frontier is what it brought.
    auto exchanged = [&]() {
      t = post(step, it);
      error = t->error;
      fr = entry_frontier(m, step, *t);
      nf = t->start[m.parts];
      ++step;
    };
    auto next_slots = [&](bool dual) {  // reset the slots of step + 1 (last read in step - 2)
      if (tid != 0) return;
      ctl->fcount[(step + 1) % 3] = 0;
      ctl->theta_key[(step + 1) % 3] = key_inf<T>();
      if (dual) ++ctl->dual_updates;
    };
    bool found = false;
    while (!found && !error) {
      const int slot = step % 3;
      next_slots(false);
      const int K = partial_step(s, fr, nf, k_cap, it, grid, tid, nthreads);
      fr.stamp(m, nf, it, tid, nthreads);
      joining(it, slot, [&](auto&& join) {
        expand_columns(s, fr, nf, K, it, tol, slot, tid, nthreads, join);
      });
      exchanged();
      while (!error && nf == 0 && t->rev_total == 0) {
        if (t->theta >= key_inf<T>()) {
          error = multi_gpu_error::infeasible;
          break;
        }
        const int dslot = step % 3;
        const T theta = decode<T>(t->theta);
        next_slots(true);
        joining(it, dslot,
                [&](auto&& join) { dual_step(s, theta, it, tol, dslot, tid, nthreads, join); });
        exchanged();
      }
      found = nf == 0;
    }
    if (error) {
      if (tid == 0) ctl->error = error;
      return;
    }
    claim_paths(m, *t, it, tid, nthreads);
    grid.sync();
    multi_augment_step(m, it, nroots, tid, nthreads);
    grid.sync();
    ++it;
  }
}

}  // namespace matchflow::cuda::hungarian

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

#include "common/device_clock.cuh"
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

/// Words of an exchange in NCCL's "LL" form: each 8-byte word carries the
/// exchange's epoch in its high half and 32 bits of value in its low half,
/// so a reader that sees the epoch in every word has the whole post, with no
/// fence between values and a flag (a 64-bit store is single-copy atomic).
using ll_word = unsigned long long;

__device__ inline ll_word ll_pack(int epoch, unsigned value) {
  return (static_cast<ll_word>(static_cast<unsigned>(epoch)) << 32) | value;
}
__device__ inline unsigned ll_value(ll_word w) { return static_cast<unsigned>(w); }
__device__ inline bool ll_has(ll_word w, int epoch) {
  return static_cast<unsigned>(w >> 32) == static_cast<unsigned>(epoch);
}

/// One part's post of one exchange: the tree entries it wrote in the step,
/// the reverse columns it found in the iteration so far, and a key (the
/// least uncovered slack; the prologue: the largest finite |c| of its block)
/// in two halves.
struct mailbox {
  ll_word word[4];
};
enum mailbox_word { mail_count, mail_revs, mail_key_high, mail_key_low };

enum multi_gpu_error : int { infeasible = 1, timeout = 2, no_progress = 3 };

/// Steps one iteration can take: a column is covered once per iteration,
/// and between two covered columns come at most three steps (a step that
/// covered, one that found nothing, a dual update), so a longer iteration is
/// a defect, which ends the solve with no_progress instead of a hang.
/// Every part counts the same steps, so all stop together.
__device__ inline bool stalled(int steps_in_iteration, int n_cols_total) {
  return steps_in_iteration > 4 * n_cols_total + 16;
}

/// What the host reports of a stalled solve: its step count and last
/// exchange (ctl->steps, theta_key[0], fcount[0]).
__device__ inline void record_stall(control* ctl, int steps, key_t theta, int nf) {
  ctl->steps = steps;
  ctl->theta_key[0] = theta;
  ctl->fcount[0] = nf;
}

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

template <class X>
using system_ref = ::cuda::atomic_ref<X, ::cuda::thread_scope_system>;

/// Where one part's blocks meet at each exchange (this part's memory, zeroed
/// before the launch): the blocks' arrivals, and block 0's verdict as LL
/// words: per part its entries and reverse columns, then the error and the
/// reduced key (theta; the prologue: max |c|) in two halves.
struct verdict_box {
  unsigned long long arrived;
  ll_word word[2 * max_parts + 3];
};

__device__ inline int verdict_words(int parts) { return 2 * parts + 3; }

/// Warp 0 of a block: waits until each lane's word (lanes < n; `load`
/// reads lane k's) carries `epoch`, or until `deadline` (0: none) passes.
/// Returns the lane's word; *late says whether the deadline passed.
template <class Load>
__device__ inline ll_word ll_wait(int n, int epoch, long long deadline, bool* late, Load&& load) {
  const int lane = threadIdx.x & 31;
  ll_word w = 0;
  *late = false;
  while (true) {
    if (lane < n) w = load(lane);
    if (__all_sync(0xffffffffu, lane >= n || ll_has(w, epoch))) return w;
    if (deadline && __shfl_sync(0xffffffffu, global_ns(), 0) > deadline) {
      *late = true;
      return w;
    }
  }
}

/// Block 0's part of exchange `step` (warp 0, after every block arrived):
/// posts this part's outcome to every part, waits for every part's post (or
/// the timeout) and writes the verdict.  Returns the lane's verdict word.
template <class T>
__device__ ll_word post_and_gather(const multi_state<T>& m, int step, int it, verdict_box* vb) {
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31, slot = step % 3, epoch = step + 1;
  const control* ctl = m.s.ctl;
  const bool prologue = step == 0;
  // The step's writes of every block (the arrivals were seen) before the
  // post, at the peers' scope.
  m.fence();
  if (lane < m.parts) {
    const key_t key =
        prologue ? atomic_read(&ctl->max_abs_key) : atomic_read(&ctl->theta_key[slot]);
    const int count = prologue ? 0 : atomic_read(&ctl->fcount[slot]);
    const int revs = prologue ? 0 : atomic_read(&ctl->revs[it & 1]);
    const unsigned value[4] = {static_cast<unsigned>(count), static_cast<unsigned>(revs),
                               static_cast<unsigned>(key >> 32), static_cast<unsigned>(key)};
    mailbox* box = &m.peer[lane].mail[slot * m.parts + m.part];
    for (int k = 0; k < 4; ++k)
      system_ref<ll_word>(box->word[k])
          .store(ll_pack(epoch, value[k]), ::cuda::memory_order_relaxed);
  }
  // Lane 4q + k waits for word k of part q's post.
  mailbox* boxes = &m.peer[m.part].mail[slot * m.parts];
  bool late = false;
  const ll_word w = ll_wait(4 * m.parts, epoch, global_ns() + m.timeout_ns, &late, [&](int k) {
    return system_ref<ll_word>(boxes[k / 4].word[k % 4]).load(::cuda::memory_order_relaxed);
  });
  m.fence();  // the posts seen before what the peers wrote ahead of them
  // Lane q (< parts) gathers part q's words.
  const unsigned x = ll_value(w);
  const unsigned count = __shfl_sync(all, x, (4 * lane + mail_count) & 31);
  const unsigned revs = __shfl_sync(all, x, (4 * lane + mail_revs) & 31);
  const unsigned high = __shfl_sync(all, x, (4 * lane + mail_key_high) & 31);
  const unsigned low = __shfl_sync(all, x, (4 * lane + mail_key_low) & 31);
  key_t key = lane < m.parts ? (static_cast<key_t>(high) << 32) | low : prologue ? 0 : ~0ull;
  for (int off = 16; off > 0; off >>= 1) {  // theta: the least; max |c|: the largest
    const key_t other = __shfl_xor_sync(all, key, off);
    key = prologue ? (other > key ? other : key) : (other < key ? other : key);
  }
  const unsigned revs_of = __shfl_sync(all, revs, (lane - m.parts) & 31);
  const bool timed_out = __any_sync(all, late);
  unsigned value;
  if (lane < m.parts)
    value = count;
  else if (lane < 2 * m.parts)
    value = revs_of;
  else if (lane == 2 * m.parts)
    value = timed_out ? multi_gpu_error::timeout : 0;
  else if (lane == 2 * m.parts + 1)
    value = static_cast<unsigned>(key >> 32);
  else
    value = static_cast<unsigned>(key);
  const ll_word out = ll_pack(epoch, value);
  if (lane < verdict_words(m.parts)) atomic_write(&vb->word[lane], out);
  return out;
}

/// The verdict's words (lane k holds word k) into the block's totals.
__device__ inline void read_verdict(ll_word w, int parts, bool prologue, exchange_totals* t) {
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const unsigned v = ll_value(w);
  unsigned start = lane < parts ? v : 0;  // inclusive scan of the counts
  for (int off = 1; off < 32; off <<= 1) {
    const unsigned y = __shfl_up_sync(all, start, off);
    if (lane >= off) start += y;
  }
  start = __shfl_sync(all, start, lane < parts ? lane : parts - 1);
  const unsigned revs_word = __shfl_down_sync(all, v, parts);  // every lane: a warp-wide shuffle
  const unsigned revs = lane < parts ? revs_word : 0;
  unsigned rev_total = revs;
  for (int off = 16; off > 0; off >>= 1) rev_total += __shfl_xor_sync(all, rev_total, off);
  const unsigned error = __shfl_sync(all, v, 2 * parts);
  const key_t key = (static_cast<key_t>(__shfl_sync(all, v, 2 * parts + 1)) << 32) |
                    __shfl_sync(all, v, 2 * parts + 2);
  if (lane < max_parts) {
    t->start[lane + 1] = static_cast<int>(start);
    t->revs[lane] = static_cast<int>(revs);
  }
  if (lane == 0) {
    t->start[0] = 0;
    t->rev_total = static_cast<int>(rev_total);
    t->error = static_cast<int>(error);
    t->theta = prologue ? ~0ull : key;
    t->max_abs = prologue ? key : 0;
  }
}

/// Exchange `step` (of iteration `it`; step 0: the prologue's largest |c|),
/// which is also the grid's barrier: called by every thread of every block
/// once the block's writes of the step are done (writes to peers' arenas
/// each fenced by its writer, multi_state::fence).  Each block arrives;
/// block 0 waits for every arrival, posts this part's outcome to every part,
/// waits for their posts (or a timeout) and writes the verdict, which every
/// other block waits for: one hand-off less than a grid.sync() followed by
/// a post.  Returns the block's shared copy (valid until the next exchange),
/// the same on every part.
template <class T>
__device__ const exchange_totals& exchange(const multi_state<T>& m, int step, int it,
                                           verdict_box* vb) {
  const int epoch = step + 1;
  __shared__ exchange_totals shared;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // the block's writes (ordered by the barrier above) before its arrival
    atomicAdd(&vb->arrived, 1ull);
  }
  if (threadIdx.x < 32) {
    ll_word w;
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0)
        while (atomic_read(&vb->arrived) < static_cast<unsigned long long>(gridDim.x) * epoch) {
        }
      __syncwarp();
      w = post_and_gather(m, step, it, vb);
    } else {
      bool late;
      w = ll_wait(verdict_words(m.parts), epoch, 0, &late,
                  [&](int k) { return atomic_read(&vb->word[k]); });
      __threadfence();  // the verdict seen before what every block wrote ahead of it
    }
    read_verdict(w, m.parts, step == 0, &shared);
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
  auto post = [&](int step, int it) { return &exchange(m, step, it, vb); };
  // A step's columns joined by multi_join, each writer fencing its entries once.
  auto joining = [&](int it, int slot, auto&& step_body) {
    bool joined = false;
    step_body([&](int j) {
      multi_join(m, j, it, slot);
      joined = true;
    });
    if (joined) m.fence();
  };
  share_row_minima(m, tid, nthreads);
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
    const int first_step = step;
    while (!found && !error) {
      if (stalled(step - first_step, m.n_cols_total)) {
        error = multi_gpu_error::no_progress;
        if (tid == 0) record_stall(ctl, step - first_step, t->theta, nf);
        break;
      }
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

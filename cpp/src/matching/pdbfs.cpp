// P-DBFS: parallel disjoint breadth-first searches for augmenting paths.
//
// The multicore baseline of paper 000 (section IV, after Azad, Halappanavar,
// Rajamanickam, Boman, Khan and Pothen, IPDPS 2012).  Each phase runs one
// BFS from every unmatched column, in parallel.  A search claims each row it
// reaches with an atomic compare-and-swap on the row's phase stamp, so the
// searches of one phase are vertex disjoint; a search that reaches an
// unmatched row stops and augments along its BFS tree.  Disjointness makes
// the augmentations of one phase independent (no two touch the same row or
// column), so they need no locks.
//
// Termination: a phase that augments nothing proves the matching maximum.
// Every search ran to exhaustion, skipping only rows claimed by another
// search, which that search then explored; so the union of claimed rows is
// closed under alternating reachability from the unmatched columns and holds
// no unmatched row: no augmenting path exists (Berge).
#include <atomic>
#include <memory>
#include <vector>

#include "matching_cpu.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace matchflow::detail {
namespace {

struct search_scratch {
  std::vector<vertex_t> queue;  // rows of this search's BFS, in order
};

/// One BFS from unmatched column `root`; returns true if it augmented.
/// `claim[r]` holds the phase that last claimed row r; `parent[r]` the
/// column from which r was reached (valid for rows claimed this phase).
bool search_and_augment(const bipartite_view& g, vertex_t root, std::int32_t phase,
                        std::atomic<std::int32_t>* claim, vertex_t* parent,
                        vertex_t* col4row, vertex_t* row4col, search_scratch& s) {
  s.queue.clear();
  vertex_t c = root;
  std::size_t head = 0;
  while (true) {
    for (offset_t e = g.cols.ptr[c]; e < g.cols.ptr[c + 1]; ++e) {
      const vertex_t r = g.cols.adj[e];
      std::int32_t seen = claim[r].load(std::memory_order_relaxed);
      if (seen == phase ||
          !claim[r].compare_exchange_strong(seen, phase, std::memory_order_relaxed)) {
        continue;  // another search (or this one) has it
      }
      parent[r] = c;
      if (col4row[r] == -1) {  // augment: flip the path root ... c - r
        vertex_t row = r;
        while (row != -1) {
          const vertex_t col = parent[row];
          const vertex_t next = row4col[col];
          row4col[col] = row;
          col4row[row] = col;
          row = col == root ? -1 : next;
        }
        return true;
      }
      s.queue.push_back(r);
    }
    if (head == s.queue.size()) return false;
    c = col4row[s.queue[head++]];
  }
}

}  // namespace

void pdbfs(const bipartite_view& g, int threads, vertex_t* col4row, vertex_t* row4col,
           matching_stats* stats) {
  const vertex_t m = g.n_rows(), n = g.n_cols();
  std::unique_ptr<std::atomic<std::int32_t>[]> claim(new std::atomic<std::int32_t>[m]);
  for (vertex_t r = 0; r < m; ++r) claim[r].store(-1, std::memory_order_relaxed);
  std::vector<vertex_t> parent(m, -1);
  std::vector<vertex_t> unmatched;
  for (vertex_t c = 0; c < n; ++c) {
    if (row4col[c] == -1) unmatched.push_back(c);
  }
#ifdef _OPENMP
  const int team = threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
#endif

  for (std::int32_t phase = 0; !unmatched.empty(); ++phase) {
    std::int64_t augmented = 0;
    const std::int64_t count = static_cast<std::int64_t>(unmatched.size());
#pragma omp parallel num_threads(team) reduction(+ : augmented)
    {
      search_scratch scratch;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = 0; i < count; ++i) {
        if (search_and_augment(g, unmatched[i], phase, claim.get(), parent.data(), col4row,
                               row4col, scratch)) {
          ++augmented;
        }
      }
    }
    ++stats->iterations;
    stats->augmentations += augmented;
    if (augmented == 0) break;
    std::vector<vertex_t> still;
    for (vertex_t c : unmatched) {
      if (row4col[c] == -1) still.push_back(c);
    }
    unmatched.swap(still);
  }
}

}  // namespace matchflow::detail

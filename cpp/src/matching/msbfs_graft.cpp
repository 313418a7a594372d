// MS-BFS-Graft: multi-source BFS with tree grafting.
//
// Azad, Buluc, Pothen, "Computing maximum cardinality matchings in parallel
// on bipartite graphs via tree-grafting", IEEE TPDS 28(1), 2017.  Not one of
// the papers in ../shared/papers; added as the stronger multicore method
// next to P-DBFS (pdbfs.cpp).  Written from the paper's description.
//
// Terms.  Columns are the search side.  A *tree* is rooted at an unmatched
// column t; its rows r have row_root[r] == t and parent[r] = the column r was
// reached from; a matched column x belongs to the tree of its mate row.  A
// tree is *alive* while its root is unmatched (row4col[t] == -1); a row is
// *visited* iff it belongs to an alive tree, so when a tree augments (its
// root becomes matched) all its rows become unvisited at once, with no reset.
// An alive tree with leaf[t] != -1 has found an augmenting path and stops
// growing; after augmentation it is *renewable* (its rows are free to take).
//
// One phase:
//   1. BFS (level synchronous, all trees at once, top-down): every frontier
//      column of a growing tree claims its unvisited neighbour rows with a
//      CAS on row_root; an unmatched row ends the tree's search (leaf), a
//      matched row sends its mate column to the next frontier.
//   2. Augment along every tree with a leaf, in parallel (trees are vertex
//      disjoint).  None: the matching is maximum (see below); stop.
//   3. Graft or rebuild.  The trees that did not augment are exhausted: all
//      neighbours of their columns are visited.  If they hold many rows
//      (active > renewable / alpha), keep them and graft: every row of a tree
//      that augmented in step 2 and that neighbours a column of an alive tree
//      joins that tree (its mate column goes to the next frontier).  Else
//      rebuild: forget every tree and restart the BFS from all unmatched
//      columns.
//
// Termination.  Invariant at the start of step 1: every column of an alive
// tree not in the frontier has all its neighbour rows visited.  A step 1
// that finds no leaf therefore leaves the visited rows closed under
// alternating reachability from the unmatched columns, with no unmatched row
// among them: no augmenting path exists (Berge).  Step 3 restores the
// invariant (graft checks every row that became unvisited).
//
// Deviations.  Top-down BFS only (the paper also switches to bottom-up steps
// for large frontiers); the renewable rows are found by a scan over all rows
// rather than from the trees.  alpha = 5 as in the paper's experiments.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "matching_cpu.hpp"
#include "openmp.hpp"

namespace matchflow::detail {
namespace {

constexpr std::int64_t alpha = 5;
// Frontiers smaller than this are expanded by one thread (no fork/join).
constexpr std::int64_t parallel_min = 256;
constexpr std::size_t flush_size = 512;  // thread-local frontier buffer

struct forest {
  const bipartite_view& g;
  vertex_t* col4row;
  vertex_t* row4col;
  std::unique_ptr<std::atomic<vertex_t>[]> row_root;  // sync: CAS in step 1
  std::unique_ptr<std::atomic<vertex_t>[]> leaf;      // sync: CAS, per root column
  std::vector<vertex_t> parent;                       // safe: written by the claimer
  std::vector<std::int32_t> died;                     // phase in which a root augmented
  std::vector<vertex_t> frontier, next;               // both length n, always
  std::int64_t frontier_size = 0;
  std::atomic<std::int64_t> next_size{0};
  std::vector<vertex_t> unmatched;  // unmatched columns (roots)
};

bool alive(const forest& f, vertex_t root) { return root != -1 && f.row4col[root] == -1; }

/// Tree of column x (its own if unmatched, else its mate row's), or -1.
vertex_t tree_of(const forest& f, vertex_t x) {
  const vertex_t mate = f.row4col[x];
  if (mate == -1) return x;
  const vertex_t t = f.row_root[mate].load(std::memory_order_relaxed);
  return alive(f, t) ? t : -1;
}

struct local_buffer {
  std::vector<vertex_t> items;
  void push(forest& f, vertex_t c) {
    items.push_back(c);
    if (items.size() >= flush_size) flush(f);
  }
  void flush(forest& f) {
    if (items.empty()) return;
    const std::int64_t at = f.next_size.fetch_add(std::int64_t(items.size()));
    std::copy(items.begin(), items.end(), f.next.begin() + at);
    items.clear();
  }
};

/// Row r (just claimed for tree t, from column x): leaf or mate to frontier.
void attach(forest& f, vertex_t r, vertex_t x, vertex_t t, local_buffer& out) {
  f.parent[r] = x;
  const vertex_t mate = f.col4row[r];
  if (mate == -1) {
    vertex_t none = -1;
    f.leaf[t].compare_exchange_strong(none, r, std::memory_order_relaxed);
  } else {
    out.push(f, mate);
  }
}

/// Step 1 for one frontier column.
void expand(forest& f, vertex_t x, local_buffer& out) {
  const vertex_t t = tree_of(f, x);
  const auto& cols = f.g.cols;
  for (offset_t e = cols.ptr[x]; e < cols.ptr[x + 1]; ++e) {
    if (f.leaf[t].load(std::memory_order_relaxed) != -1) return;  // tree done
    const vertex_t r = cols.adj[e];
    vertex_t seen = f.row_root[r].load(std::memory_order_relaxed);
    if (alive(f, seen)) continue;
    if (!f.row_root[r].compare_exchange_strong(seen, t, std::memory_order_relaxed)) continue;
    attach(f, r, x, t, out);
  }
}

/// Step 1: level-synchronous BFS until the frontier empties.
void bfs(forest& f, int team, matching_stats* stats) {
  std::int64_t size = f.frontier_size;
  while (size > 0) {
    f.next_size.store(0);
#pragma omp parallel num_threads(team) if (size >= parallel_min)
    {
      local_buffer out;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = 0; i < size; ++i) expand(f, f.frontier[i], out);
      out.flush(f);
    }
    ++stats->bfs_levels;
    size = f.next_size.load();
    std::swap(f.frontier, f.next);
  }
  f.frontier_size = 0;
}

/// Step 2: augment along every tree with a leaf; returns how many.
std::int64_t augment(forest& f, std::int32_t phase, int team) {
  const std::int64_t count = std::int64_t(f.unmatched.size());
  std::int64_t done = 0;
#pragma omp parallel for num_threads(team) schedule(dynamic, 64) \
    reduction(+ : done) if (count >= parallel_min)
  for (std::int64_t i = 0; i < count; ++i) {
    const vertex_t t = f.unmatched[i];
    vertex_t r = f.leaf[t].load(std::memory_order_relaxed);
    if (r == -1) continue;
    while (true) {  // flip root t ... parent[r] - r
      const vertex_t x = f.parent[r];
      const vertex_t next = f.row4col[x];
      f.row4col[x] = r;
      f.col4row[r] = x;
      if (x == t) break;
      r = next;
    }
    f.leaf[t].store(-1, std::memory_order_relaxed);
    f.died[t] = phase;
    ++done;
  }
  f.unmatched.erase(std::remove_if(f.unmatched.begin(), f.unmatched.end(),
                                   [&](vertex_t c) { return f.row4col[c] != -1; }),
                    f.unmatched.end());
  return done;
}

/// Step 3: graft the rows of the trees that augmented in `phase` onto alive
/// trees, or rebuild the forest; fills the frontier.
void graft_or_rebuild(forest& f, std::int32_t phase, int team) {
  const vertex_t m = f.g.n_rows();
  std::int64_t active = 0;
  std::vector<vertex_t> renewable;
#pragma omp parallel num_threads(team) reduction(+ : active)
  {
    std::vector<vertex_t> mine;
#pragma omp for schedule(static) nowait
    for (vertex_t r = 0; r < m; ++r) {
      const vertex_t t = f.row_root[r].load(std::memory_order_relaxed);
      if (t == -1) continue;
      if (f.row4col[t] == -1) {
        ++active;
      } else if (f.died[t] == phase) {
        mine.push_back(r);
      }
    }
#pragma omp critical
    renewable.insert(renewable.end(), mine.begin(), mine.end());
  }
  f.next_size.store(0);
  if (active > std::int64_t(renewable.size()) / alpha) {
    const std::int64_t count = std::int64_t(renewable.size());
#pragma omp parallel num_threads(team) if (count >= parallel_min)
    {
      local_buffer out;
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t i = 0; i < count; ++i) {
        const vertex_t r = renewable[i];
        const auto& rows = f.g.rows;
        for (offset_t e = rows.ptr[r]; e < rows.ptr[r + 1]; ++e) {
          const vertex_t x = rows.adj[e];
          const vertex_t t = tree_of(f, x);
          if (t == -1) continue;
          f.row_root[r].store(t, std::memory_order_relaxed);
          attach(f, r, x, t, out);
          break;
        }
      }
      out.flush(f);
    }
    std::swap(f.frontier, f.next);
    f.frontier_size = f.next_size.load();
  } else {
#pragma omp parallel for num_threads(team) schedule(static)
    for (vertex_t r = 0; r < m; ++r) f.row_root[r].store(-1, std::memory_order_relaxed);
    std::copy(f.unmatched.begin(), f.unmatched.end(), f.frontier.begin());
    f.frontier_size = std::int64_t(f.unmatched.size());
  }
}

}  // namespace

void msbfs_graft(const bipartite_view& g, int threads, vertex_t* col4row, vertex_t* row4col,
                 matching_stats* stats) {
  const vertex_t m = g.n_rows(), n = g.n_cols();
  const int team = team_size(threads);
  forest f{g,
           col4row,
           row4col,
           std::make_unique<std::atomic<vertex_t>[]>(std::size_t(m)),
           std::make_unique<std::atomic<vertex_t>[]>(std::size_t(n)),
           std::vector<vertex_t>(std::size_t(m), -1),
           std::vector<std::int32_t>(std::size_t(n), -1),
           std::vector<vertex_t>(std::size_t(n)),
           std::vector<vertex_t>(std::size_t(n)),
           0,
           {},
           {}};
#pragma omp parallel for num_threads(team) schedule(static)
  for (vertex_t r = 0; r < m; ++r) f.row_root[r].store(-1, std::memory_order_relaxed);
  for (vertex_t c = 0; c < n; ++c) {
    f.leaf[c].store(-1, std::memory_order_relaxed);
    if (row4col[c] == -1) f.unmatched.push_back(c);
  }
  std::copy(f.unmatched.begin(), f.unmatched.end(), f.frontier.begin());
  f.frontier_size = std::int64_t(f.unmatched.size());
  for (std::int32_t phase = 0; !f.unmatched.empty(); ++phase) {
    bfs(f, team, stats);
    const std::int64_t augmented = augment(f, phase, team);
    ++stats->iterations;
    stats->augmentations += augmented;
    if (augmented == 0) break;
    graft_or_rebuild(f, phase, team);
  }
}

}  // namespace matchflow::detail

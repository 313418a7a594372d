// P-DBFS: parallel disjoint breadth-first searches for augmenting paths.
//
// The multicore baseline of paper 000 (section IV, after Azad, Halappanavar,
// Rajamanickam, Boman, Khan and Pothen, IPDPS 2012).  Each phase runs one
// BFS from every unmatched column, in parallel.  A search claims each row it
// reaches with an atomic compare-and-swap on the row's claim word, so the
// searches of one phase are vertex disjoint; a search that reaches an
// unmatched row stops and augments along its BFS tree.  Disjointness makes
// the augmentations of one phase independent (no two touch the same row or
// column), so they need no locks.
//
// Search side.  The code below says "columns" for the side searched from
// and reads only that side's adjacency (g.cols) and the mate arrays.  The
// algorithm is symmetric in the two sides, so dispatch.cpp usually runs it
// with roles swapped: g.cols = the caller's CSR rows, col4row/row4col
// exchanged; the searches then start from unmatched rows and no transpose
// is built (the paper searches from the side whose adjacency is stored).
//
// Additions to the plain scheme (none changes what a phase is):
// - Lookahead (as in Duff, Kaya and Ucar's DFS-based algorithms, ACM TOMS
//   2011): before a column's rows are queued, its rows are scanned for an
//   unmatched one from a per-column pointer look[c].  Rows behind the
//   pointer are matched (or were claimed free by another search, which
//   matched them), and matched rows stay matched, so the pointer only moves
//   forward and each column's lookahead costs O(degree) over the whole run.
// - Dead rows.  A failed search has explored its root's alternating-
//   reachable set except for rows held by other searches.  If none of the
//   searches it ran into (directly or through other failed searches)
//   augmented, the union of those failed searches' rows is closed under
//   alternating reachability and holds no unmatched row; no later
//   augmenting path can enter such a set and augmentations elsewhere do not
//   change it, so its rows are marked dead for good (never claimed again)
//   and its roots are dropped from the search list (dead_marker).  In
//   deficient graphs the unmatchable columns would otherwise search again
//   in every phase.
// - Scratch is per thread and kept across phases; a phase only walks the
//   list of columns still worth searching.
//
// Claim word: (phase << 32) | root of the search that holds the row in that
// phase, or `dead`.  It tells a search whose row it ran into, which the
// dead-row test needs.
//
// Termination: a phase that augments nothing proves the matching maximum.
// Every search ran to exhaustion, skipping only rows claimed by another
// search, which that search then explored, or dead rows; so the union of
// claimed and dead rows is closed under alternating reachability from the
// unmatched columns and holds no unmatched row: no augmenting path exists
// (Berge).
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "matching_cpu.hpp"
#include "openmp.hpp"

namespace matchflow::detail {
namespace {

using claim_t = std::int64_t;
constexpr claim_t dead = std::numeric_limits<claim_t>::max();

claim_t claim_key(std::int32_t phase, vertex_t root) {
  return (claim_t(phase) << 32) | claim_t(std::uint32_t(root));
}

// col4row[r] of a row another search may be matching right now (lookahead):
// read and written with relaxed atomics.
vertex_t load_relaxed(const vertex_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
void store_relaxed(vertex_t* p, vertex_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

struct shared_state {
  const bipartite_view& g;
  vertex_t* col4row;                              // sync: relaxed atomics (lookahead)
  vertex_t* row4col;                              // safe: columns of one search only
  std::unique_ptr<std::atomic<claim_t>[]> claim;  // sync: CAS
  std::vector<vertex_t> parent;                   // safe: written by the claimer
  std::vector<offset_t> look;                     // safe: a column is expanded once a phase
};

enum class outcome { augmented, failed };

/// One thread's record of the phase's failed searches: their rows (in BFS
/// order; also the BFS queue while a search runs) and the roots of the
/// searches whose rows they ran into.
struct failed_search {
  vertex_t root;
  std::size_t rows_begin, rows_end, hits_begin, hits_end;
};
struct thread_log {
  std::vector<vertex_t> rows, hits;
  std::vector<failed_search> failed;
  void clear() {
    rows.clear();
    hits.clear();
    failed.clear();
  }
};

struct search {
  shared_state& s;
  vertex_t root;
  claim_t own;
  thread_log& log;
  std::size_t rows_base = log.rows.size(), hits_base = log.hits.size();

  /// Tries to take row r for this search; false if it is taken or dead.
  bool take(vertex_t r) {
    claim_t seen = s.claim[r].load(std::memory_order_relaxed);
    if (seen == dead || seen == own) return false;
    if ((seen >> 32) == (own >> 32) ||
        !s.claim[r].compare_exchange_strong(seen, own, std::memory_order_relaxed)) {
      // Held by another search of this phase: remember whose.
      const auto other = vertex_t(std::uint32_t(seen));
      if (log.hits.size() == hits_base || log.hits.back() != other) log.hits.push_back(other);
      return false;
    }
    return true;
  }

  /// Flips the path root ... c - r (r unmatched, just claimed from c).
  void augment(vertex_t c, vertex_t r) {
    s.parent[r] = c;
    vertex_t row = r;
    while (true) {
      const vertex_t col = s.parent[row];
      const vertex_t next = s.row4col[col];
      s.row4col[col] = row;
      store_relaxed(&s.col4row[row], col);
      if (col == root) break;
      row = next;
    }
    log.rows.resize(rows_base);
    log.hits.resize(hits_base);
  }

  /// Lookahead: an unmatched row of c that this search can take, or -1.
  vertex_t lookahead(vertex_t c) {
    const auto& cols = s.g.cols;
    for (offset_t& e = s.look[c]; e < cols.ptr[c + 1]; ++e) {
      const vertex_t r = cols.adj[e];
      if (load_relaxed(&s.col4row[r]) != -1) continue;
      if (take(r)) {
        ++e;
        return r;
      }
    }
    return -1;
  }

  outcome run() {
    const auto& cols = s.g.cols;
    vertex_t c = root;
    std::size_t head = rows_base;
    while (true) {
      if (const vertex_t r = lookahead(c); r != -1) {
        augment(c, r);
        return outcome::augmented;
      }
      for (offset_t e = cols.ptr[c]; e < cols.ptr[c + 1]; ++e) {
        const vertex_t r = cols.adj[e];
        if (!take(r)) continue;
        s.parent[r] = c;
        if (s.col4row[r] == -1) {  // cannot happen after lookahead; kept for safety
          augment(c, r);
          return outcome::augmented;
        }
        log.rows.push_back(r);
      }
      if (head == log.rows.size()) break;
      c = s.col4row[log.rows[head++]];
    }
    log.failed.push_back({root, rows_base, log.rows.size(), hits_base, log.hits.size()});
    return outcome::failed;
  }
};

/// After a phase: which failed searches are dead.  A failed search is *live*
/// if it ran into a row of a search that augmented, or of a live search
/// (its region may now hold an augmenting path); the others, together with
/// the rows already dead, form a set closed under alternating reachability
/// with no unmatched row, which stays so for good.  Marks their rows dead
/// and their roots dropped.
class dead_marker {
 public:
  explicit dead_marker(vertex_t n) : record_of_(std::size_t(n), -1) {}

  void run(shared_state& s, std::vector<thread_log>& logs, std::vector<std::uint8_t>& dropped,
           int team) {
    records_.clear();
    for (auto& log : logs) {
      for (const auto& f : log.failed) {
        record_of_[std::size_t(f.root)] = std::int64_t(records_.size());
        records_.push_back({&log, &f});
      }
    }
    const std::size_t count = records_.size();
    live_.assign(count, 0);
    // Reverse edges (b -> a when a ran into b), as CSR over records.
    first_.assign(count + 1, 0);
    std::vector<std::size_t> seeds;
    for_each_hit([&](std::size_t a, std::int64_t b) {
      if (b < 0) {
        if (!live_[a]) seeds.push_back(a);
        live_[a] = 1;
      } else {
        ++first_[std::size_t(b) + 1];
      }
    });
    for (std::size_t i = 0; i < count; ++i) first_[i + 1] += first_[i];
    edges_.resize(first_[count]);
    std::vector<std::size_t> fill(first_.begin(), first_.end() - 1);
    for_each_hit([&](std::size_t a, std::int64_t b) {
      if (b >= 0) edges_[fill[std::size_t(b)]++] = a;
    });
    while (!seeds.empty()) {  // live spreads backwards along the hits
      const std::size_t b = seeds.back();
      seeds.pop_back();
      for (std::size_t i = first_[b]; i < first_[b + 1]; ++i) {
        if (!live_[edges_[i]]) {
          live_[edges_[i]] = 1;
          seeds.push_back(edges_[i]);
        }
      }
    }
#pragma omp parallel for num_threads(team) schedule(dynamic, 16) if (count > 64)
    for (std::int64_t i = 0; i < std::int64_t(count); ++i) {
      if (live_[std::size_t(i)]) continue;
      const auto& [log, f] = records_[std::size_t(i)];
      for (std::size_t k = f->rows_begin; k < f->rows_end; ++k) {
        s.claim[log->rows[k]].store(dead, std::memory_order_relaxed);
      }
      dropped[std::size_t(f->root)] = 1;
    }
    for (const auto& r : records_) record_of_[std::size_t(r.second->root)] = -1;
  }

 private:
  /// Calls fn(a, b) for each hit of record a: b = record index of the
  /// search it ran into, or -1 if that search augmented.
  template <typename Fn>
  void for_each_hit(Fn fn) {
    for (std::size_t a = 0; a < records_.size(); ++a) {
      const auto& [log, f] = records_[a];
      for (std::size_t k = f->hits_begin; k < f->hits_end; ++k) {
        fn(a, record_of_[std::size_t(log->hits[k])]);
      }
    }
  }

  std::vector<std::int64_t> record_of_;  // root -> record index this phase, or -1
  std::vector<std::pair<const thread_log*, const failed_search*>> records_;
  std::vector<std::uint8_t> live_;
  std::vector<std::size_t> first_, edges_;
};

}  // namespace

void pdbfs(const bipartite_view& g, int threads, vertex_t* col4row, vertex_t* row4col,
           matching_stats* stats) {
  const vertex_t m = g.n_rows(), n = g.n_cols();
  const int team = team_size(threads);
  shared_state s{g,
                 col4row,
                 row4col,
                 std::make_unique<std::atomic<claim_t>[]>(std::size_t(m)),
                 std::vector<vertex_t>(std::size_t(m), -1),
                 std::vector<offset_t>(g.cols.ptr, g.cols.ptr + n)};
  for (vertex_t r = 0; r < m; ++r) s.claim[r].store(-1, std::memory_order_relaxed);
  std::vector<vertex_t> roots;  // unmatched columns still worth searching
  for (vertex_t c = 0; c < n; ++c) {
    if (row4col[c] == -1) roots.push_back(c);
  }
  std::vector<std::uint8_t> dropped(std::size_t(n), 0);
  std::vector<thread_log> logs(static_cast<std::size_t>(team));
  dead_marker marker(n);

  for (std::int32_t phase = 0; !roots.empty(); ++phase) {
    std::int64_t augmented = 0;
    const std::int64_t count = std::int64_t(roots.size());
#pragma omp parallel num_threads(team) reduction(+ : augmented) if (count > 1)
    {
#ifdef _OPENMP
      auto& log = logs[std::size_t(omp_get_thread_num())];
#else
      auto& log = logs[0];
#endif
      log.clear();
#pragma omp for schedule(dynamic, 16)
      for (std::int64_t i = 0; i < count; ++i) {
        const vertex_t root = roots[std::size_t(i)];
        search sr{s, root, claim_key(phase, root), log};
        if (sr.run() == outcome::augmented) ++augmented;
      }
    }
    ++stats->iterations;
    stats->augmentations += augmented;
    if (augmented == 0) break;
    marker.run(s, logs, dropped, team);
    std::size_t kept = 0;
    for (vertex_t c : roots) {
      if (row4col[c] == -1 && !dropped[std::size_t(c)]) roots[kept++] = c;
    }
    roots.resize(kept);
  }
}

}  // namespace matchflow::detail

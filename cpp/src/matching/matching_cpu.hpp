// CPU matching algorithms (internal to cpp/).  Each takes the mate arrays
// holding a valid (possibly empty) matching and leaves a maximum one there.
#pragma once

#include "matchflow/matching.hpp"

namespace matchflow::detail {

/// Greedy or Karp-Sipser initial matching on empty mate arrays (all -1).
/// Returns its cardinality.  threads != 1 runs the greedy one in parallel
/// (0 = all threads).  Karp-Sipser is sequential when g has its column
/// orientation, else it runs over the rows alone, on `threads`.  (cheap.cpp)
vertex_t initial_matching(const bipartite_view& g, matching_init init, vertex_t* col4row,
                          vertex_t* row4col, int threads = 1);

/// Sequential push-relabel, FIFO active columns, global relabel every
/// k * (m + n) pushes (paper 000, section II-B/C).  (push_relabel.cpp)
void push_relabel(const bipartite_view& g, double relabel_k, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats);

/// P-DBFS: OpenMP parallel vertex-disjoint BFS augmentations (pdbfs.cpp).
void pdbfs(const bipartite_view& g, int threads, vertex_t* col4row, vertex_t* row4col,
           matching_stats* stats);

/// MS-BFS-Graft: OpenMP multi-source BFS with tree grafting (msbfs_graft.cpp).
void msbfs_graft(const bipartite_view& g, int threads, vertex_t* col4row, vertex_t* row4col,
                 matching_stats* stats);

}  // namespace matchflow::detail

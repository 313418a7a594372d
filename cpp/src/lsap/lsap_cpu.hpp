// CPU linear sum assignment (internal to cpp/).
#pragma once

#include <cstdint>
#include <functional>

#include "matchflow/lsap.hpp"

namespace matchflow::detail {

/// "omp-tree": Date & Nagi's alternating-tree Hungarian algorithm with
/// OpenMP (paper 001), same contract as matchflow::solve_lsap_dense.
/// Fills stats->seconds_init / seconds_solve, iterations, augmenting_paths,
/// dual_updates.  (hungarian_omp.cpp)
template <class T>
status hungarian_omp(const T* cost, std::int64_t n_rows, std::int64_t n_cols, int threads,
                     std::int64_t* col4row, T* u, T* v, lsap_stats* stats);

/// Column duals for the start of "sparse-sap" on square problems: fills
/// v (n_cols entries); false when the auction stopped early and v is not to
/// be used.  sparse_shortest_path runs sparse_auction below when none is
/// given; the GPU's (cuda::gpu_sparse_auction) is given by lsap/dispatch.cpp.
using auction_start_fn = std::function<bool(double* v)>;

/// "sparse-sap": shortest augmenting paths over sparse rows (binary-heap
/// Dijkstra), same contract as matchflow::solve_lsap_sparse, n_rows <= n_cols.
/// (sparse_shortest_path.cpp)
template <class T>
status sparse_shortest_path(const std::int64_t* row_ptr, const std::int32_t* col_idx,
                            const T* weight, std::int64_t n_rows, std::int64_t n_cols, int threads,
                            std::int64_t* col4row, T* u, T* v, sparse_lsap_stats* stats,
                            const auction_start_fn& auction = {});

/// The start of "sparse-sap" on square problems (n x n): column duals v from
/// the auction algorithm with epsilon-scaling, on `threads` OpenMP threads
/// (0: the default), the same for every count; false when it stopped early
/// (its bid budget, an empty row), v then being whatever it reached.
/// Counts stats->auction_phases and auction_bids.  (sparse_auction.cpp)
template <class T>
bool sparse_auction(const std::int64_t* row_ptr, const std::int32_t* col_idx, const T* weight,
                    std::int64_t n, int threads, double* v, sparse_lsap_stats* stats);

}  // namespace matchflow::detail

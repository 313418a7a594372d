// Maximum cardinality bipartite matching: the C++ entry point.
#pragma once

#include <cstdint>

#include "matchflow/graph.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

/// Algorithms, named as their papers name them.
enum class matching_method : int {
  pr = 0,           ///< sequential push-relabel (paper 000, section II)
  pdbfs = 1,        ///< OpenMP parallel disjoint BFS (paper 000's CPU baseline)
  gpu_pr = 2,       ///< G-PR (paper 000, section III)
  gpu_apfb = 3,     ///< APFB, GPU Hopcroft-Karp-Duff-Wiberg (paper 004)
  gpu_apsb = 4,     ///< APsB, GPU Hopcroft-Karp (paper 004)
  msbfs_graft = 5,  ///< OpenMP MS-BFS-Graft (Azad, Buluc, Pothen, TPDS 2017)
};

/// Initial matching every algorithm starts from.
enum class matching_init : int {
  none = 0,
  cheap = 1,        ///< greedy: first free neighbour
  karp_sipser = 2,  ///< Karp-Sipser: degree-one columns first
};

/// Tuning knobs; defaults are the papers' best.
struct matching_options {
  int threads = 0;  ///< OpenMP threads; 0 = omp_get_max_threads()
  matching_init init = matching_init::cheap;
  double relabel_k = -1.0;       ///< global-relabel frequency k; < 0 = method default
  int bfs_kernel = 1;            ///< APFB/APsB: 0 = GPUBFS, 1 = GPUBFS-WR
  int thread_layout = 0;         ///< APFB/APsB: 0 = CT (fixed grid), 1 = MT (thread per vertex)
  int device = 0;                ///< CUDA device ordinal
  bool paper_structure = false;  ///< G-PR: paper 000's kernel structure instead of the tuned one
  bool skewed_degrees = false;   ///< GPU methods, where the host found the degrees skewed:
                                 ///< the cheap start ranks rows by (degree, id), not id, and
                                 ///< APFB with GPUBFS-WR grafts (keeps live trees)
};

/// What a run did; every field a method does not use stays 0.
struct matching_stats {
  double seconds_init = 0;        ///< initial matching
  double seconds_solve = 0;       ///< main algorithm, after the initial matching
  double seconds_transfer = 0;    ///< host <-> device copies (GPU methods)
  double seconds_transpose = 0;   ///< building the column orientation (when needed)
  double seconds_setup = 0;       ///< GPU methods: device selection, allocations, CUDA graph build
  double seconds_per_launch = 0;  ///< GPU methods: measured cost of one empty kernel launch
  std::int64_t init_cardinality = 0;
  std::int64_t iterations = 0;  ///< main-loop iterations (phases)
  std::int64_t global_relabels = 0;
  std::int64_t pushes = 0;
  std::int64_t augmentations = 0;
  std::int64_t bfs_levels = 0;
  std::int64_t kernel_launches = 0;
  std::int64_t cardinality =
      -1;  ///< GPU methods: the matching's size, counted on the device; else -1
};

/// Computes a maximum cardinality matching of `g`.
///
/// @param[in]  g          the graph (both orientations)
/// @param[in]  method     algorithm
/// @param[in]  options    tuning knobs
/// @param[out] col4row    length g.n_rows(): column matched to each row, or -1
/// @param[out] row4col    length g.n_cols(): row matched to each column, or -1
/// @param[out] stats      what the run did
status solve_matching(const bipartite_view& g, matching_method method,
                      const matching_options& options, vertex_t* col4row, vertex_t* row4col,
                      matching_stats* stats) noexcept;

/// The GPU methods on a CSR as the caller's arrays hold it (raw_csr).  For
/// arrays in GPU memory, `stream` is the caller's cudaStream_t (0: the
/// legacy default stream): every copy and kernel is ordered on it, so the
/// results may be used on it without a synchronisation; host arrays are
/// uploaded as they are (no widening) on a stream of the solve's own.  The
/// contents of `g` are checked on the device (invalid_input with SciPy's
/// message when indptr does not start at 0, decreases or does not end at
/// nnz, or an id is out of range).
///
/// @param[in]  g          the caller's CSR
/// @param[in]  method     gpu_pr, gpu_apfb or gpu_apsb
/// @param[in]  options    tuning knobs (init: cheap or none; device: where g lives)
/// @param[in]  stream     the caller's stream (g.on_device only)
/// @param[out] col4row    g.n_rows, in g's memory: column matched to each row, or -1
/// @param[out] row4col    g.n_cols, in g's memory: row matched to each column, or -1
/// @param[out] stats      what the run did
status solve_matching_raw(const raw_csr& g, matching_method method, const matching_options& options,
                          std::uintptr_t stream, vertex_t* col4row, vertex_t* row4col,
                          matching_stats* stats) noexcept;

/// How many of rows 0, step, 2 step, ... (ceil(g.n_rows / step) of them)
/// of a CSR in GPU memory are empty: counted on `stream` (the caller's
/// cudaStream_t) and waited for.  What the host's skew test reads
/// (python/matchflow/_matching.py) without a pass over the graph.
///
/// @param[in]  g       the caller's CSR (g.on_device)
/// @param[in]  step    at least 1
/// @param[in]  device  CUDA ordinal g lives on
/// @param[in]  stream  the caller's stream
/// @param[out] empty   the count (0 when there is no row)
status count_empty_sampled_rows(const raw_csr& g, std::int64_t step, int device,
                                std::uintptr_t stream, std::int64_t* empty) noexcept;

}  // namespace matchflow

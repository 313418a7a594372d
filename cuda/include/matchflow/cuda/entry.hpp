// Host-only declarations of the CUDA entry points.  dispatch.cpp is the only
// cpp/ file that includes this; when CUDA is not compiled, cpp/src/cuda_stub.cpp
// defines every function here to return status::cuda_unavailable.
#pragma once

#include "matchflow/backend.hpp"
#include "matchflow/lsap.hpp"
#include "matchflow/matching.hpp"

namespace matchflow::cuda {

int device_count() noexcept;
status get_device_info(int device, device_info* info) noexcept;
const char* architectures() noexcept;

/// G-PR (paper 000).  Mates arrays hold the initial matching on entry and the
/// maximum matching on exit.
status gpu_pr(const bipartite_view& g, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept;

/// APFB / APsB (paper 004); `apfb` selects APFB, else APsB.
status gpu_ap(const bipartite_view& g, bool apfb, const matching_options& options,
              vertex_t* col4row, vertex_t* row4col, matching_stats* stats) noexcept;

/// CU-TREE (`tree` true) or CU-CLASS Hungarian (paper 001); same contract as
/// matchflow::solve_lsap_dense.
template <class T>
status gpu_hungarian(const T* cost, std::int64_t n_rows, std::int64_t n_cols, bool tree,
                     const lsap_options& options, std::int64_t* col4row, T* u, T* v,
                     lsap_stats* stats) noexcept;

}  // namespace matchflow::cuda

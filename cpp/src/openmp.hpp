// OpenMP team sizes in one place (the build may have no OpenMP at all).
#pragma once

#ifdef _OPENMP
#include <omp.h>
#endif

#include <utility>

namespace matchflow::detail {

/// Threads a parallel region gets: `threads` when positive, else the OpenMP
/// default (OMP_NUM_THREADS or all cores); 1 without OpenMP.
inline int team_size(int threads) {
#ifdef _OPENMP
  return threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

/// Inside a parallel region: this thread's place in the team and the team's
/// size (OpenMP may give fewer threads than asked for).
inline std::pair<int, int> thread_in_team() {
#ifdef _OPENMP
  return {omp_get_thread_num(), omp_get_num_threads()};
#else
  return {0, 1};
#endif
}

}  // namespace matchflow::detail

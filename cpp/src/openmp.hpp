// OpenMP team sizes in one place (the build may have no OpenMP at all).
#pragma once

#ifdef _OPENMP
#include <omp.h>
#endif

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

}  // namespace matchflow::detail

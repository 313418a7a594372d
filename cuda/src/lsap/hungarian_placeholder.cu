// TEMPORARY placeholder until CU-TREE / CU-CLASS (branch lgpu) land: the lead
// deletes this file on merge.  It only keeps branch lsap linkable when CUDA
// is compiled.
#include "common/error.cuh"
#include "matchflow/cuda/entry.hpp"

namespace matchflow::cuda {

template <class T>
status gpu_hungarian(const T*, std::int64_t, std::int64_t, bool, const lsap_options&,
                     std::int64_t*, T*, T*, lsap_stats*) noexcept {
  return fail(status::cuda_unavailable, "not built yet");
}
template status gpu_hungarian<double>(const double*, std::int64_t, std::int64_t, bool,
                                      const lsap_options&, std::int64_t*, double*, double*,
                                      lsap_stats*) noexcept;
template status gpu_hungarian<float>(const float*, std::int64_t, std::int64_t, bool,
                                     const lsap_options&, std::int64_t*, float*, float*,
                                     lsap_stats*) noexcept;
template status gpu_hungarian<std::int64_t>(const std::int64_t*, std::int64_t, std::int64_t,
                                            bool, const lsap_options&, std::int64_t*,
                                            std::int64_t*, std::int64_t*, lsap_stats*) noexcept;

}  // namespace matchflow::cuda

// PLACEHOLDER until APFB/APsB land (helper task): reports that it is missing.
#include "common/error.cuh"
#include "matchflow/cuda/entry.hpp"
namespace matchflow::cuda {
status gpu_ap(const bipartite_view&, bool, const matching_options&, vertex_t*, vertex_t*,
              matching_stats*) noexcept {
  return fail(status::cuda_unavailable, "gpu-apfb/apsb are not built yet");
}
}  // namespace matchflow::cuda

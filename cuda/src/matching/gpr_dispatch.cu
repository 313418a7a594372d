// PLACEHOLDER until G-PR lands (helper task): reports that it is missing.
#include "common/error.cuh"
#include "matchflow/cuda/entry.hpp"
namespace matchflow::cuda {
status gpu_pr(const bipartite_view&, const matching_options&, vertex_t*, vertex_t*,
              matching_stats*) noexcept {
  return fail(status::cuda_unavailable, "gpu-pr is not built yet");
}
}  // namespace matchflow::cuda

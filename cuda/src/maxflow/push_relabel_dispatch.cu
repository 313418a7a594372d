// Placeholder: replaced by ECL-MaxFlow (paper 002).
#include "matchflow/cuda/entry.hpp"

namespace matchflow::cuda {
status gpu_maxflow(const flow_network&, const flow_options&, flow_result*, flow_stats*) noexcept {
  return fail(status::cuda_unavailable, "maximum flow 'gpu-pr' is not implemented yet");
}
}  // namespace matchflow::cuda

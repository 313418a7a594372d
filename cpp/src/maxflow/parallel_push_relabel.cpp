// Placeholder: replaced by the OpenMP synchronous push-relabel.
#include <stdexcept>

#include "maxflow_cpu.hpp"
namespace matchflow::detail {
void parallel_push_relabel_flow(const flow_network&, const flow_options&, flow_result*,
                                flow_stats*) {
  throw std::runtime_error("maximum flow 'ppr' is not implemented yet");
}
}  // namespace matchflow::detail

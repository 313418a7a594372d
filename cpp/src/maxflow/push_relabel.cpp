// Placeholder: replaced by the hi_pr-class implementation.
#include <stdexcept>

#include "maxflow_cpu.hpp"
namespace matchflow::detail {
void push_relabel_flow(const flow_network&, const flow_options&, flow_result*, flow_stats*) {
  throw std::runtime_error("maximum flow 'pr' is not implemented yet");
}
}  // namespace matchflow::detail

// solve_maxflow: route to the CPU algorithms or the GPU.  The only max-flow
// code that calls into cuda/.
#include "matchflow/cuda/entry.hpp"
#include "matchflow/maxflow.hpp"
#include "maxflow_cpu.hpp"

namespace matchflow {

status solve_maxflow(const flow_network& net, flow_method method, const flow_options& options,
                     flow_result* result, flow_stats* stats) noexcept {
  return guarded([&] {
    *stats = flow_stats{};
    switch (method) {
      case flow_method::pr:
        detail::push_relabel_flow(net, options, result, stats);
        return status::ok;
      case flow_method::ppr:
        detail::parallel_push_relabel_flow(net, options, result, stats);
        return status::ok;
      case flow_method::gpu_pr:
        return cuda::gpu_maxflow(net, options, result, stats);
    }
    return fail(status::invalid_input, "unknown maximum flow method");
  });
}

}  // namespace matchflow

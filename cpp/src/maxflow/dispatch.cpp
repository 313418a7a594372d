// solve_maxflow: route to the CPU algorithms or the GPU.  The only max-flow
// code that calls into cuda/.
#include "matchflow/detail/assert.hpp"
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/maxflow.hpp"
#include "maxflow_cpu.hpp"

namespace matchflow {

status solve_maxflow(const flow_network& net, flow_method method, const flow_options& options,
                     flow_result* result, flow_stats* stats) noexcept {
  // The Python layer's checks (_flow._checked): a CSR of n vertices, two
  // distinct terminals among them, nonnegative capacities.
  MATCHFLOW_ASSERT(net.source >= 0 && net.source < net.n && net.sink >= 0 && net.sink < net.n);
  MATCHFLOW_ASSERT(net.source != net.sink && net.ptr != nullptr && net.ptr[0] == 0);
  MATCHFLOW_ASSERT(options.threads >= 0);
  return guarded([&] {
    *stats = flow_stats{};
    switch (method) {
      case flow_method::pr:
        detail::push_relabel_flow(net, options, result, stats);
        return status::ok;
      case flow_method::ppr:
        detail::parallel_push_relabel_flow(net, options, result, stats);
        return status::ok;
      case flow_method::gpu_pr: return cuda::gpu_maxflow(net, options, result, stats);
      case flow_method::bk:
        detail::boykov_kolmogorov_flow(net, options, result, stats);
        return status::ok;
    }
    return fail(status::invalid_input, "unknown maximum flow method");
  });
}

}  // namespace matchflow

// Compiled only when CUDA is not: every GPU entry point says so.
#include "matchflow/detail/cuda_backend.hpp"
#include "matchflow/multi_gpu_lsap.hpp"

namespace matchflow::cuda {
static status unavailable() noexcept {
  return fail(status::cuda_unavailable, "matchflow was built without CUDA support");
}

int device_count() noexcept { return 0; }
status get_device_info(int, device_info*) noexcept { return unavailable(); }
const char* architectures() noexcept { return ""; }

void* take_pinned_result(std::size_t*) noexcept { return nullptr; }
void give_back_pinned_result(void*, std::size_t) noexcept {}
std::size_t free_pinned_results() noexcept { return 0; }

status gpu_pr(const bipartite_view&, gpu_start, const matching_options&, vertex_t*, vertex_t*,
              matching_stats*) noexcept {
  return unavailable();
}
status gpu_ap(const bipartite_view&, gpu_start, bool, const matching_options&, vertex_t*, vertex_t*,
              matching_stats*) noexcept {
  return unavailable();
}

status gpu_pr_raw(const raw_csr&, gpu_start, const matching_options&, std::uintptr_t, vertex_t*,
                  vertex_t*, matching_stats*) noexcept {
  return unavailable();
}
status gpu_ap_raw(const raw_csr&, gpu_start, bool, const matching_options&, std::uintptr_t,
                  vertex_t*, vertex_t*, matching_stats*) noexcept {
  return unavailable();
}

status count_empty_sampled_rows(const raw_csr&, std::int64_t, int, std::uintptr_t,
                                std::int64_t*) noexcept {
  return unavailable();
}

status gpu_maxflow(const flow_network&, const flow_options&, flow_result*, flow_stats*) noexcept {
  return unavailable();
}

status gpu_pivot_scc(const adjacency_view&, int, std::uint8_t*, pivot_scc_result*) noexcept {
  return unavailable();
}

template <class T>
status gpu_hungarian(const T*, std::int64_t, std::int64_t, bool, const lsap_options&, std::int64_t*,
                     T*, T*, lsap_stats*) noexcept {
  return unavailable();
}
MATCHFLOW_GPU_HUNGARIAN_TYPES(MATCHFLOW_INSTANTIATE_GPU_HUNGARIAN)

status gpu_hungarian_int32(const std::int32_t*, std::int64_t, std::int64_t, bool,
                           const lsap_options&, std::int64_t*, std::int64_t*, std::int64_t*,
                           lsap_stats*) noexcept {
  return unavailable();
}

template <class In, class U>
status gpu_auction(const In*, std::int64_t, std::int64_t, const lsap_options&, std::int64_t*, U*,
                   U*, lsap_stats*) noexcept {
  return unavailable();
}
MATCHFLOW_GPU_AUCTION_TYPES(MATCHFLOW_INSTANTIATE_GPU_AUCTION)

template <class T>
status gpu_sparse_auction(const std::int64_t*, const std::int32_t*, const T*, std::int64_t, int,
                          double*, bool*, sparse_lsap_stats*) noexcept {
  return unavailable();
}
MATCHFLOW_GPU_SPARSE_AUCTION_TYPES(MATCHFLOW_INSTANTIATE_GPU_SPARSE_AUCTION)

template <class T>
status gpu_batched_sap(const T*, std::int64_t, std::int64_t, std::int64_t, bool,
                       const batched_lsap_options&, std::int64_t*, std::int64_t*,
                       batched_lsap_stats*) noexcept {
  return unavailable();
}
MATCHFLOW_GPU_BATCHED_TYPES(MATCHFLOW_INSTANTIATE_GPU_BATCHED_SAP)

}  // namespace matchflow::cuda

namespace matchflow {

class lsap_part {};

status lsap_part_create(const lsap_part_config&, lsap_part** part) noexcept {
  *part = nullptr;
  return cuda::unavailable();
}
status lsap_part_ipc_handle(lsap_part*, void*) noexcept { return cuda::unavailable(); }
status lsap_parts_connect(lsap_part* const*, int) noexcept { return cuda::unavailable(); }
status lsap_part_connect_ipc(lsap_part*, const void*) noexcept { return cuda::unavailable(); }
status lsap_part_launch(lsap_part*) noexcept { return cuda::unavailable(); }
status lsap_part_finish(lsap_part*, std::int64_t*, void*, void*, lsap_stats*) noexcept {
  return cuda::unavailable();
}
void lsap_part_destroy(lsap_part*) noexcept {}

}  // namespace matchflow

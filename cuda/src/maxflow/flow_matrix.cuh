// SciPy's flow matrix built where the flow is (gpu-pr): the device-side
// counterpart of cpp/src/maxflow/flow_matrix.cpp, same output (see
// build_flow_matrix in matchflow/maxflow.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "matchflow/maxflow.hpp"

namespace matchflow::cuda {

/// The device arrays of a solved network: arc heads, the reverse CSR's
/// entries (arc rarc[r] leaves rtail[r]; every arc once) and the flows.
struct device_flow {
  std::int64_t n = 0, m = 0;
  const vertex_t* heads = nullptr;
  const vertex_t* rtail = nullptr;
  const offset_t* rarc = nullptr;
  const long long* flow = nullptr;
};

/// Builds the flow matrix of `f` on the device and copies it into the
/// caller's host buffers (sizes as build_flow_matrix's).  Returns false,
/// having done nothing, when the device lacks the 64 bytes per arc that it
/// takes: the caller then copies the arc flows and the CPU builds it.
bool device_flow_matrix(const device_flow& f, cudaStream_t s, offset_t* indptr, vertex_t* indices,
                        capacity_t* data, offset_t* nnz, std::int64_t* kernel_launches);

}  // namespace matchflow::cuda

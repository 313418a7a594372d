// The CUDA graph that runs APFB / APsB (paper 004, Algorithm 1) in one
// launch (its nodes: the top of apfb_dispatch.cu), and the graphs kept
// between solves.
//
// Instantiating the graph took 34 us and destroying it 17 us on the H200,
// against 6 us for handing an instantiated one the next solve's arguments
// (cudaGraphExecKernelNodeSetParams on its five or six kernel nodes, those
// inside the loops' bodies included): NOTES, "The whole call from GPU
// memory".  So an instantiated graph is kept per shape (device, kernels and
// grid sizes); a solve takes one, refreshes its kernels' arguments and gives
// it back once its launch has been waited for.  The loops' conditional
// handles belong to the graph, so a solve's `ap_args` take them from it.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <vector>

#include "common/error.cuh"
#include "common/launch.cuh"
#include "matching/apfb_kernels.cuh"

namespace matchflow::cuda {

/// One kernel node: its function and grid (0 blocks: one thread).
struct ap_kernel {
  void* func = nullptr;
  unsigned int blocks = 0;
  bool operator==(const ap_kernel& o) const { return func == o.func && blocks == o.blocks; }
};

/// What a kept graph must match: the device and the kernels, in the order
/// first_init, phase_begin, bfs, alternate, then the phase's tail kernels.
struct ap_shape {
  int device = 0;
  std::vector<ap_kernel> kernels;
  bool operator==(const ap_shape& o) const { return device == o.device && kernels == o.kernels; }
};

/// An instantiated graph of one shape, with the conditional handles its
/// kernels set and the nodes whose argument changes between solves.
class ap_graph {
 public:
  /// Builds and instantiates the graph of `shape`; stores its handles in `args`.
  ap_graph(const ap_shape& shape, ap::ap_args& args) : shape_(shape) {
    MATCHFLOW_CUDA_TRY(cudaGraphCreate(&graph_, 0));
    try {
      build(args);
      MATCHFLOW_CUDA_TRY(cudaGraphInstantiate(&exec_, graph_, 0));
    } catch (...) {
      cudaGraphDestroy(graph_);
      throw;
    }
  }
  ~ap_graph() {
    if (exec_) cudaGraphExecDestroy(exec_);  // after its launch, if one is in flight
    cudaGraphDestroy(graph_);
  }
  ap_graph(const ap_graph&) = delete;
  ap_graph& operator=(const ap_graph&) = delete;

  const ap_shape& shape() const { return shape_; }

  /// Hands every kernel node `args` (with this graph's handles stored in it).
  void refresh(ap::ap_args& args) {
    args.phase_loop = phase_loop_;
    args.level_loop = level_loop_;
    void* slot[] = {&args};
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      cudaKernelNodeParams p = params(shape_.kernels[i], slot);
      MATCHFLOW_CUDA_TRY(cudaGraphExecKernelNodeSetParams(exec_, nodes_[i], &p));
    }
  }

  void launch(cudaStream_t s) { MATCHFLOW_CUDA_TRY(cudaGraphLaunch(exec_, s)); }

 private:
  /// A kernel node's parameters; `slot` (a pointer to the ap_args) and the
  /// arguments are copied when they are applied.
  static cudaKernelNodeParams params(const ap_kernel& k, void** slot) {
    cudaKernelNodeParams p{};
    p.func = k.func;
    p.gridDim = dim3(k.blocks > 0 ? k.blocks : 1);
    p.blockDim = dim3(k.blocks > 0 ? threads_per_block : 1);
    p.kernelParams = slot;
    return p;
  }

  cudaGraphNode_t add_kernel(cudaGraph_t g, cudaGraphNode_t dep, std::size_t i, ap::ap_args* args) {
    void* slot[] = {args};
    cudaKernelNodeParams p = params(shape_.kernels[i], slot);
    cudaGraphNode_t node = nullptr;
    MATCHFLOW_CUDA_TRY(cudaGraphAddKernelNode(&node, g, dep ? &dep : nullptr, dep ? 1 : 0, &p));
    nodes_.push_back(node);
    return node;
  }

  /// Appends a `while` node on `handle` after `dep`; returns its body graph.
  static cudaGraph_t add_while(cudaGraph_t g, cudaGraphNode_t dep,
                               cudaGraphConditionalHandle handle, cudaGraphNode_t* node) {
    cudaGraphNodeParams p{};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = handle;
    p.conditional.type = cudaGraphCondTypeWhile;
    p.conditional.size = 1;
    MATCHFLOW_CUDA_TRY(cudaGraphAddNode(node, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, &p));
    return p.conditional.phGraph_out[0];
  }

  void build(ap::ap_args& args) {
    MATCHFLOW_CUDA_TRY(
        cudaGraphConditionalHandleCreate(&phase_loop_, graph_, 1, cudaGraphCondAssignDefault));
    // Kernel parameters are copied when a node is added, so both handles
    // must be in `args` before the first kernel node: the phase loop's body
    // first, then the level loop's handle in it.
    cudaGraphNode_t phase_node = nullptr;
    cudaGraph_t phase_body = add_while(graph_, nullptr, phase_loop_, &phase_node);
    MATCHFLOW_CUDA_TRY(
        cudaGraphConditionalHandleCreate(&level_loop_, phase_body, 1, cudaGraphCondAssignDefault));
    args.phase_loop = phase_loop_;
    args.level_loop = level_loop_;
    cudaGraphNode_t first = add_kernel(graph_, nullptr, 0, &args);
    MATCHFLOW_CUDA_TRY(cudaGraphAddDependencies(graph_, &first, &phase_node, nullptr, 1));
    cudaGraphNode_t begin = add_kernel(phase_body, nullptr, 1, &args);
    cudaGraphNode_t level_node = nullptr;
    cudaGraph_t level_body = add_while(phase_body, begin, level_loop_, &level_node);
    add_kernel(level_body, nullptr, 2, &args);
    cudaGraphNode_t last = add_kernel(phase_body, level_node, 3, &args);
    for (std::size_t i = 4; i < shape_.kernels.size(); ++i) {
      last = add_kernel(phase_body, last, i, &args);
    }
  }

  ap_shape shape_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphConditionalHandle phase_loop_ = 0, level_loop_ = 0;
  std::vector<cudaGraphNode_t> nodes_;  ///< in the order of shape_.kernels
};

/// Instantiated graphs not in use, for the process (never destroyed at exit:
/// a static's destructor would run after the CUDA runtime's).
class kept_ap_graphs {
 public:
  static constexpr std::size_t most = 8;

  /// A kept graph of `shape` (taken out of the keep), else a new one;
  /// either way with `args` applied.
  static std::unique_ptr<ap_graph> take(const ap_shape& shape, ap::ap_args& args) {
    kept_ap_graphs& kept = instance();
    std::unique_ptr<ap_graph> g;
    {
      std::lock_guard<std::mutex> lock(kept.m_);
      for (auto it = kept.graphs_.begin(); it != kept.graphs_.end(); ++it) {
        if ((*it)->shape() == shape) {
          g = std::move(*it);
          kept.graphs_.erase(it);
          break;
        }
      }
    }
    if (g) {
      try {
        g->refresh(args);
        return g;
      } catch (...) {  // a driver that cannot update it: build the graph anew
        g.reset();
        cudaGetLastError();
      }
    }
    return std::make_unique<ap_graph>(shape, args);
  }

  /// Keeps `g`, whose launch has completed, for a later solve (the oldest
  /// kept graph makes room when `most` are kept).
  static void give_back(std::unique_ptr<ap_graph> g) noexcept {
    kept_ap_graphs& kept = instance();
    std::unique_ptr<ap_graph> dropped;
    std::lock_guard<std::mutex> lock(kept.m_);
    try {
      if (kept.graphs_.size() >= most) {
        dropped = std::move(kept.graphs_.front());
        kept.graphs_.erase(kept.graphs_.begin());
      }
      kept.graphs_.push_back(std::move(g));
    } catch (...) {  // no memory for the list: `g` is destroyed
    }
  }

 private:
  static kept_ap_graphs& instance() {
    static auto* kept = new kept_ap_graphs;  // never destroyed (see above)
    return *kept;
  }
  std::mutex m_;
  std::vector<std::unique_ptr<ap_graph>> graphs_;
};

}  // namespace matchflow::cuda

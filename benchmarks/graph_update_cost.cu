// What a CUDA graph shaped as APFB's costs the host (apfb_graph.cuh): its
// build, instantiation, launch, the refresh of its kernel nodes' arguments
// in the instantiated graph (those in the loops' bodies too: the relaunch
// must then count 12 levels into the new buffer), its destruction, and for
// comparison cudaMemGetInfo and 16 stream-ordered allocations of 4 MiB
// (the default pool, whose release threshold is 0 here, unlike matchflow's).
// The kernels are stand-ins with APFB's argument passing (one struct with
// the two conditional handles); five rounds, the first ones warming up.
//
//     nvcc -std=c++17 -arch=sm_90 -o /tmp/graph_update_cost benchmarks/graph_update_cost.cu
//     /tmp/graph_update_cost
//
// Results: results/h200/graph-update-cost.txt.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
struct args_t {
  int* p;
  int n;
  cudaGraphConditionalHandle a, b;
};
__global__ void k_init(args_t x) {
  if (threadIdx.x == 0 && blockIdx.x == 0) x.p[0] = 3;
}
__global__ void k_begin(args_t x) { cudaGraphSetConditional(x.b, 1); }
__global__ void k_bfs(args_t x) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    x.p[1]++;
    cudaGraphSetConditional(x.b, x.p[1] % 4 != 0);
  }
}
__global__ void k_alt(args_t x) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    x.p[0]--;
    cudaGraphSetConditional(x.a, x.p[0] > 0);
  }
}
__global__ void k_fix(args_t x) {}
#define T(e)                                         \
  do {                                               \
    cudaError_t r = (e);                             \
    if (r) {                                         \
      printf("%s: %s\n", #e, cudaGetErrorString(r)); \
    }                                                \
  } while (0)
using clk = std::chrono::steady_clock;
double us(clk::time_point a) {
  return std::chrono::duration<double, std::micro>(clk::now() - a).count();
}
cudaGraphNode_t add_kernel(cudaGraph_t g, cudaGraphNode_t dep, void* f, unsigned b, args_t* a) {
  cudaKernelNodeParams p{};
  p.func = f;
  p.gridDim = dim3(b);
  p.blockDim = dim3(256);
  void* params[] = {a};
  p.kernelParams = params;
  cudaGraphNode_t n;
  T(cudaGraphAddKernelNode(&n, g, dep ? &dep : nullptr, dep ? 1 : 0, &p));
  return n;
}
cudaGraph_t add_while(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphConditionalHandle h,
                      cudaGraphNode_t* node) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = cudaGraphCondTypeWhile;
  p.conditional.size = 1;
  T(cudaGraphAddNode(node, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, &p));
  return p.conditional.phGraph_out[0];
}
struct built {
  cudaGraph_t g;
  cudaGraphExec_t e;
  cudaGraphNode_t nodes[5];
  args_t a;
};
void build(built& B, int* p) {
  T(cudaGraphCreate(&B.g, 0));
  B.a.p = p;
  B.a.n = 1 << 20;
  T(cudaGraphConditionalHandleCreate(&B.a.a, B.g, 1, cudaGraphCondAssignDefault));
  cudaGraphNode_t pn;
  cudaGraph_t pb = add_while(B.g, nullptr, B.a.a, &pn);
  T(cudaGraphConditionalHandleCreate(&B.a.b, pb, 1, cudaGraphCondAssignDefault));
  B.nodes[0] = add_kernel(B.g, nullptr, (void*)k_init, 4096, &B.a);
  T(cudaGraphAddDependencies(B.g, &B.nodes[0], &pn, nullptr, 1));
  B.nodes[1] = add_kernel(pb, nullptr, (void*)k_begin, 1, &B.a);
  cudaGraphNode_t ln;
  cudaGraph_t lb = add_while(pb, B.nodes[1], B.a.b, &ln);
  B.nodes[2] = add_kernel(lb, nullptr, (void*)k_bfs, 4096, &B.a);
  B.nodes[3] = add_kernel(pb, ln, (void*)k_alt, 4096, &B.a);
  B.nodes[4] = add_kernel(pb, B.nodes[3], (void*)k_fix, 4096, &B.a);
}
int main() {
  cudaStream_t s;
  T(cudaStreamCreate(&s));
  int* p;
  T(cudaMalloc(&p, 64));
  T(cudaMemset(p, 0, 64));
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = clk::now();
    built B;
    build(B, p);
    double tb = us(t0);
    t0 = clk::now();
    T(cudaGraphInstantiate(&B.e, B.g, 0));
    double ti = us(t0);
    t0 = clk::now();
    T(cudaGraphLaunch(B.e, s));
    T(cudaStreamSynchronize(s));
    double tl = us(t0);
    // update params: new pointer, other grid
    int* q;
    T(cudaMalloc(&q, 64));
    T(cudaMemset(q, 0, 64));
    args_t a2 = B.a;
    a2.p = q;
    t0 = clk::now();
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < 5; ++i) {
      cudaKernelNodeParams kp{};
      T(cudaGraphKernelNodeGetParams(B.nodes[i], &kp));
      void* params[] = {&a2};
      kp.kernelParams = params;
      kp.gridDim = dim3(2048 + (i == 1 ? -2047 : 0));
      cudaError_t r = cudaGraphExecKernelNodeSetParams(B.e, B.nodes[i], &kp);
      if (r) {
        err = r;
        printf("set %d: %s\n", i, cudaGetErrorString(r));
        cudaGetLastError();
      }
    }
    double tu = us(t0);
    t0 = clk::now();
    T(cudaGraphLaunch(B.e, s));
    int h[2];
    T(cudaMemcpyAsync(h, q, 8, cudaMemcpyDeviceToHost, s));
    T(cudaStreamSynchronize(s));
    double tl2 = us(t0);
    t0 = clk::now();
    T(cudaGraphExecDestroy(B.e));
    T(cudaGraphDestroy(B.g));
    double td = us(t0);
    size_t f, tt;
    t0 = clk::now();
    T(cudaMemGetInfo(&f, &tt));
    double tm = us(t0);
    t0 = clk::now();
    void* v[16];
    for (int i = 0; i < 16; ++i) T(cudaMallocAsync(&v[i], 1 << 22, s));
    double ta = us(t0);
    t0 = clk::now();
    for (int i = 0; i < 16; ++i) T(cudaFreeAsync(v[i], s));
    double tf = us(t0);
    printf(
        "build %.1f us, instantiate %.1f, launch+sync %.1f, set 5 nodes %.1f (err %d), relaunch "
        "%.1f (q = %d %d), destroy %.1f, memGetInfo %.1f, 16 mallocAsync %.1f, 16 freeAsync %.1f\n",
        tb, ti, tl, tu, (int)err, tl2, h[0], h[1], td, tm, ta, tf);
    cudaFree(q);
  }
}

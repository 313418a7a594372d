// ECL-MaxFlow's view of the graph on the device: the forward CSR plus the
// reverse CSR mapped to forward arcs (paper 002, section III-B, "RCSR"), the
// worklists, and the residual capacities derived from flow.  Terms and the
// concurrency contract: push_relabel_kernels.cuh.
#pragma once

#include <cstdint>

#include "common/atomics.cuh"
#include "common/launch.cuh"
#include "matchflow/graph.hpp"

namespace matchflow::cuda::ecl {

using label_t = std::int32_t;
using flow_t = long long;  // capacity_t on the device (atomics want long long)

/// Device-side counters of one solve (one allocation).
struct control {
  int count[3];               ///< worklist sizes, a ring (see the header)
  int source_reached;         ///< phase-1 BFS reached s: the preflow is not maximum
  int tail_cycles;            ///< cycles push_relabel_tail_kernel ran
  int busy_cycles;            ///< cycles that found a non-empty worklist
  int bfs_levels;             ///< levels of the last relabel_persistent_kernel BFS
  unsigned long long pushes;  ///< pushes (Algorithm 5, line 12)
  unsigned long long lifts;   ///< lifts (Algorithm 5, line 18)
  /// lifts of the persistent kernel's last cycles, a ring as count: cycle c
  /// adds to [c % 3], the grid reads it after the barrier, clears it at c + 2
  unsigned long long cycle_lifts[3];
  long long cycle_ns[3];  ///< and when cycle c ended (block 0), since the launch
};

/// What a cycle needs; passed by value to the kernels.
struct graph_view {
  vertex_t n;
  vertex_t source, sink;
  const offset_t* __restrict__ ptr;    ///< forward CSR (the input), n + 1
  const vertex_t* __restrict__ heads;  ///< m
  const flow_t* __restrict__ caps;     ///< m
  const offset_t* __restrict__ rptr;   ///< reverse CSR, n + 1
  const vertex_t* __restrict__ rtail;  ///< m: tail u of the arc entering v
  const offset_t* __restrict__ rarc;   ///< m: the forward arc's position
  flow_t* flow;                        ///< m
  flow_t* excess;                      ///< n
  label_t* h;                          ///< n
  int* time;                           ///< n (timestamps, see the header)
};

/// The ring of list sizes and buffers as one launch sees them.
struct list_view {
  const vertex_t* in;
  vertex_t* out;
  int* count_in;
  int* count_out;
  int* count_clear;
};

/// The worklists and counters at a ring position: the lists swap with
/// `parity` (odd: list1 is read), the three counters rotate with `ring`.
__host__ __device__ inline list_view ring_view(vertex_t* list0, vertex_t* list1, int* counts,
                                               int parity, int ring) {
  const bool odd = (parity & 1) != 0;
  return list_view{odd ? list1 : list0, odd ? list0 : list1, &counts[ring % 3],
                   &counts[(ring + 1) % 3], &counts[(ring + 2) % 3]};
}

__device__ inline flow_t atomic_add(flow_t* addr, flow_t v) {
  return static_cast<flow_t>(
      atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v)));
}

/// Appends w to WL_next once per cycle (section IV, timestamps); s and t are
/// never active.
__device__ inline void append_once(const graph_view& g, const list_view& l, vertex_t w, int stamp) {
  if (w == g.source || w == g.sink) return;
  if (atomicMax(&g.time[w], stamp) != stamp) push(l.out, l.count_out, w);
}

/// Arcs of v as one index k over [0, total): its forward arcs (v, w)
/// first, then its reverse ones (w, v), either list left out as the caller
/// asks.  One index for both lists lets a warp's lanes on either kind wait
/// on memory together: a BFS level or a PR cycle costs its chain of
/// dependent loads (benchmarks/NOTES.md, "gpu-pr, global relabels").
struct arc_span {
  offset_t fwd_begin, fwd_count, rev_begin, total;
};

__device__ inline arc_span arcs_of(const graph_view& g, vertex_t v, bool forward, bool reverse) {
  const offset_t fb = forward ? g.ptr[v] : 0, fc = forward ? g.ptr[v + 1] - fb : 0;
  const offset_t rb = reverse ? g.rptr[v] : 0, rc = reverse ? g.rptr[v + 1] - rb : 0;
  return arc_span{fb, fc, rb, fc + rc};
}

/// The k-th arc of a span: its entry `a` of the forward CSR, the neighbour
/// w, the flow on it (read relaxed: PR cycles change it concurrently), and
/// its kind.
struct span_arc {
  offset_t a;
  vertex_t w;
  flow_t flow;
  bool forward;
};

/// The k-th arc of a span without its flow (plain loads of the read-only
/// CSR arrays; flow 0).
__device__ inline span_arc arc_place(const graph_view& g, const arc_span& s, offset_t k) {
  const bool forward = k < s.fwd_count;
  const offset_t i = forward ? s.fwd_begin + k : s.rev_begin + (k - s.fwd_count);
  const offset_t a = forward ? i : g.rarc[i];
  const vertex_t w = forward ? g.heads[i] : g.rtail[i];
  return span_arc{a, w, 0, forward};
}

__device__ inline span_arc arc_at(const graph_view& g, const arc_span& s, offset_t k) {
  span_arc arc = arc_place(g, s, k);
  arc.flow = atomic_read(&g.flow[arc.a]);
  return arc;
}

/// What v can push along the arc (the paper's derived c_f): capacity left
/// on a forward arc, the flow on a reverse one.
__device__ inline flow_t residual(const graph_view& g, const span_arc& arc) {
  return arc.forward ? g.caps[arc.a] - arc.flow : arc.flow;
}

}  // namespace matchflow::cuda::ecl

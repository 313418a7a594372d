// ECL-MaxFlow's push_relabel_kernel body (paper 002, Algorithm 5): the
// discharge of one active vertex, by a warp (the paper's form) or, for a
// vertex of many arcs, by a whole block.  Terms and the concurrency
// contract: push_relabel_kernels.cuh.
#pragma once

#include <climits>
#include <cstdint>

#include "maxflow/residual_view.cuh"

namespace matchflow::cuda::ecl {

constexpr label_t no_label = INT32_MAX;  ///< "no residual neighbour" in the reduction

/// A vertex whose span (arcs_of) holds at least this many arcs is discharged
/// by the whole block (discharge_hub) instead of one warp.  One warp walks a
/// span 32 arcs per dependent chain of loads while the cycle's other warps
/// wait at its end: R-MAT 18's hubs (up to 50,000 arcs) made a cycle cost
/// about 0.9 ms, and a complete DAG's 999 arcs per vertex 43 us.  128, not
/// 512: R-MAT 20's phase 1 0.061 -> 0.055 s, the rest of the suite the same
/// (results/h200/gpu-pr-hub-arcs.txt).
constexpr offset_t default_hub_arcs = 128;
/// hub_arcs for "no hubs": the paper's warp per vertex.
constexpr offset_t no_hubs = offset_t(1) << 62;

/// Inclusive prefix sum over the warp, saturating at `cap`: every operand
/// is at most cap (< 2^62), so no partial sum overflows, and the result is
/// min(true prefix, cap).
__device__ inline flow_t capped_prefix(flow_t x, flow_t cap, int lane) {
  for (int d = 1; d < warp_size; d *= 2) {
    const flow_t y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x = x + y < cap ? x + y : cap;
  }
  return x;
}

/// Line 9: the least label over the warp.
__device__ inline label_t warp_min(label_t x) {
  for (int d = warp_size / 2; d > 0; d /= 2) {
    const label_t other = __shfl_xor_sync(0xffffffffu, x, d);
    x = other < x ? other : x;
  }
  return x;
}

/// Arcs a thread of lowest_neighbour has in flight: one arc at a time made
/// each 32 arcs of a span cost a chain of three dependent loads (arc, flow,
/// label; relaxed loads are not reordered by the compiler), so a warp took
/// ~45 us a cycle over a complete DAG's 999-arc spans.
constexpr int scan_batch = 2;

/// Lines 3-8 for the arcs k = first, first + stride, ... of v's span: the
/// least label among v's residual neighbours (no_label if none).  Reads
/// scan_batch arcs a step, each kind of load for all of them before the
/// next kind.
__device__ inline label_t lowest_neighbour(const graph_view& g, vertex_t v, const arc_span& span,
                                           offset_t first, offset_t stride) {
  label_t lowest = no_label;
  for (offset_t k0 = first; k0 < span.total; k0 += scan_batch * stride) {
    span_arc arc[scan_batch];
#pragma unroll
    for (int b = 0; b < scan_batch; ++b) {
      const offset_t k = k0 + b * stride;
      arc[b] = k < span.total ? arc_place(g, span, k) : span_arc{0, v, 0, true};
    }
    vertex_t w[scan_batch];  // the neighbour if the arc is residual, else v
#pragma unroll
    for (int b = 0; b < scan_batch; ++b) {
      if (arc[b].w != v) arc[b].flow = atomic_read(&g.flow[arc[b].a]);
      w[b] = arc[b].w != v && residual(g, arc[b]) > 0 ? arc[b].w : v;
    }
#pragma unroll
    for (int b = 0; b < scan_batch; ++b) {
      const label_t hw = w[b] != v ? atomic_read(&g.h[w[b]]) : no_label;
      lowest = hw < lowest ? hw : lowest;
    }
  }
  return lowest;
}

/// What the k-th arc of v's span offers a push to label `lowest`: its
/// residual if its head still has that label, capped at `left`, else 0
/// (also past the span's end).
__device__ inline flow_t offer(const graph_view& g, vertex_t v, const arc_span& span, offset_t k,
                               label_t lowest, flow_t left, span_arc& arc) {
  arc = span_arc{0, v, 0, true};
  if (k >= span.total) return 0;
  arc = arc_at(g, span, k);
  const flow_t r = residual(g, arc);
  if (arc.w == v || r <= 0 || atomic_read(&g.h[arc.w]) != lowest) return 0;
  return r < left ? r : left;
}

/// Lines 12-15: `take` along the arc (a Reduce on a reverse arc).
__device__ inline void push_along(const graph_view& g, const list_view& l, const span_arc& arc,
                                  flow_t take, int stamp, unsigned long long& pushes) {
  atomic_add(&g.flow[arc.a], arc.forward ? take : -take);
  atomic_add(&g.excess[arc.w], take);
  ++pushes;
  append_once(g, l, arc.w, stamp);
}

/// Lines 11-15 applied to every lowest neighbour, not just one: in span
/// order (forward arcs, then reverse), each residual arc whose head still
/// has label `lowest` gets min(residual, what is left of `budget`).  A
/// warp-wide capped prefix sum shares the budget out, so one scan drains a
/// vertex of many arcs that Algorithm 5 would drain one arc per cycle.  Each
/// push is one that Algorithm 5 could make next (to a neighbour of least
/// label, bounded by the residual it read), so the concurrency contract of
/// push_relabel_kernels.cuh holds.  Returns the excess pushed (uniform over
/// the warp); v's excess is the caller's.
__device__ inline flow_t push_to_lowest(const graph_view& g, const list_view& l, vertex_t v,
                                        const arc_span& span, label_t lowest, flow_t budget,
                                        int stamp, int lane, unsigned long long& pushes) {
  flow_t left = budget;
  for (offset_t base = 0; base < span.total && left > 0; base += warp_size) {
    span_arc arc;
    const flow_t amount = offer(g, v, span, base + lane, lowest, left, arc);
    const flow_t upto = capped_prefix(amount, left, lane);
    const flow_t below = __shfl_up_sync(0xffffffffu, upto, 1);  // every lane takes part
    const flow_t take = upto - (lane == 0 ? 0 : below);
    if (take > 0) push_along(g, l, arc, take, stamp, pushes);
    left -= __shfl_sync(0xffffffffu, upto, warp_size - 1);
  }
  return budget - left;
}

/// After a push of `pushed` out of v (one thread): v's excess, and v back
/// on the list if some is left (or a label moved meanwhile).
__device__ inline void settle(const graph_view& g, const list_view& l, vertex_t v, flow_t pushed,
                              int stamp) {
  const flow_t before = atomic_add(&g.excess[v], -pushed);
  if (before - pushed > 0) append_once(g, l, v, stamp);
}

/// Lines 17-21 (one thread): v's label one above its lowest residual
/// neighbour, or infinity when it has none.
__device__ inline void lift(const graph_view& g, const list_view& l, vertex_t v, label_t lowest,
                            label_t infinity, int stamp, unsigned long long& lifts) {
  const label_t lifted = lowest == no_label || lowest >= infinity - 1 ? infinity : lowest + 1;
  atomic_write(&g.h[v], lifted);
  ++lifts;
  if (lifted < infinity) append_once(g, l, v, stamp);
}

/// Algorithm 5 for the vertex v of one warp: lines 3-9 (strided scan over
/// the span, then the shuffle min-reduction), then the push (lines 10-15,
/// to every lowest neighbour: push_to_lowest) or the lift (lines 17-21,
/// lane 0).  Phase 2's span holds the reverse CSR only and its pushes are
/// Reduce operations (Algorithm 3).
__device__ inline void discharge_once(const graph_view& g, const list_view& l, vertex_t v,
                                      const arc_span& span, label_t infinity, int stamp, int lane,
                                      unsigned long long& pushes, unsigned long long& lifts) {
  // Lane 0 reads e(v) and h(v) for the whole warp: others may change them
  // meanwhile, and the warp must agree (the reduction needs every lane).
  flow_t e = 0;
  label_t hv = 0;
  if (lane == 0) {
    e = atomic_read(&g.excess[v]);
    hv = atomic_read(&g.h[v]);
  }
  e = __shfl_sync(0xffffffffu, e, 0);
  hv = __shfl_sync(0xffffffffu, hv, 0);
  if (e <= 0 || hv >= infinity) return;  // line 2
  const label_t lowest = warp_min(lowest_neighbour(g, v, span, lane, warp_size));
  if (lowest != no_label && hv > lowest) {  // lines 11-15: push
    const flow_t pushed = push_to_lowest(g, l, v, span, lowest, e, stamp, lane, pushes);
    if (lane == 0) settle(g, l, v, pushed, stamp);
  } else if (lane == 0) {
    lift(g, l, v, lowest, infinity, stamp, lifts);
  }
}

/// Spans of at most this many arcs fit in a warp's registers after one scan
/// step (scan_batch arcs a lane): push_short pushes from those.
constexpr offset_t short_span_arcs = offset_t(warp_size) * scan_batch;

/// How a cycle splits its worklist between the three discharge forms.
struct discharge_rules {
  offset_t hub_arcs;    ///< from this many arcs, the whole block (discharge_hub)
  offset_t short_arcs;  ///< up to this many (<= short_span_arcs), scan_short and push_short;
                        ///< 0: every other vertex by discharge_once (the paper's form)
};

/// One lane's arc of a short span as the scan read it, and its head's label
/// (no_label when the arc was not residual).
struct held_arc {
  span_arc arc;
  label_t hw;
};

/// What scan_short leaves for push_short: the warp's arcs, e(v) as read,
/// the least label, and whether to push (uniform over the warp).
struct short_scan {
  held_arc held[scan_batch];
  flow_t e;
  label_t lowest;
  bool push;
};

/// Algorithm 5 for a vertex whose whole span is one scan step (tuned
/// cycles; span.total <= short_span_arcs), in two halves that the caller
/// separates by a block barrier: scan_short (lines 2-9, and the lift of
/// lines 17-21), then push_short (lines 11-15).  The same steps as
/// discharge_once with fewer dependent trips to memory, which is what a
/// cycle of a few active vertices costs (the one-block tail on a grid whose
/// flow runs along long paths: about 5.5 us a cycle, flow-suite.md,
/// grid_1024x1024_s240127):
///  * e(v) and h(v) are read while the scan's loads are in flight;
///  * the push reuses the arcs the scan found and reads only the lowest
///    neighbours' labels and flows again (one trip, not offer's two): a
///    neighbour that lifted since the scan is skipped, and a residual that
///    the other side widened meanwhile is used whole, as discharge_once
///    does.  The barrier between the halves makes the lifts of the block's
///    other vertices in this cycle visible to that read;
///  * v's excess is lowered without reading it back: whoever added to it
///    since the read also put v on the next list (push_along);
///  * a lift is followed in the same cycle by the push it enables (Hong's
///    loop: relabel, then push), which is what makes this form faster than
///    discharge_once (benchmarks/NOTES.md, "gpu-pr's constants").
__device__ inline short_scan scan_short(const graph_view& g, vertex_t v, const arc_span& span,
                                        label_t infinity, int lane, unsigned long long& lifts) {
  short_scan sc;
  sc.e = 0;
  label_t hv = 0;
  if (lane == 0) {
    sc.e = atomic_read(&g.excess[v]);
    hv = atomic_read(&g.h[v]);
  }
#pragma unroll
  for (int b = 0; b < scan_batch; ++b) {
    const offset_t k = lane + offset_t(b) * warp_size;
    sc.held[b].arc = k < span.total ? arc_place(g, span, k) : span_arc{0, v, 0, true};
  }
#pragma unroll
  for (int b = 0; b < scan_batch; ++b) {
    if (sc.held[b].arc.w != v) sc.held[b].arc.flow = atomic_read(&g.flow[sc.held[b].arc.a]);
  }
  label_t lowest = no_label;
#pragma unroll
  for (int b = 0; b < scan_batch; ++b) {
    const bool open = sc.held[b].arc.w != v && residual(g, sc.held[b].arc) > 0;
    sc.held[b].hw = open ? atomic_read(&g.h[sc.held[b].arc.w]) : no_label;
    lowest = sc.held[b].hw < lowest ? sc.held[b].hw : lowest;
  }
  sc.lowest = warp_min(lowest);
  sc.e = __shfl_sync(0xffffffffu, sc.e, 0);
  hv = __shfl_sync(0xffffffffu, hv, 0);
  sc.push = sc.e > 0 && hv < infinity;                          // line 2
  if (sc.push && (sc.lowest == no_label || hv <= sc.lowest)) {  // lines 17-21
    const label_t lifted =
        sc.lowest == no_label || sc.lowest >= infinity - 1 ? infinity : sc.lowest + 1;
    if (lane == 0) {
      atomic_write(&g.h[v], lifted);
      ++lifts;
    }
    sc.push = lifted < infinity;
  }
  return sc;
}

/// The second half of the short form (lines 11-15 to every lowest
/// neighbour, in span order): see scan_short.
__device__ inline void push_short(const graph_view& g, const list_view& l, vertex_t v,
                                  const short_scan& sc, int stamp, int lane,
                                  unsigned long long& pushes) {
  flow_t now[scan_batch];  // one more trip: labels and flows as they are now
#pragma unroll
  for (int b = 0; b < scan_batch; ++b) {
    now[b] = 0;
    if (sc.held[b].hw != sc.lowest) continue;
    span_arc arc = sc.held[b].arc;
    arc.flow = atomic_read(&g.flow[arc.a]);
    if (atomic_read(&g.h[arc.w]) == sc.lowest) now[b] = residual(g, arc);
  }
  flow_t left = sc.e;
#pragma unroll
  for (int b = 0; b < scan_batch; ++b) {
    const flow_t upto = capped_prefix(now[b] < left ? now[b] : left, left, lane);
    const flow_t below = __shfl_up_sync(0xffffffffu, upto, 1);
    const flow_t take = upto - (lane == 0 ? 0 : below);
    if (take > 0) push_along(g, l, sc.held[b].arc, take, stamp, pushes);
    left -= __shfl_sync(0xffffffffu, upto, warp_size - 1);
  }
  if (lane == 0) {
    if (left < sc.e) atomic_add(&g.excess[v], left - sc.e);
    if (left > 0) append_once(g, l, v, stamp);
  }
}

/// Shared memory of one block's hub discharges (Block threads).
template <int Block>
struct hub_scratch {
  static constexpr int warps = Block / warp_size;
  flow_t e;                 ///< e(v), as thread 0 read it
  label_t hv;               ///< h(v), likewise
  label_t warp_min[warps];  ///< per warp: least label it saw
  flow_t warp_sum[warps];   ///< per warp: its capped share of a push chunk
  vertex_t hub[warps];      ///< per warp: its list entry if a hub, else -1
};

/// The least label over the block (every thread calls it, every thread gets
/// it).  sh.warp_min is stable until the caller's next barrier.
template <int Block>
__device__ inline label_t block_min(label_t x, hub_scratch<Block>& sh) {
  x = warp_min(x);
  if (threadIdx.x % warp_size == 0) sh.warp_min[threadIdx.x / warp_size] = x;
  __syncthreads();
  label_t least = no_label;
  for (int w = 0; w < hub_scratch<Block>::warps; ++w) {
    least = sh.warp_min[w] < least ? sh.warp_min[w] : least;
  }
  return least;
}

/// push_to_lowest with the whole block: Block arcs a step; each warp's
/// capped prefix, offset by the capped sum of the warps before it, shares
/// the budget out in span order, as the warp form does.
template <int Block>
__device__ inline flow_t block_push_to_lowest(const graph_view& g, const list_view& l, vertex_t v,
                                              const arc_span& span, label_t lowest, flow_t budget,
                                              int stamp, hub_scratch<Block>& sh,
                                              unsigned long long& pushes) {
  const int lane = threadIdx.x % warp_size, warp = threadIdx.x / warp_size;
  flow_t left = budget;
  for (offset_t base = 0; base < span.total && left > 0; base += Block) {  // uniform
    span_arc arc;
    const flow_t amount = offer(g, v, span, base + threadIdx.x, lowest, left, arc);
    const flow_t upto_warp = capped_prefix(amount, left, lane);
    const flow_t below_warp = __shfl_up_sync(0xffffffffu, upto_warp, 1);
    if (lane == warp_size - 1) sh.warp_sum[warp] = upto_warp;
    __syncthreads();
    flow_t offset = 0, total = 0;  // capped sums: every term is at most left < 2^62
    for (int w = 0; w < hub_scratch<Block>::warps; ++w) {
      const flow_t s = sh.warp_sum[w];
      if (w < warp) offset = offset + s < left ? offset + s : left;
      total = total + s < left ? total + s : left;
    }
    __syncthreads();  // warp_sum is read by all before the next step writes it
    const flow_t upto = offset + upto_warp < left ? offset + upto_warp : left;
    const flow_t before_lane = offset + (lane == 0 ? 0 : below_warp);
    const flow_t take = upto - (before_lane < left ? before_lane : left);
    if (take > 0) push_along(g, l, arc, take, stamp, pushes);
    left -= total;
  }
  return budget - left;
}

/// Algorithm 5 for a hub v with the whole block (every thread calls it):
/// the same steps as discharge_once, the scan and the push Block arcs at a
/// time, the excess and label updates by thread 0.  Ends on a barrier.
template <int Block>
__device__ inline void discharge_hub(const graph_view& g, const list_view& l, vertex_t v,
                                     const arc_span& span, label_t infinity, int stamp,
                                     hub_scratch<Block>& sh, unsigned long long& pushes,
                                     unsigned long long& lifts) {
  if (threadIdx.x == 0) {
    sh.e = atomic_read(&g.excess[v]);
    sh.hv = atomic_read(&g.h[v]);
  }
  __syncthreads();
  const flow_t e = sh.e;
  const label_t hv = sh.hv;
  if (e > 0 && hv < infinity) {  // line 2 (uniform over the block)
    const label_t lowest = block_min(lowest_neighbour(g, v, span, threadIdx.x, Block), sh);
    if (lowest != no_label && hv > lowest) {
      const flow_t pushed = block_push_to_lowest(g, l, v, span, lowest, e, stamp, sh, pushes);
      if (threadIdx.x == 0) settle(g, l, v, pushed, stamp);
    } else if (threadIdx.x == 0) {
      lift(g, l, v, lowest, infinity, stamp, lifts);
    }
  }
  __syncthreads();  // sh is reused by the next hub
}

/// One PR cycle's share of this block (Block threads) of a grid over the
/// `size` entries of WL: chunk by chunk, warp w takes entry
/// first + w * gridDim.x (first = blockIdx.x, then steps of a chunk), so a
/// short list spreads over the blocks.  A hub gets the whole block after
/// the chunk's warps are done (discharge_hub), every other entry its warp
/// (scan_short and push_short when its span is at most rules.short_arcs,
/// else discharge_once).  Hub: a span of at least hub_arcs * k arcs, where k
/// counts the chunk's entries of at least hub_arcs: the block takes the
/// hubs one after another, so it only pays when few entries are long (a
/// complete DAG's 999-arc spans, 32 to a chunk of the tail kernel, went
/// 2.7x slower by block than by warp).  `size` must be the same for the
/// whole block.  Every vertex still has one worker per cycle: the
/// concurrency contract of push_relabel_kernels.cuh holds as in the
/// paper's warp per vertex.
template <int Block>
__device__ inline void discharge_list(const graph_view& g, const list_view& l, int size,
                                      bool phase1, label_t infinity, int stamp,
                                      discharge_rules rules, unsigned long long& pushes,
                                      unsigned long long& lifts) {
  __shared__ hub_scratch<Block> sh;
  constexpr int warps = hub_scratch<Block>::warps;
  const int lane = threadIdx.x % warp_size, warp = threadIdx.x / warp_size;
  const std::int64_t blocks = gridDim.x;
  for (std::int64_t first = blockIdx.x; first < size; first += warps * blocks) {
    const std::int64_t i = first + warp * blocks;
    const vertex_t v = i < size ? l.in[i] : -1;
    const arc_span span = v >= 0 ? arcs_of(g, v, phase1, true) : arc_span{0, 0, 0, 0};
    const bool short_span =
        v >= 0 && span.total <= rules.short_arcs && span.total < rules.hub_arcs;  // never a hub
    short_scan sc;
    sc.push = false;
    if (short_span) {
      sc = scan_short(g, v, span, infinity, lane, lifts);
    }
    // The barrier also shows this cycle's lifts in the block to push_short.
    const int long_ones = __syncthreads_count(lane == 0 && span.total >= rules.hub_arcs);
    const bool hub = long_ones > 0 && span.total >= rules.hub_arcs * long_ones;
    if (sc.push) push_short(g, l, v, sc, stamp, lane, pushes);
    if (v >= 0 && !hub && !short_span) {
      discharge_once(g, l, v, span, infinity, stamp, lane, pushes, lifts);
    }
    if (long_ones == 0) continue;  // uniform: no hub in this chunk
    if (lane == 0) sh.hub[warp] = hub ? v : -1;
    __syncthreads();
    for (int w = 0; w < warps; ++w) {
      const vertex_t u = sh.hub[w];
      if (u >= 0) {
        discharge_hub(g, l, u, arcs_of(g, u, phase1, true), infinity, stamp, sh, pushes, lifts);
      }
    }
    __syncthreads();  // sh.hub is read by all before the next chunk writes it
  }
}

/// Sums a block's counters into ctl (one atomicAdd each per block).  Every
/// thread of the block calls it.
__device__ inline void add_counts(control* ctl, unsigned long long pushes,
                                  unsigned long long lifts) {
  __shared__ unsigned long long block_pushes, block_lifts;
  if (threadIdx.x == 0) block_pushes = block_lifts = 0;
  __syncthreads();
  if (pushes) atomicAdd(&block_pushes, pushes);
  if (lifts) atomicAdd(&block_lifts, lifts);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_pushes) atomicAdd(&ctl->pushes, block_pushes);
    if (block_lifts) atomicAdd(&ctl->lifts, block_lifts);
  }
}

}  // namespace matchflow::cuda::ecl

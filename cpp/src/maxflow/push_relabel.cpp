// Sequential highest-label push-relabel for maximum flow, hi_pr-class.
//
// Cherkassky & Goldberg 1997, "On implementing push-relabel method for the
// maximum flow problem" (Algorithmica 19), the "hi_pr" variant:
//
// - Highest-label selection: labels index buckets; each bucket
//   holds a stack of active vertices (excess > 0) and a doubly linked list
//   of inactive ones, so that a vertex moves between them in O(1) when a
//   push gives it excess.  a_max / a_min bound the labels of active
//   vertices, d_max those of all bucketed vertices.
// - Current arcs: a vertex resumes its scan where the last one stopped; a
//   relabel sets the current arc to the arc of minimum label.
// - Global relabeling: exact labels by backward BFS from the
//   target over residual arcs, at the start and whenever the relabel work
//   (BETA per relabel plus the arcs it scans) exceeds (ALPHA * n + m) / freq.
//   Graph cuts start instead at label 1 everywhere, as pbbs's build of
//   hi_pr always does (highest_label::starts_local).
// - Gap heuristic: when a relabel empties the bucket of the
//   vertex's old label d, every vertex above d cannot reach the target; all
//   get label n.  With highest-label selection, those are all inactive.
// - Two phases.  Phase 1 finds a maximum preflow: only
//   vertices with label < n are active.  Phase 2 returns the excess stranded
//   at label n to the source by flow decomposition (flow_decomposition.hpp),
//   as hi_pr does, or, where the flow's cycles cost too much, by this loop
//   again with the source as target.
//
// The algorithm is sequential; the residual graph's construction uses
// options.threads threads (two_phase.hpp).
//
// Labels are int32 (at most n), excesses int64 (bounded by the capacity out
// of the source, below 2^62 by the Python layer's check).
#include <cstdint>
#include <type_traits>
#include <vector>

#include "flow_decomposition.hpp"
#include "highest_label.hpp"
#include "maxflow_cpu.hpp"
#include "residual_graph.hpp"
#include "two_phase.hpp"

namespace matchflow::detail {

void push_relabel_flow(const flow_network& net, const flow_options& options, flow_result* result,
                       flow_stats* stats) {
  two_phase_flow<true>(
      net, options, result, stats,
      [&](auto& g, std::vector<capacity_t>& excess, std::uint8_t*) {
        using graph = std::decay_t<decltype(g)>;
        highest_label<typename graph::arc_t, typename graph::cap_t>(
            g, excess, net.sink, net.source, options.relabel_freq, stats, options.return_flow)
            .run();
        return false;  // the frame's BFS marks the cut
      },
      [&](auto& g, std::vector<capacity_t>& excess) {
        return_excess(g, excess, net.source, net.sink, stats);
      });
}

}  // namespace matchflow::detail

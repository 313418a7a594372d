// Residual graph construction, the initial preflow and the flow read-back
// (the minimum cut: residual_reach.hpp).
//
// The build is a counting transpose done by `team` threads, each taking a
// share of about m / team consecutive input arcs (arc_share).  Pass 1: each
// thread counts its rows' out-degrees and, in an array of its own, how many
// of its arcs enter each head of its window (the least to the greatest head
// its arcs hold).  Between the passes, per head, the threads' counts become
// offsets in thread order, and the vertices' first arcs a prefix sum by
// vertex ranges.  Pass 2: each thread writes its rows' forward copies in
// order and each reverse copy at its head's next slot for that thread.  No
// atomics, and each reverse list is filled in input-arc order whatever the
// team, so the graph, and every pr run on it, is reproducible (ppr's
// lock-free epochs race: the same value and cut, not always the same flow).
// Each arc is read twice in all, not once by every thread (NOTES.md, "CPU
// constants").  Shares split rows where they fall: segmentation's source
// row, 12% of its arcs, held one thread up while shares were whole rows.
// The counts take the sum of the threads' windows, at most team * n entries
// (about 2n on an image, whose rows hold nearby heads): where that sum at
// the whole team passes 4m entries (half the 2m residual records' bytes),
// the team shrinks to 2m / n threads, whose counts are at most 2m.  The
// build is bound by memory traffic on the 16-thread host (NOTES.md, "Head
// windows, the layout on the team, anti-parallel pairs in value-only
// builds"), so the windows and the parallel prefix matter.  The big arrays
// are left uninitialised: every record is written once.
#include "residual_graph.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "../id_bounds.hpp"
#include "../openmp.hpp"

namespace matchflow::detail {
namespace {

// Below this many input arcs the build runs on the calling thread.
constexpr offset_t parallel_min_arcs = offset_t(1) << 16;

/// Thread c's share of `threads`: the input arcs [begin, end), about m /
/// threads of them, and the rows it owns, [lo, hi): those starting in it
/// (the last may go on past `end`; trailing empty rows go to the last
/// share).  Its arcs before ptr[lo], [begin, head_end), are a piece of row
/// lo - 1, which an earlier share owns.
struct arc_share {
  offset_t begin = 0, end = 0, head_end = 0;
  vertex_t lo = 0, hi = 0;
};

/// The first row starting at or after arc `target` (n past the last).
vertex_t first_row_from(const flow_network& net, offset_t target) {
  return vertex_t(std::lower_bound(net.ptr, net.ptr + net.n, target) - net.ptr);
}

arc_share share_of(const flow_network& net, int c, int threads) {
  arc_share s;
  s.begin = net.n_arcs() * c / threads;
  s.end = net.n_arcs() * (c + 1) / threads;
  s.lo = first_row_from(net, s.begin);
  s.hi = c + 1 == threads ? net.n : first_row_from(net, s.end);
  s.head_end = std::min(s.end, net.ptr[s.lo]);
  return s;
}

/// f(u, a0, a1) for each piece of a row in `s`, in arc order: the head
/// piece of row lo - 1 (when there is one), then each owned row up to the
/// share's end.
template <class F>
void for_each_piece(const flow_network& net, const arc_share& s, F&& f) {
  if (s.begin < s.head_end) f(s.lo - 1, s.begin, s.head_end);
  for (vertex_t u = s.lo; u < s.hi; ++u) f(u, net.ptr[u], std::min(net.ptr[u + 1], s.end));
}

/// The heads a thread's arcs hold, as [lo, hi); empty when none.  Self-loops'
/// heads are in it too: they are its rows anyway.
struct head_window {
  vertex_t lo = 0, hi = 0;
  offset_t size() const { return offset_t(hi) - lo; }
};

head_window window_of(const flow_network& net, const arc_share& s) {
  if (s.end == s.begin) return {};
  const id_bounds b = bounds_of(net.heads + s.begin, s.end - s.begin);
  return {vertex_t(b.lo), vertex_t(b.hi + 1)};
}

/// Each of `team` threads' head window (its share: share_of).
std::vector<head_window> windows_of(const flow_network& net, int team) {
  std::vector<head_window> windows(static_cast<std::size_t>(team));
#pragma omp parallel for num_threads(team) schedule(static)
  for (int c = 0; c < team; ++c) windows[std::size_t(c)] = window_of(net, share_of(net, c, team));
  return windows;
}

/// The build's team and its threads' windows: all of `team` where their
/// counts (the windows' sum) are at most 4m, else 2m / n threads, whose
/// counts (at most n each) are at most 2m.  Matching as a flow: 16 windows
/// of about n / 2 heads each fit where 16 n would not (NOTES.md, "CPU
/// constants").
std::vector<head_window> build_windows(const flow_network& net, int team) {
  const offset_t m = net.n_arcs();
  if (m < parallel_min_arcs) return windows_of(net, 1);
  std::vector<head_window> windows = windows_of(net, team);
  offset_t counts = 0;
  for (const head_window& w : windows) counts += w.size();
  if (counts <= 4 * m) return windows;
  const offset_t fit = m / std::max<offset_t>(1, offset_t(net.n) / 2);
  return windows_of(net, int(std::clamp<offset_t>(fit, 1, team)));
}

/// One thread's counts: slot v - window.lo for head v.
template <class Arc>
struct window_counts {
  Arc* slots;
  head_window window;
  Arc& operator[](vertex_t v) const { return slots[v - window.lo]; }
  bool holds(vertex_t v) const { return window.lo <= v && v < window.hi; }
};

/// Anti-parallel arcs as one pair (value-only builds, build_residual_graph): the
/// k-th arc (u, v) of u's row and the k-th (v, u) of v's row become one
/// record each, each the other's reverse, where neither end is a terminal
/// and both rows hold at most pair_row_arcs arcs (the partner is found by a
/// scan of v's row).  Both rows find the same pairs, so the counts agree
/// without a table; the count pass keeps each arc's partner rank for the
/// fill (one byte an arc: the scans hit other rows at random on Delaunay
/// graphs, and doing them twice cost more than the byte).
struct antiparallel_pairs {
  static constexpr offset_t pair_row_arcs = 32;  // ranks fit int8
  const flow_network* net = nullptr;             ///< null: nothing is paired
  std::int8_t* rank = nullptr;                   ///< per input arc: partner() as the count found it

  bool short_row(vertex_t u) const {
    return u != net->source && u != net->sink && net->ptr[u + 1] - net->ptr[u] <= pair_row_arcs;
  }

  /// The rank among v's non-loop out-arcs of the arc paired with u's arc
  /// at `a` (head v != u), or -1.  u's row is short (short_row).
  offset_t partner(vertex_t u, offset_t a, vertex_t v) const {
    if (!short_row(v)) return -1;
    offset_t k = 0;  // the arcs (u, v) before a
    for (offset_t b = net->ptr[u]; b < a; ++b) k += net->heads[b] == v;
    offset_t rank = 0;
    for (offset_t b = net->ptr[v]; b < net->ptr[v + 1]; ++b) {
      const vertex_t w = net->heads[b];
      if (w == v) continue;
      if (w == u && k-- == 0) return rank;
      ++rank;
    }
    return -1;
  }

  /// Whether u's row may pair at all (else every partner() is -1).
  bool pairs_in(vertex_t u) const { return net != nullptr && short_row(u); }
};

/// Pass 1 over share `s`: reverse_first[u] = the non-loop out-arcs of u's
/// piece in s for each row u it owns, in[v] = its non-loop arcs into v not
/// paired (`in` zeroed here).  Returns the head piece's non-loop arcs.
template <class Arc, class Cap>
Arc count_degrees(const flow_network& net, const arc_share& s, residual_graph<Arc, Cap>& g,
                  const window_counts<Arc>& in, const antiparallel_pairs& pairs) {
  std::fill(in.slots, in.slots + in.window.size(), Arc(0));
  Arc head_out = 0;
  for_each_piece(net, s, [&](vertex_t u, offset_t a0, offset_t a1) {
    Arc out = 0;
    const bool pairing = pairs.pairs_in(u);
    for (offset_t a = a0; a < a1; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) continue;
      ++out;
      const offset_t rank = pairing ? pairs.partner(u, a, v) : -1;
      if (pairing) pairs.rank[a] = std::int8_t(rank);
      if (rank < 0) ++in[v];  // a reverse copy at v
    }
    (u < s.lo ? head_out : g.reverse_first[std::size_t(u)]) = out;
  });
  return head_out;
}

/// Rows split between shares, after pass 1: each later share's head piece
/// adds its count to its row's (the owner's piece first), and its forward
/// copies start after the earlier pieces' (head_rank[c]).
template <class Arc, class Cap>
void join_split_rows(const std::vector<arc_share>& shares, const std::vector<Arc>& head_out,
                     residual_graph<Arc, Cap>& g, std::vector<Arc>& head_rank) {
  for (std::size_t c = 0; c < shares.size(); ++c) {
    const arc_share& s = shares[c];
    if (s.begin == s.head_end) continue;
    Arc& out = g.reverse_first[std::size_t(s.lo) - 1];
    head_rank[c] = out;
    out += head_out[c];
  }
}

/// Per head v, the team's counts become each thread's offset within v's
/// reverse copies; first[v + 1] = v's non-loop in-arcs.  Vertices [lo, hi).
template <class Arc, class Cap>
void offsets_by_thread(const std::vector<window_counts<Arc>>& counts, vertex_t lo, vertex_t hi,
                       residual_graph<Arc, Cap>& g) {
  for (vertex_t v = lo; v < hi; ++v) {
    Arc in = 0;
    for (const window_counts<Arc>& mine : counts) {
      if (!mine.holds(v)) continue;
      const Arc count = mine[v];
      mine[v] = in;
      in += count;
    }
    g.first[std::size_t(v) + 1] = in;
  }
}

/// Vertices [lo, hi), their counts in reverse_first (out) and first[v + 1]
/// (in): the arcs they hold in all.
template <class Arc, class Cap>
Arc arcs_of(const residual_graph<Arc, Cap>& g, vertex_t lo, vertex_t hi) {
  Arc total = 0;
  for (vertex_t u = lo; u < hi; ++u) {
    total += g.reverse_first[std::size_t(u)] + g.first[std::size_t(u) + 1];
  }
  return total;
}

/// The counts of vertices [lo, hi) become their lists, from `start` on:
/// out-arcs (forward copies) then in-arcs (reverse copies) of each vertex.
template <class Arc, class Cap>
void lay_out(residual_graph<Arc, Cap>& g, vertex_t lo, vertex_t hi, Arc start) {
  for (vertex_t u = lo; u < hi; ++u) {
    const Arc out = g.reverse_first[std::size_t(u)];
    const Arc in = g.first[std::size_t(u) + 1];
    g.reverse_first[std::size_t(u)] = start + out;
    start += out + in;
    g.first[std::size_t(u) + 1] = start;
  }
}

/// Pass 2 over share `s`: both copies of every arc (the forward one alone
/// of a paired arc), and forward_of when the graph has it.  A forward copy's
/// index is its tail's first arc plus its rank among the tail's non-loop
/// arcs (the head piece's from head_rank on); a reverse copy's is its head's
/// first reverse slot plus this thread's offset there (`next`), counted up.
template <class Arc, class Cap>
bool fill_arcs(const flow_network& net, const arc_share& s, Arc head_rank,
               residual_graph<Arc, Cap>& g, const window_counts<Arc>& next,
               const antiparallel_pairs& pairs) {
  constexpr bool narrow = sizeof(Cap) < sizeof(capacity_t);
  bool fits = true;
  for_each_piece(net, s, [&](vertex_t u, offset_t a0, offset_t a1) {
    Arc f = g.first[std::size_t(u)] + (u < s.lo ? head_rank : Arc(0));
    const bool pairing = pairs.pairs_in(u);
    for (offset_t a = a0; a < a1; ++a) {
      const vertex_t v = net.heads[a];
      if (v == u) {
        if (g.forward_of) g.forward_of[std::size_t(a)] = -1;
        continue;
      }
      const capacity_t cap = net.cap(a);
      if constexpr (narrow) fits = fits && cap < narrow_cap_limit;
      const offset_t rank = pairing ? pairs.rank[a] : -1;
      if (rank >= 0) {  // v's row writes the other record
        g.arcs[std::size_t(f++)] =
            residual_arc<Arc, Cap>{Cap(cap), v, g.first[std::size_t(v)] + Arc(rank)};
        continue;
      }
      const Arc r = g.reverse_first[std::size_t(v)] + next[v]++;
      g.arcs[std::size_t(f)] = residual_arc<Arc, Cap>{Cap(cap), v, r};
      g.arcs[std::size_t(r)] = residual_arc<Arc, Cap>{0, u, f};
      if (g.forward_of) g.forward_of[std::size_t(a)] = f;
      ++f;
    }
  });
  return fits;
}

}  // namespace

bool residual_fits_int32(const flow_network& net) {
  return 2 * net.n_arcs() < offset_t(std::numeric_limits<std::int32_t>::max());
}

template <class Arc, class Cap>
residual_graph<Arc, Cap> build_residual_graph(const flow_network& net, int team, bool flows) {
  residual_graph<Arc, Cap> g;
  const vertex_t n = net.n;
  const std::vector<head_window> windows = build_windows(net, team);
  team = int(windows.size());
  g.n = n;
  g.first = big_array_of<Arc>(std::size_t(n) + 1);  // every entry written below
  g.first[0] = 0;
  g.reverse_first = big_array_of<Arc>(std::size_t(n));
  if (flows) g.forward_of = big_array_of<Arc>(std::size_t(net.n_arcs()));
  big_array<std::int8_t> ranks;  // the pairing's partner ranks (value-only builds)
  if (!flows) ranks = big_array_of<std::int8_t>(std::size_t(net.n_arcs()));
  const antiparallel_pairs pairs{flows ? nullptr : &net, ranks.get()};
  std::vector<window_counts<Arc>> counts(std::size_t(team), window_counts<Arc>{nullptr, {}});
  std::vector<arc_share> shares(static_cast<std::size_t>(team));
  std::vector<Arc> head_out(std::size_t(team), 0), head_rank(std::size_t(team), 0);
  std::vector<Arc> chunk_start(std::size_t(team) + 1, 0);
  big_array<Arc> slots;
#pragma omp parallel num_threads(team)
  {
    const auto [c, size] = thread_in_team();
    const arc_share share = share_of(net, c, size);
    shares[std::size_t(c)] = share;
    const vertex_t vlo = vertex_t(std::int64_t(n) * c / size);  // a share of the vertices
    const vertex_t vhi = vertex_t(std::int64_t(n) * (c + 1) / size);
    window_counts<Arc>& mine = counts[std::size_t(c)];
    mine.window = size == team ? windows[std::size_t(c)] : window_of(net, share);
#pragma omp barrier
#pragma omp single
    {
      counts.resize(std::size_t(size));  // OpenMP may give fewer threads than asked for
      shares.resize(std::size_t(size));
      std::size_t total = 0;
      for (const window_counts<Arc>& w : counts) total += std::size_t(w.window.size());
      slots = big_array_of<Arc>(total);
      total = 0;
      for (window_counts<Arc>& w : counts) {
        w.slots = slots.get() + total;
        total += std::size_t(w.window.size());
      }
    }  // implicit barrier
    head_out[std::size_t(c)] = count_degrees(net, share, g, mine, pairs);
#pragma omp barrier
#pragma omp single
    join_split_rows(shares, head_out, g, head_rank);  // implicit barrier
    offsets_by_thread(counts, vlo, vhi, g);
    chunk_start[std::size_t(c) + 1] = arcs_of(g, vlo, vhi);
#pragma omp barrier
#pragma omp single
    {
      for (int k = 0; k < size; ++k) chunk_start[std::size_t(k) + 1] += chunk_start[std::size_t(k)];
      g.n_arcs = chunk_start[std::size_t(size)];
      g.arcs = big_array_of<residual_arc<Arc, Cap>>(std::size_t(g.n_arcs));
    }  // implicit barrier
    lay_out(g, vlo, vhi, chunk_start[std::size_t(c)]);
#pragma omp barrier
    if (!fill_arcs(net, share, head_rank[std::size_t(c)], g, mine, pairs)) {
#pragma omp atomic write
      g.fits = false;
    }
  }
  return g;
}

template <class Arc, class Cap>
void saturate_source_arcs(residual_graph<Arc, Cap>& g, vertex_t source,
                          std::vector<capacity_t>& excess, int team) {
  const Arc first = g.first[std::size_t(source)], last = g.reverse_first[std::size_t(source)];
  if (last - first < Arc(parallel_min_arcs)) team = 1;
  capacity_t sent = 0;
  // Each arc's reverse copy is its own; parallel arcs share a head's excess.
#pragma omp parallel for num_threads(team) schedule(static) reduction(+ : sent)
  for (Arc k = first; k < last; ++k) {
    residual_arc<Arc, Cap>& arc = g.arcs[std::size_t(k)];
    const Cap c = arc.rescap;
    if (c == 0) continue;
    arc.rescap = 0;
    g.arcs[std::size_t(arc.reverse)].rescap += c;
#pragma omp atomic
    excess[std::size_t(arc.head)] += c;
    sent += c;
  }
  excess[std::size_t(source)] -= sent;
}

template <class Arc, class Cap>
void write_arc_flow(const flow_network& net, const residual_graph<Arc, Cap>& g, int team,
                    capacity_t* arc_flow) {
  const offset_t m = net.n_arcs();
  if (m < parallel_min_arcs) team = 1;
#pragma omp parallel for num_threads(team) schedule(static)
  for (offset_t a = 0; a < m; ++a) {
    const Arc f = g.forward_of[std::size_t(a)];
    arc_flow[a] = f < 0 ? 0 : net.cap(a) - g.arcs[std::size_t(f)].rescap;
  }
}

#define MATCHFLOW_RESIDUAL_GRAPH(Arc, Cap)                                                     \
  template residual_graph<Arc, Cap> build_residual_graph<Arc, Cap>(const flow_network&, int,   \
                                                                   bool);                      \
  template void saturate_source_arcs<Arc, Cap>(residual_graph<Arc, Cap>&, vertex_t,            \
                                               std::vector<capacity_t>&, int);                 \
  template void write_arc_flow<Arc, Cap>(const flow_network&, const residual_graph<Arc, Cap>&, \
                                         int, capacity_t*);
MATCHFLOW_RESIDUAL_GRAPHS(MATCHFLOW_RESIDUAL_GRAPH)
#undef MATCHFLOW_RESIDUAL_GRAPH

}  // namespace matchflow::detail

// SciPy's flow matrix from per-arc flows: the antisymmetric CSR matrix
// F(u, v) = f(u, v) - f(v, u) on pattern(A) + pattern(A^T), explicit zeros
// kept, that scipy.sparse.csgraph.maximum_flow returns.
//
// Row u's entries are its out-arcs (v, +f) and its in-arcs (w, -f), the
// in-arcs sorted by tail; out-arcs are sorted only where the input row is
// not.  One merge of the two sums equal columns (parallel arcs, an arc
// against its reverse; a self-loop gives a stored 0).  Parallel by
// contiguous chunks of rows, each packed from its upper-bound offset, then
// moved down to its final one.
//
// Two sources of the in-lists: a transpose of the per-arc flows, built here
// by a stable counting sort (build_flow_matrix: the GPU's arc flows), or the
// CPU codes' residual graph itself, whose reverse copies are each vertex's
// in-arcs in tail order with their flow as residual capacity
// (write_flow_matrix: no transpose, no per-arc flow array).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "../big_array.hpp"
#include "../openmp.hpp"
#include "matchflow/maxflow.hpp"
#include "residual_graph.hpp"

namespace matchflow {
namespace {

struct entry {  // no initialisers: arrays of entries are filled before read
  vertex_t col;
  capacity_t value;  // signed flow
};

constexpr offset_t kSerialArcs = offset_t(1) << 15;

void sort_by_column(entry* first, entry* last) {
  const auto by_column = [](const entry& x, const entry& y) { return x.col < y.col; };
  if (last - first > 32) {
    std::sort(first, last, by_column);
    return;
  }
  for (entry* i = first + 1; i < last; ++i) {  // short lists: insertion sort
    const entry x = *i;
    entry* j = i;
    for (; j > first && (j - 1)->col > x.col; --j) *j = *(j - 1);
    *j = x;
  }
}

struct transpose {
  std::vector<offset_t> ptr;  // n + 1: in-arcs of v are [ptr[v], ptr[v+1])
  // (tail, -flow), sorted by tail within each v; left uninitialised (every
  // slot is written before it is read): a zero fill would cost as much as
  // the rows' merge.
  detail::big_array<entry> in;
};

// Thread c of the team owns heads [n * c / team, n * (c + 1) / team) and
// scans every arc, keeping those into its range: no atomics, and the scatter
// stays in arc order, so each in-list comes out sorted by tail (a stable
// counting sort).  Every thread reads all heads, a streaming read that
// costs less than a locked increment per arc.
transpose build_transpose(const flow_network& net, const capacity_t* arc_flow, int team) {
  const vertex_t n = net.n;
  transpose t;
  t.ptr.assign(std::size_t(n) + 1, 0);
  t.in = detail::big_array_of<entry>(std::size_t(net.n_arcs()));
  offset_t* count = t.ptr.data() + 1;
  const auto range = [&](int c) { return vertex_t(std::int64_t(n) * c / team); };
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (int c = 0; c < team; ++c) {
    const vertex_t lo = range(c), hi = range(c + 1);
    for (offset_t a = 0; a < net.n_arcs(); ++a) {
      const vertex_t v = net.heads[a];
      if (v >= lo && v < hi) ++count[v];
    }
  }
  for (vertex_t v = 0; v < n; ++v) t.ptr[std::size_t(v) + 1] += t.ptr[std::size_t(v)];
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (int c = 0; c < team; ++c) {
    const vertex_t lo = range(c), hi = range(c + 1);
    std::vector<offset_t> cursor(t.ptr.begin() + lo, t.ptr.begin() + hi);
    for (vertex_t u = 0; u < n; ++u) {
      for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
        const vertex_t v = net.heads[a];
        if (v >= lo && v < hi)
          t.in[std::size_t(cursor[std::size_t(v - lo)]++)] = entry{u, -arc_flow[a]};
      }
    }
  }
  return t;
}

// Row sources: the flow on input arc a, and row u's in-list (in_count
// entries, sorted by column, read by in_at) starting at in_before(u) in the
// concatenation of all in-lists.
struct transposed_flows {
  const capacity_t* arc_flow;
  transpose t;
  capacity_t out_flow(offset_t a) const { return arc_flow[a]; }
  offset_t in_before(vertex_t u) const { return t.ptr[std::size_t(u)]; }
  offset_t in_count(vertex_t u) const { return in_before(u + 1) - in_before(u); }
  entry in_at(vertex_t u, offset_t i) const { return t.in[std::size_t(in_before(u) + i)]; }
};

template <class Arc, class Cap>
struct residual_flows {
  const flow_network& net;
  const detail::residual_graph<Arc, Cap>& g;
  std::vector<offset_t> in_ptr;  // n + 1: reverse copies before each vertex's
  capacity_t out_flow(offset_t a) const {
    const Arc f = g.forward_of[std::size_t(a)];
    return f < 0 ? 0 : net.cap(a) - g.arcs[std::size_t(f)].rescap;
  }
  offset_t in_before(vertex_t u) const { return in_ptr[std::size_t(u)]; }
  offset_t in_count(vertex_t u) const { return in_before(u + 1) - in_before(u); }
  entry in_at(vertex_t u, offset_t i) const {
    const auto& arc = g.arcs[std::size_t(g.reverse_first[std::size_t(u)] + Arc(i))];
    return entry{arc.head, -capacity_t(arc.rescap)};
  }
};

// Row u's entries, sorted by column and summed, written from cols/vals;
// returns their count.  Out-arcs are sorted here only when the input's row
// is not (a canonical SciPy input needs no sort at all), then merged with
// the sorted in-arcs.
template <class Rows>
offset_t merge_row(const flow_network& net, const Rows& rows, vertex_t u, std::vector<entry>& out,
                   vertex_t* cols, capacity_t* vals) {
  out.clear();
  for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a)
    out.push_back({net.heads[a], rows.out_flow(a)});
  if (!std::is_sorted(out.begin(), out.end(),
                      [](const entry& x, const entry& y) { return x.col < y.col; }))
    sort_by_column(out.data(), out.data() + out.size());
  const entry* x = out.data();
  const entry* x_end = x + out.size();
  const offset_t in_end = rows.in_count(u);
  offset_t i = 0;
  offset_t k = -1;
  while (x != x_end || i != in_end) {
    const bool take_out = i == in_end || (x != x_end && x->col <= rows.in_at(u, i).col);
    const entry e = take_out ? *x++ : rows.in_at(u, i++);
    if (k >= 0 && cols[k] == e.col) {
      vals[k] += e.value;
    } else {
      cols[++k] = e.col;
      vals[k] = e.value;
    }
  }
  return k + 1;
}

// First row of chunk c of `team`, chunks balanced by gathered entries
// (row u gathers base(u + 1) - base(u) of them).
template <class Rows>
vertex_t chunk_start(const flow_network& net, const Rows& rows, int team, int c) {
  const offset_t target = 2 * net.n_arcs() / team * c;
  vertex_t lo = 0;
  vertex_t hi = net.n;
  while (lo < hi) {  // first u with base(u) >= target
    const vertex_t mid = lo + (hi - lo) / 2;
    if (net.ptr[mid] + rows.in_before(mid) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return c == team ? net.n : lo;
}

// Moves chunk c of `len[c]` entries from offset from[c] down to to[c]
// (to <= from; chunk 0 and chunks already in place, as on a graph without
// anti-parallel arcs, stay), in waves: a chunk's target can overlap only
// the sources of chunks before it (to[c] + len[c] = to[c + 1] <= from[c + 1]),
// so it moves in the wave after the last of those it overlaps.  On a
// symmetric graph (nnz = m, half the upper bound) chunk c overlaps only
// chunk c / 2: about log2(team) waves, where one thread moving them in order
// moved 15/16 of the matrix at 16 threads.  Where every chunk shrinks a
// little the waves are a chain, as the sequential moves were.
void move_chunks(const std::vector<offset_t>& from, const std::vector<offset_t>& to,
                 const std::vector<offset_t>& len, int team, vertex_t* indices, capacity_t* data) {
  std::vector<int> wave(std::size_t(team), 0);
  int waves = 0;
  for (int c = 1; c < team; ++c) {
    if (to[std::size_t(c)] == from[std::size_t(c)] || len[std::size_t(c)] == 0) continue;
    for (int d = 1; d < c; ++d) {
      const bool overlap = from[std::size_t(d)] < to[std::size_t(c)] + len[std::size_t(c)] &&
                           from[std::size_t(d)] + len[std::size_t(d)] > to[std::size_t(c)];
      if (overlap) {
        wave[std::size_t(c)] = std::max(wave[std::size_t(c)], wave[std::size_t(d)]);
      }
    }
    waves = std::max(waves, ++wave[std::size_t(c)]);
  }
  for (int w = 1; w <= waves; ++w) {
#pragma omp parallel for num_threads(team) schedule(static, 1)
    for (int c = 1; c < team; ++c) {
      if (wave[std::size_t(c)] != w) continue;
      const std::size_t n = std::size_t(len[std::size_t(c)]);
      std::memmove(indices + to[std::size_t(c)], indices + from[std::size_t(c)],
                   n * sizeof(vertex_t));
      std::memmove(data + to[std::size_t(c)], data + from[std::size_t(c)], n * sizeof(capacity_t));
    }
  }
}

// Each thread merges a contiguous chunk of rows into the output, packed
// from the chunk's upper-bound offset base(first row) = ptr + in_before (no
// scratch copy of the matrix: fresh pages cost more than the rows' merge);
// the chunks are then moved down to their final offsets (move_chunks).
template <class Rows>
void flow_matrix(const flow_network& net, const Rows& rows, int team, offset_t* indptr,
                 vertex_t* indices, capacity_t* data, offset_t* nnz) {
  const vertex_t n = net.n;
  std::vector<vertex_t> first(std::size_t(team) + 1);
  for (int c = 0; c <= team; ++c) first[std::size_t(c)] = chunk_start(net, rows, team, c);
  indptr[0] = 0;
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (int c = 0; c < team; ++c) {
    std::vector<entry> out;
    const vertex_t lo = first[std::size_t(c)];
    offset_t at = net.ptr[lo] + rows.in_before(lo);
    for (vertex_t u = lo; u < first[std::size_t(c) + 1]; ++u) {
      indptr[u + 1] = merge_row(net, rows, u, out, indices + at, data + at);
      at += indptr[u + 1];
    }
  }
  for (vertex_t u = 0; u < n; ++u) indptr[u + 1] += indptr[u];
  const std::size_t chunks = static_cast<std::size_t>(team);
  std::vector<offset_t> from(chunks), to(chunks), len(chunks);
  for (int c = 0; c < team; ++c) {
    const vertex_t lo = first[std::size_t(c)];
    from[std::size_t(c)] = net.ptr[lo] + rows.in_before(lo);
    to[std::size_t(c)] = indptr[lo];
    len[std::size_t(c)] = indptr[first[std::size_t(c) + 1]] - indptr[lo];
  }
  move_chunks(from, to, len, team, indices, data);
  *nnz = indptr[n];
}

// Below kSerialArcs a team costs more than it saves.
int matrix_team(const flow_network& net, int threads) {
  return net.n_arcs() < kSerialArcs ? 1 : detail::team_size(threads);
}

}  // namespace

status build_flow_matrix(const flow_network& net, const capacity_t* arc_flow, int threads,
                         offset_t* indptr, vertex_t* indices, capacity_t* data,
                         offset_t* nnz) noexcept {
  return guarded([&] {
    const int team = matrix_team(net, threads);
    const transposed_flows rows{arc_flow, build_transpose(net, arc_flow, team)};
    flow_matrix(net, rows, team, indptr, indices, data, nnz);
    return status::ok;
  });
}

namespace detail {

template <class Arc, class Cap>
void write_flow_matrix(const flow_network& net, const residual_graph<Arc, Cap>& g, int threads,
                       flow_result* result) {
  residual_flows<Arc, Cap> rows{net, g, std::vector<offset_t>(std::size_t(net.n) + 1, 0)};
  for (std::size_t u = 0; u < std::size_t(net.n); ++u) {  // u's reverse copies: its in-arcs
    rows.in_ptr[u + 1] = rows.in_ptr[u] + (g.first[u + 1] - g.reverse_first[u]);
  }
  flow_matrix(net, rows, matrix_team(net, threads), result->matrix_indptr, result->matrix_indices,
              result->matrix_data, &result->matrix_nnz);
}

#define MATCHFLOW_WRITE_FLOW_MATRIX(Arc, Cap)                                                     \
  template void write_flow_matrix<Arc, Cap>(const flow_network&, const residual_graph<Arc, Cap>&, \
                                            int, flow_result*);
MATCHFLOW_RESIDUAL_GRAPHS(MATCHFLOW_WRITE_FLOW_MATRIX)
#undef MATCHFLOW_WRITE_FLOW_MATRIX

}  // namespace detail
}  // namespace matchflow

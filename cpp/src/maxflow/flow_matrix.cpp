// SciPy's flow matrix from per-arc flows: the antisymmetric CSR matrix
// F(u, v) = f(u, v) - f(v, u) on pattern(A) + pattern(A^T), explicit zeros
// kept, that scipy.sparse.csgraph.maximum_flow returns.
//
// Parallel by rows.  Row u's entries are its out-arcs (v, +f) and its
// in-arcs (w, -f), the latter read from a transpose built by an atomic
// counting sort; each row gathers both into a thread-local buffer, sorts by
// column and sums equal columns (parallel arcs, and an arc against its
// reverse; a self-loop meets itself and gives 0).  Rows are merged into
// scratch segments at their upper-bound offsets ptr[u] + in_ptr[u], then
// copied to their final offsets once the counts are prefix-summed.
#include <algorithm>
#include <utility>
#include <vector>

#include "../openmp.hpp"
#include "matchflow/maxflow.hpp"

namespace matchflow {
namespace {

using entry = std::pair<vertex_t, capacity_t>;  // (column, signed flow)

struct transpose {
  std::vector<offset_t> ptr;     // n + 1: in-arcs of v are [ptr[v], ptr[v+1])
  std::vector<vertex_t> tail;
  std::vector<capacity_t> flow;
};

transpose build_transpose(const flow_network& net, const capacity_t* arc_flow, int team) {
  const vertex_t n = net.n;
  transpose t;
  t.ptr.assign(std::size_t(n) + 1, 0);
  offset_t* count = t.ptr.data() + 1;
#pragma omp parallel for num_threads(team) schedule(static)
  for (offset_t a = 0; a < net.n_arcs(); ++a) {
#pragma omp atomic
    ++count[net.heads[a]];
  }
  for (vertex_t v = 0; v < n; ++v) t.ptr[std::size_t(v) + 1] += t.ptr[std::size_t(v)];
  t.tail.resize(std::size_t(net.n_arcs()));
  t.flow.resize(std::size_t(net.n_arcs()));
  std::vector<offset_t> cursor(t.ptr.begin(), t.ptr.end() - 1);
#pragma omp parallel for num_threads(team) schedule(dynamic, 1024)
  for (vertex_t u = 0; u < n; ++u) {
    for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) {
      offset_t slot;
#pragma omp atomic capture
      slot = cursor[std::size_t(net.heads[a])]++;
      t.tail[std::size_t(slot)] = u;
      t.flow[std::size_t(slot)] = arc_flow[a];
    }
  }
  return t;
}

void sort_by_column(std::vector<entry>& row) {
  const auto by_column = [](const entry& x, const entry& y) { return x.first < y.first; };
  if (row.size() > 32) {
    std::sort(row.begin(), row.end(), by_column);
    return;
  }
  for (std::size_t i = 1; i < row.size(); ++i) {  // short rows: insertion sort
    const entry x = row[i];
    std::size_t j = i;
    for (; j > 0 && row[j - 1].first > x.first; --j) row[j] = row[j - 1];
    row[j] = x;
  }
}

// Row u's sorted, summed entries written from cols/vals; returns their count.
offset_t merge_row(const flow_network& net, const capacity_t* arc_flow, const transpose& t,
                   vertex_t u, std::vector<entry>& row, vertex_t* cols, capacity_t* vals) {
  row.clear();
  for (offset_t a = net.ptr[u]; a < net.ptr[u + 1]; ++a) row.emplace_back(net.heads[a], arc_flow[a]);
  for (offset_t r = t.ptr[std::size_t(u)]; r < t.ptr[std::size_t(u) + 1]; ++r)
    row.emplace_back(t.tail[std::size_t(r)], -t.flow[std::size_t(r)]);
  sort_by_column(row);
  offset_t k = -1;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (k >= 0 && cols[k] == row[i].first) {
      vals[k] += row[i].second;
    } else {
      ++k;
      cols[k] = row[i].first;
      vals[k] = row[i].second;
    }
  }
  return k + 1;
}

void flow_matrix(const flow_network& net, const capacity_t* arc_flow, int threads,
                 offset_t* indptr, vertex_t* indices, capacity_t* data, offset_t* nnz) {
  const vertex_t n = net.n;
  const int team = detail::team_size(threads);
  const transpose t = build_transpose(net, arc_flow, team);
  const std::size_t bound = 2 * std::size_t(net.n_arcs());
  std::vector<vertex_t> cols(bound);
  std::vector<capacity_t> vals(bound);
  indptr[0] = 0;
#pragma omp parallel num_threads(team)
  {
    std::vector<entry> row;
#pragma omp for schedule(dynamic, 256)
    for (vertex_t u = 0; u < n; ++u) {
      const offset_t base = net.ptr[u] + t.ptr[std::size_t(u)];
      indptr[u + 1] = merge_row(net, arc_flow, t, u, row, cols.data() + base, vals.data() + base);
    }
  }
  for (vertex_t u = 0; u < n; ++u) indptr[u + 1] += indptr[u];
#pragma omp parallel for num_threads(team) schedule(dynamic, 1024)
  for (vertex_t u = 0; u < n; ++u) {
    const offset_t base = net.ptr[u] + t.ptr[std::size_t(u)];
    const offset_t len = indptr[u + 1] - indptr[u];
    std::copy_n(cols.data() + base, len, indices + indptr[u]);
    std::copy_n(vals.data() + base, len, data + indptr[u]);
  }
  *nnz = indptr[n];
}

}  // namespace

status build_flow_matrix(const flow_network& net, const capacity_t* arc_flow, int threads,
                         offset_t* indptr, vertex_t* indices, capacity_t* data,
                         offset_t* nnz) noexcept {
  return guarded([&] {
    flow_matrix(net, arc_flow, threads, indptr, indices, data, nnz);
    return status::ok;
  });
}

}  // namespace matchflow

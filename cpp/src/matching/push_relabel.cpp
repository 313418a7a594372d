// Sequential push-relabel for maximum cardinality bipartite matching.
//
// Paper 000 (Deveci, Kaya, Ucar, Catalyurek, ICPP 2013), section II-B/C,
// after Kaya, Langguth, Manne and Ucar's PR for maximum transversals.
//
// Terms.  Columns are the active side: an *active* column is unmatched and
// may still reach an unmatched row.  psi(.) are the labels (distance lower
// bounds to an unmatched row in the alternating graph); psi = m + n means
// "unreachable", such a vertex is never looked at again.
//
// Push (the "double push" of section II-B): active column v takes the row u
// of minimum label among its neighbours.  If psi(u) < m + n, v is matched to
// u, u's previous column (if any) becomes active, and the labels are raised:
// psi(v) = psi(u) + 1, psi(u) = psi(u) + 2.  Otherwise v is dropped.
//
// Global relabeling (Algorithm 2): a BFS from all unmatched rows through the
// alternating graph sets every label to its exact distance; unreached
// vertices get m + n.  Done at the start and after every k * (m + n) pushes
// (k = 0.5 by default, as paper 000 uses for its PR baseline).
//
// Active columns are processed FIFO.  Complexity O(n * tau) in theory;
// with global relabeling it is fast in practice.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "matching_cpu.hpp"

namespace matchflow::detail {
namespace {

constexpr double default_relabel_k = 0.5;

struct pr_state {
  const bipartite_view& g;
  vertex_t* col4row;
  vertex_t* row4col;
  std::int64_t infinity;            // m + n
  std::vector<std::int64_t> row_label;
  std::vector<std::int64_t> col_label;
  std::vector<vertex_t> queue;      // BFS scratch
};

/// Algorithm 2 of paper 000: exact labels by BFS from the unmatched rows.
void global_relabel(pr_state& s) {
  const auto& g = s.g;
  std::fill(s.row_label.begin(), s.row_label.end(), s.infinity);
  std::fill(s.col_label.begin(), s.col_label.end(), s.infinity);
  s.queue.clear();
  for (vertex_t r = 0; r < g.n_rows(); ++r) {
    if (s.col4row[r] == -1) {
      s.row_label[r] = 0;
      s.queue.push_back(r);
    }
  }
  for (std::size_t head = 0; head < s.queue.size(); ++head) {
    const vertex_t r = s.queue[head];
    const std::int64_t next = s.row_label[r] + 1;
    for (offset_t e = g.rows.ptr[r]; e < g.rows.ptr[r + 1]; ++e) {
      const vertex_t c = g.rows.adj[e];
      if (s.col_label[c] != s.infinity) continue;
      s.col_label[c] = next;
      const vertex_t mate = s.row4col[c];
      if (mate != -1 && s.row_label[mate] == s.infinity) {
        s.row_label[mate] = next + 1;
        s.queue.push_back(mate);
      }
    }
  }
}

}  // namespace

void push_relabel(const bipartite_view& g, double relabel_k, vertex_t* col4row,
                  vertex_t* row4col, matching_stats* stats) {
  const std::int64_t m = g.n_rows(), n = g.n_cols();
  pr_state s{g, col4row, row4col, m + n, std::vector<std::int64_t>(m),
             std::vector<std::int64_t>(n), {}};
  const double k = relabel_k >= 0 ? relabel_k : default_relabel_k;
  const std::int64_t relabel_period = std::max<std::int64_t>(1, std::int64_t(k * double(m + n)));

  global_relabel(s);
  ++stats->global_relabels;
  std::deque<vertex_t> active;
  for (vertex_t c = 0; c < n; ++c) {
    if (row4col[c] == -1 && s.col_label[c] < s.infinity) active.push_back(c);
  }

  std::int64_t pushes_since_relabel = 0;
  while (!active.empty()) {
    if (pushes_since_relabel >= relabel_period) {
      global_relabel(s);
      ++stats->global_relabels;
      pushes_since_relabel = 0;
    }
    const vertex_t v = active.front();
    active.pop_front();
    if (s.col_label[v] >= s.infinity) continue;  // unreachable: dropped for good
    // Row of minimum label among v's neighbours.
    vertex_t best = -1;
    std::int64_t best_label = s.infinity;
    for (offset_t e = g.cols.ptr[v]; e < g.cols.ptr[v + 1]; ++e) {
      const vertex_t u = g.cols.adj[e];
      if (s.row_label[u] < best_label) {
        best_label = s.row_label[u];
        best = u;
        if (best_label == s.col_label[v] - 1) break;  // admissible: cannot do better
      }
    }
    if (best == -1) {  // every neighbour unreachable
      s.col_label[v] = s.infinity;
      continue;
    }
    // Double push: v takes best; best's old column becomes active.
    const vertex_t previous = col4row[best];
    col4row[best] = v;
    row4col[v] = best;
    s.col_label[v] = best_label + 1;
    s.row_label[best] = best_label + 2;
    ++stats->pushes;
    ++pushes_since_relabel;
    if (previous != -1) {
      row4col[previous] = -1;
      active.push_back(previous);
    }
  }
}

}  // namespace matchflow::detail

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
#include <limits>
#include <vector>

#include "matching_cpu.hpp"

namespace matchflow::detail {
namespace {

constexpr double default_relabel_k = 0.5;

// Labels never exceed m + n + 1: int32 unless m + n is that large (then
// int64).  Half the label traffic of int64 labels, which are what the
// pushes' random accesses read.
template <typename label_t>
struct pr_state {
  const bipartite_view& g;
  vertex_t* col4row;
  vertex_t* row4col;
  label_t infinity;  // m + n
  std::vector<label_t> row_label;
  std::vector<label_t> col_label;
  std::vector<vertex_t> queue;  // BFS scratch
};

/// FIFO of active columns.  A column is in it at most once (it is queued
/// only while unmatched, and leaves before it is matched), so a ring of
/// n + 1 slots never overflows.
class ring {
 public:
  explicit ring(std::size_t capacity) : slots_(capacity + 1) {}
  bool empty() const { return head_ == tail_; }
  void push(vertex_t v) {
    slots_[tail_] = v;
    if (++tail_ == slots_.size()) tail_ = 0;
  }
  vertex_t pop() {
    const vertex_t v = slots_[head_];
    if (++head_ == slots_.size()) head_ = 0;
    return v;
  }

 private:
  std::vector<vertex_t> slots_;
  std::size_t head_ = 0, tail_ = 0;
};

/// Algorithm 2 of paper 000: exact labels by BFS from the unmatched rows.
template <typename label_t>
void global_relabel(pr_state<label_t>& s) {
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
    const label_t next = s.row_label[r] + 1;
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

template <typename label_t>
void run(const bipartite_view& g, double relabel_k, vertex_t* col4row, vertex_t* row4col,
         matching_stats* stats) {
  const std::int64_t m = g.n_rows(), n = g.n_cols();
  pr_state<label_t> s{g,
                      col4row,
                      row4col,
                      label_t(m + n),
                      std::vector<label_t>(std::size_t(m)),
                      std::vector<label_t>(std::size_t(n)),
                      {}};
  const double k = relabel_k >= 0 ? relabel_k : default_relabel_k;
  const std::int64_t relabel_period = std::max<std::int64_t>(1, std::int64_t(k * double(m + n)));

  global_relabel(s);
  ++stats->global_relabels;
  ring active(static_cast<std::size_t>(n));
  for (vertex_t c = 0; c < n; ++c) {
    if (row4col[c] == -1 && s.col_label[c] < s.infinity) active.push(c);
  }

  std::int64_t pushes_since_relabel = 0;
  while (!active.empty()) {
    if (pushes_since_relabel >= relabel_period) {
      global_relabel(s);
      ++stats->global_relabels;
      pushes_since_relabel = 0;
    }
    const vertex_t v = active.pop();
    if (s.col_label[v] >= s.infinity) continue;  // unreachable: dropped for good
    // Row of minimum label among v's neighbours.
    vertex_t best = -1;
    label_t best_label = s.infinity;
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
      active.push(previous);
    }
  }
}

}  // namespace

void push_relabel(const bipartite_view& g, double relabel_k, vertex_t* col4row, vertex_t* row4col,
                  matching_stats* stats) {
  const std::int64_t labels = std::int64_t(g.n_rows()) + g.n_cols() + 2;
  if (labels <= std::numeric_limits<std::int32_t>::max()) {
    run<std::int32_t>(g, relabel_k, col4row, row4col, stats);
  } else {
    run<std::int64_t>(g, relabel_k, col4row, row4col, stats);
  }
}

}  // namespace matchflow::detail

// An indexed 4-ary min-heap of columns for Dijkstra over sparse rows: the
// searches of "sparse-sap" (sparse_shortest_path.cpp) and the tightest
// scaling duals of weighted transversals (preprocess/weighted_transversal.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace matchflow::detail {

/// An indexed 4-ary min-heap of columns keyed by their tentative distance,
/// with decrease-key, so that it never holds more than one entry per column
/// (a lazy heap held one per decrease: several times more, and slower).
/// pos[j]: column j's slot, or `absent`, or `finalised` once popped.
template <class T>
struct column_heap {
  static constexpr std::int32_t absent = -1;
  static constexpr std::int32_t finalised = -2;
  struct item {
    T key;
    std::int32_t col;
  };
  std::vector<item> items;
  std::vector<std::int32_t> pos;

  explicit column_heap(std::int64_t n_cols) : pos(n_cols, absent) {}

  void place(std::size_t k, const item& it) {
    items[k] = it;
    pos[it.col] = static_cast<std::int32_t>(k);
  }
  void sift_up(std::size_t k, item it) {
    while (k > 0) {
      const std::size_t parent = (k - 1) / 4;
      if (!(it.key < items[parent].key)) break;
      place(k, items[parent]);
      k = parent;
    }
    place(k, it);
  }
  /// Inserts column j at key d, or lowers its key to d.
  void push_or_decrease(std::int32_t j, T d) {
    if (pos[j] == absent) {
      items.push_back({d, j});
      sift_up(items.size() - 1, {d, j});
    } else {
      sift_up(static_cast<std::size_t>(pos[j]), {d, j});
    }
  }
  item pop() {
    const item top = items.front();
    pos[top.col] = finalised;
    const item last = items.back();
    items.pop_back();
    const std::size_t n = items.size();
    if (n > 0) {
      std::size_t k = 0;
      for (;;) {
        const std::size_t first = 4 * k + 1;
        if (first >= n) break;
        std::size_t best = first;
        const std::size_t end = std::min(first + 4, n);
        for (std::size_t c = first + 1; c < end; ++c) {
          if (items[c].key < items[best].key) best = c;
        }
        if (!(items[best].key < last.key)) break;
        place(k, items[best]);
        k = best;
      }
      place(k, last);
    }
    return top;
  }
};

}  // namespace matchflow::detail

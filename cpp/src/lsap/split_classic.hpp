// The row split's CPU reference (split_classic.cpp), behind
// solve_lsap_split(..., rows = true), and the path walk both splits'
// references share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "matchflow/lsap.hpp"

namespace matchflow {

/// A forbidden entry's cost: +inf for floats, the largest integer else.
template <class T>
constexpr T split_inf() {
  return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                     : std::numeric_limits<T>::max();
}

/// Both references' answer: col4row, u and v copied out.
template <class T>
void write_answer(const std::vector<std::int64_t>& ar, const std::vector<T>& u_in,
                  const std::vector<T>& v_in, std::int64_t* col4row, T* u, T* v) {
  std::copy(ar.begin(), ar.end(), col4row);
  std::copy(u_in.begin(), u_in.end(), u);
  std::copy(v_in.begin(), v_in.end(), v);
}

/// Algorithm 6 as both splits' references run it: each root with a
/// claimed path (its reverse column, that column's parent row) flips
/// col4row / row4col along the path, a row's `pr` naming the column it
/// joined through and `parent` the row that reached that column.  Returns
/// the roots without a path; counts the paths in st.
inline std::vector<std::int64_t> augment_claimed(
    const std::vector<std::int64_t>& roots,
    const std::vector<std::pair<std::int64_t, std::int64_t>>& claim,
    const std::vector<std::int64_t>& pr, const std::vector<std::int64_t>& parent,
    std::vector<std::int64_t>& ar, std::vector<std::int64_t>& ac, lsap_stats& st) {
  constexpr std::int64_t none = -1;
  std::vector<std::int64_t> left;
  std::int64_t paths = 0;
  for (std::int64_t r : roots) {
    if (claim[r].first == none) {
      left.push_back(r);
      continue;
    }
    auto [col, row] = claim[r];
    while (true) {
      const std::int64_t joined_by = pr[row];
      ar[row] = col;
      ac[col] = row;
      if (joined_by == none) break;
      col = joined_by;
      row = parent[row];
    }
    ++paths;
  }
  st.augmenting_paths += paths;
  if (st.paths_per_iteration) st.paths_per_iteration[st.iterations - 1] = paths;
  return left;
}

/// solve_lsap_split's contract; false when no finite dual step exists
/// (infeasible).  Instantiated for the four cost types.
template <class T, class In>
bool solve_split_classic(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                         std::int64_t* col4row, T* u, T* v, lsap_stats& st);

}  // namespace matchflow

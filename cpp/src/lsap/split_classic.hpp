// The row split's CPU reference (split_classic.cpp), behind
// solve_lsap_split(..., rows = true).
#pragma once

#include <cstdint>

#include "matchflow/lsap.hpp"

namespace matchflow {

/// solve_lsap_split's contract; false when no finite dual step exists
/// (infeasible).  Instantiated for the four cost types.
template <class T, class In>
bool solve_split_classic(const In* cost, std::int64_t n_rows, std::int64_t n_cols, int parts,
                         std::int64_t* col4row, T* u, T* v, lsap_stats& st);

}  // namespace matchflow

// The least and greatest of an array of ids in one pass, compiled for AVX2
// and the baseline (validate.cpp): the validation's range check and the
// residual graph build's head windows.
#pragma once

#include <cstdint>

#include "matchflow/graph.hpp"

namespace matchflow::detail {

struct id_bounds {
  std::int64_t lo, hi;
};

/// The least and greatest of ids[0, count); for count == 0, lo is the
/// type's maximum and hi its minimum.
id_bounds bounds_of(const std::int32_t* ids, offset_t count);
id_bounds bounds_of(const std::int64_t* ids, offset_t count);

}  // namespace matchflow::detail

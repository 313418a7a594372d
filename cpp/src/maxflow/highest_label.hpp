// hi_pr's global-update constants, shared by pr (push_relabel.cpp) and ppr
// (parallel_push_relabel.cpp), which both count relabel work as hi_pr does.
#pragma once

#include <cstdint>

namespace matchflow::detail {

/// hi_pr's default global-update frequency (GLOB_UPDT_FREQ): a global
/// relabel once the relabel work exceeds (alpha * n + m) / freq.
constexpr double default_global_update_freq = 0.5;
constexpr double global_update_alpha = 6.0;  ///< hi_pr's ALPHA
constexpr std::int64_t relabel_work_beta = 12;  ///< hi_pr's BETA: fixed work per relabel

}  // namespace matchflow::detail

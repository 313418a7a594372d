// Structural validation of sparse patterns, shared by every backend, and the
// O(nnz) check of a flow network's capacities.
//
// The Python layer does the O(1) checks (shape, lengths, ptr[0] == 0) with
// SciPy's own messages and calls these for the O(nnz) pass, which SciPy's
// check_format(full_check=True) does in three sequential NumPy reductions.
#pragma once
#include <cstdint>

#include "matchflow/graph.hpp"
#include "matchflow/status.hpp"

namespace matchflow {

/// Checks a compressed pattern (CSR or CSC): `ptr` (length n_major + 1) is
/// non-decreasing and every id in `ids[0, nnz)` lies in [0, n_minor).
/// Returns invalid_input with SciPy's message for the first violated rule
/// in SciPy's order ("indices must be < N", "indices must be >= 0",
/// "indptr must be a non-decreasing sequence"); ok otherwise.
///
/// @param threads  OpenMP threads; 0 = the OpenMP default
status check_compressed(const offset_t* ptr, std::int64_t n_major, const std::int32_t* ids,
                        offset_t nnz, std::int64_t n_minor, int threads) noexcept;
status check_compressed(const offset_t* ptr, std::int64_t n_major, const std::int64_t* ids,
                        offset_t nnz, std::int64_t n_minor, int threads) noexcept;

/// out[i] = in[i] for i in [0, count): SciPy's int32 offsets widened to the
/// core's, on the team (the fresh array's page faults too: one thread took
/// 2 ms of a 2048^2 segmentation_grid's validation on the dev host).
///
/// @param threads  OpenMP threads; 0 = the OpenMP default
void widen_offsets(const std::int32_t* in, std::int64_t count, offset_t* out, int threads) noexcept;

/// Index of the first negative entry of `values[0, n)`, or -1: one parallel
/// pass (the capacity check of a flow network; NumPy's min is sequential).
///
/// @param threads  OpenMP threads; 0 = the OpenMP default
std::int64_t first_negative(const std::int64_t* values, std::int64_t n, int threads) noexcept;
std::int64_t first_negative(const std::int32_t* values, std::int64_t n, int threads) noexcept;

/// The exact sum of the non-negative `caps[k]` over k in [0, n) with
/// `heads[k] != skip` (a source's capacity: its self-loops carry no flow),
/// as high * 2^64 + low: n * 2^63 may pass int64.  One parallel pass.
///
/// @param threads  OpenMP threads; 0 = the OpenMP default
void capacity_sum(const std::int64_t* caps, const std::int32_t* heads, std::int64_t n,
                  std::int32_t skip, int threads, std::uint64_t* high, std::uint64_t* low) noexcept;
void capacity_sum(const std::int32_t* caps, const std::int32_t* heads, std::int64_t n,
                  std::int32_t skip, int threads, std::uint64_t* high, std::uint64_t* low) noexcept;

}  // namespace matchflow

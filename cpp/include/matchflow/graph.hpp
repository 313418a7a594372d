// Non-owning views of a bipartite graph given by its sparse pattern.
//
// Rows and columns are the two vertex sets; an edge (i, j) is a stored entry
// of the matrix, explicit zeros included.  Vertex ids are int32, offsets
// int64, so graphs with more than 2^31 edges are representable.  The Python
// layer has already checked the arrays (monotone offsets, ids in range);
// duplicate entries and unsorted ids are allowed and every algorithm must
// tolerate them (SciPy crashes on duplicates: scipy#26160).
#pragma once

#include <cstdint>

namespace matchflow {

using vertex_t = std::int32_t;
using offset_t = std::int64_t;

/// Compressed adjacency of one side: vertex v's neighbours are
/// adj[ptr[v] .. ptr[v+1]).
struct adjacency_view {
  vertex_t n = 0;                 ///< number of vertices on this side
  const offset_t* ptr = nullptr;  ///< length n + 1
  const vertex_t* adj = nullptr;  ///< length ptr[n]
  offset_t nnz() const { return ptr[n]; }
};

/// Both orientations of the same bipartite graph: `rows` is the CSR pattern
/// (row -> columns), `cols` the CSC pattern (column -> rows).  Push-relabel
/// needs both (pushes go from columns, global relabeling searches from rows:
/// paper 000, Algorithms 2 and 5).  Callers may leave cols.ptr null (with
/// cols.n set): solve_matching then builds the transpose itself, and only
/// when the initial matching is not already perfect.
struct bipartite_view {
  adjacency_view rows;  ///< row i -> its columns
  adjacency_view cols;  ///< column j -> its rows (ptr may be null: see above)
  vertex_t n_rows() const { return rows.n; }
  vertex_t n_cols() const { return cols.n; }
  bool has_cols() const { return cols.ptr != nullptr; }
};

/// The one-sided searches (P-DBFS on the CPU, APFB/APsB on the GPU) are
/// symmetric in the two sides and read only the searching side's adjacency,
/// so they search from the rows over the CSR as given (no transpose) unless
/// this holds: they start from the unmatched vertices of their side, and a
/// graph over twice as tall as wide has at least n_rows - n_cols of them on
/// the row side, all searching in the first phase.
inline bool too_tall_to_search_rows(vertex_t n_rows, vertex_t n_cols) {
  return n_rows / 2 > n_cols;
}

/// A CSR pattern as the caller's arrays hold it: offsets and ids of 4 or 8
/// bytes each, not widened, in the caller's GPU memory (`on_device`) or in
/// host memory.  Only the shape is checked by the caller; the GPU entry
/// points check the contents on the device (cuda/src/matching/
/// graph_upload_kernels.cuh) while converting them to the core's int64
/// offsets and int32 ids, so that no pass over the arrays runs on the host.
struct raw_csr {
  vertex_t n_rows = 0, n_cols = 0;
  std::int64_t nnz = 0;           ///< length of `indices`; indptr[n_rows] must equal it
  const void* indptr = nullptr;   ///< n_rows + 1 entries of `offset_bytes` each
  const void* indices = nullptr;  ///< nnz entries of `index_bytes` each
  int offset_bytes = 8;           ///< 4 or 8
  int index_bytes = 4;            ///< 4 or 8
  bool on_device = true;          ///< GPU memory (else host memory)
};

}  // namespace matchflow

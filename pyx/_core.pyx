# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Marshalling between NumPy arrays and the C++ core.

No validation or policy lives here: the Python layer has already checked and
converted every argument, and the core decides what looks like policy below
(whether a result gets a page-locked block, `result_array`; which small
matrices its shortest-path solver declines, `lsap_shortest_path`).  Each
function turns arrays into pointers, releases the GIL around the call, and
maps the returned status to an exception (lsap_shortest_path: to None, so
that the Python layer's full path answers).
"""
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)

cimport numpy as cnp
from libcpp.vector cimport vector
import numpy as np

from matchflow cimport *

cnp.import_array()

_STATUS_EXCEPTIONS = {
    <int>status.infeasible: ValueError,
    <int>status.invalid_input: ValueError,
    <int>status.overflow: OverflowError,
    <int>status.out_of_memory: MemoryError,
    <int>status.cuda_unavailable: RuntimeError,
    <int>status.cuda_error: RuntimeError,
}


cdef int _check(status st) except -1:
    """Raise the exception that belongs to a non-ok status."""
    if st == status.ok:
        return 0
    raise _STATUS_EXCEPTIONS[<int>st](last_error().decode("utf-8", "replace"))


ctypedef fused element_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t
    float
    double


# Capacities as the flow validation and methods take them: int32 as SciPy's
# arrays hold them, else int64.
ctypedef fused capacity_element_t:
    int32_t
    int64_t


# The core takes NULL for an empty array (where &a[0] would raise IndexError).
cdef inline const element_t* _data_or_null(const element_t[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] > 0 else NULL


cdef inline element_t* _mutable_data_or_null(element_t[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] > 0 else NULL


# Method names as the Python layer spells them -> the core's enumerators.
MATCHING_METHODS = {
    "pr": <int>matching_method.pr, "pdbfs": <int>matching_method.pdbfs,
    "gpu-pr": <int>matching_method.gpu_pr, "gpu-apfb": <int>matching_method.gpu_apfb,
    "gpu-apsb": <int>matching_method.gpu_apsb, "msbfs-graft": <int>matching_method.msbfs_graft,
}
MATCHING_INITS = {"none": <int>matching_init.none, "cheap": <int>matching_init.cheap,
                  "karp-sipser": <int>matching_init.karp_sipser}
LSAP_METHODS = {
    "omp-tree": <int>lsap_method.omp_tree, "gpu-tree": <int>lsap_method.gpu_tree,
    "gpu-classic": <int>lsap_method.gpu_classic, "gpu-auction": <int>lsap_method.gpu_auction,
}
BATCHED_LSAP_METHODS = {"omp-sap": <int>batched_lsap_method.omp_sap,
                        "gpu-sap": <int>batched_lsap_method.gpu_sap}
FLOW_METHODS = {"pr": <int>flow_method.pr, "ppr": <int>flow_method.ppr,
                "gpu-pr": <int>flow_method.gpu_pr, "bk": <int>flow_method.bk}


# ---- build and machine facts ------------------------------------------------

def build_info():
    """Compile-time and run-time facts about the core."""
    return {
        "cuda_compiled": bool(cuda_compiled()),
        "cuda_architectures": cuda_architectures().decode(),
        "openmp_compiled": bool(openmp_compiled()),
        "asserts_compiled": bool(asserts_compiled()),
        "openmp_max_threads": openmp_max_threads(),
    }


def device_count():
    """Usable CUDA devices (0 without CUDA, driver or device)."""
    cdef int n
    with nogil:
        n = cuda_device_count()
    return n


def release_host_cache():
    """Frees the host memory the core keeps between calls; returns its bytes."""
    cdef size_t freed
    with nogil:
        freed = free_host_cache()
    return freed


cdef class _PinnedBlock:
    """A page-locked block of the core's (take_pinned_result), exposed as a
    writable byte buffer and given back when the last array on it is freed."""
    cdef void* data
    cdef size_t nbytes
    cdef Py_ssize_t shape[1]

    def __getbuffer__(self, Py_buffer* view, int flags):
        self.shape[0] = <Py_ssize_t>self.nbytes
        view.buf = self.data
        view.obj = self
        view.len = <Py_ssize_t>self.nbytes
        view.readonly = 0
        view.itemsize = 1
        view.format = b"B"
        view.ndim = 1
        view.shape = self.shape
        view.strides = NULL
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __dealloc__(self):
        if self.data != NULL:
            give_back_pinned_result(self.data, self.nbytes)


def result_array(Py_ssize_t n, dtype):
    """np.empty(n, dtype) for a result a GPU method downloads into: in a
    page-locked block of the core's when it has one for it (the download is
    then one DMA), else pageable."""
    dtype = np.dtype(dtype)
    cdef size_t nbytes = <size_t>n * <size_t>dtype.itemsize
    cdef void* data
    with nogil:
        data = take_pinned_result(&nbytes)
    if data == NULL:
        return np.empty(n, dtype=dtype)
    cdef _PinnedBlock block = _PinnedBlock.__new__(_PinnedBlock)
    block.data = data
    block.nbytes = nbytes
    return np.frombuffer(block, dtype=dtype, count=n)


def get_device_info(int device):
    cdef device_info info
    cdef status st
    with nogil:
        st = cuda_get_device_info(device, &info)
    _check(st)
    return {
        "name": info.name.decode("utf-8", "replace"),
        "total_memory": info.total_memory,
        "free_memory": info.free_memory,
        "compute_capability": (info.major, info.minor),
        "multiprocessors": info.multiprocessors,
    }


# ---- matching -----------------------------------------------------------------

cdef bipartite_view _bipartite(const int64_t[::1] row_ptr, const int32_t[::1] row_adj,
                               int n_cols):
    """The CSR pattern; the core builds the column orientation when it needs it."""
    cdef bipartite_view g
    g.rows.n = row_ptr.shape[0] - 1
    g.rows.ptr = _data_or_null(row_ptr)
    g.rows.adj = _data_or_null(row_adj)
    g.cols.n = n_cols
    g.cols.ptr = NULL
    g.cols.adj = NULL
    return g


ctypedef fused index_t:
    int32_t
    int64_t


def validate_compressed(const int64_t[::1] ptr, const index_t[::1] ids, int64_t n_minor):
    """Structural check of a CSR/CSC pattern (ValueError with SciPy's message)."""
    cdef status st
    with nogil:
        st = check_compressed(_data_or_null(ptr), ptr.shape[0] - 1, _data_or_null(ids),
                              ids.shape[0], n_minor, 0)
    _check(st)


def widened_offsets(const int32_t[::1] values):
    """The values as a new int64 array (one parallel pass)."""
    out = np.empty(values.shape[0], dtype=np.int64)
    cdef int64_t[::1] wide = out
    with nogil:
        widen_offsets(_data_or_null(values), values.shape[0], _mutable_data_or_null(wide), 0)
    return out


def find_negative(const capacity_element_t[::1] values):
    """Index of the first negative value, or -1 (one parallel pass)."""
    cdef int64_t found
    with nogil:
        found = first_negative(_data_or_null(values), values.shape[0], 0)
    return found


def sum_capacities(const capacity_element_t[::1] caps, const int32_t[::1] heads, int32_t skip):
    """Exact sum of the non-negative caps[k] with heads[k] != skip (a Python int;
    one parallel pass)."""
    cdef uint64_t high = 0, low = 0
    with nogil:
        capacity_sum(_data_or_null(caps), _data_or_null(heads), caps.shape[0], skip, 0,
                     &high, &low)
    return (int(high) << 64) | int(low)


cdef matching_options _matching_options(int init, int threads, double relabel_k,
                                        int bfs_kernel, bint skewed_degrees, int thread_layout,
                                        int device, bint paper_structure):
    cdef matching_options opt
    opt.threads = threads
    opt.init = <matching_init>init
    opt.relabel_k = relabel_k
    opt.bfs_kernel = bfs_kernel
    opt.skewed_degrees = skewed_degrees
    opt.thread_layout = thread_layout
    opt.device = device
    opt.paper_structure = paper_structure
    return opt


def matching(const int64_t[::1] row_ptr, const int32_t[::1] row_adj,
             int n_cols, int method, int init, int threads, double relabel_k,
             int bfs_kernel, bint skewed_degrees, int thread_layout, int device,
             bint paper_structure):
    """Maximum matching; returns (col4row, row4col, stats)."""
    cdef bipartite_view g = _bipartite(row_ptr, row_adj, n_cols)
    cdef matching_options opt = _matching_options(init, threads, relabel_k, bfs_kernel,
                                                  skewed_degrees, thread_layout, device,
                                                  paper_structure)
    col4row = np.empty(g.rows.n, dtype=np.int32)
    row4col = np.empty(g.cols.n, dtype=np.int32)
    cdef int32_t* c4r = _mutable_data_or_null[int32_t](col4row)
    cdef int32_t* r4c = _mutable_data_or_null[int32_t](row4col)
    cdef matching_stats stats
    cdef status st
    with nogil:
        st = solve_matching(g, <matching_method>method, opt, c4r, r4c, &stats)
    _check(st)
    return col4row, row4col, stats


def matching_raw(uintptr_t indptr, int offset_bytes, uintptr_t indices, int index_bytes,
                 int64_t nnz, int n_rows, int n_cols, bint on_device, int method, int init,
                 double relabel_k, int bfs_kernel, bint skewed_degrees, int thread_layout,
                 int device, bint paper_structure, uintptr_t stream, uintptr_t col4row,
                 uintptr_t row4col):
    """Maximum matching (GPU methods) of a CSR given by addresses of the
    caller's arrays, as they are (4- or 8-byte offsets and ids), in GPU memory
    (`on_device`: work ordered on `stream`) or host memory; the mates are
    written to the arrays at col4row / row4col, in the same memory.  The
    caller keeps every array alive.  Returns the stats."""
    cdef raw_csr g
    g.n_rows = n_rows
    g.n_cols = n_cols
    g.nnz = nnz
    g.indptr = <const void*>indptr
    g.indices = <const void*>indices
    g.offset_bytes = offset_bytes
    g.index_bytes = index_bytes
    g.on_device = on_device
    cdef matching_options opt = _matching_options(init, 0, relabel_k, bfs_kernel,
                                                  skewed_degrees, thread_layout, device,
                                                  paper_structure)
    cdef matching_stats stats
    cdef status st
    with nogil:
        st = solve_matching_raw(g, <matching_method>method, opt, stream,
                                <int32_t*>col4row, <int32_t*>row4col, &stats)
    _check(st)
    return stats


def empty_sampled_rows(uintptr_t indptr, int offset_bytes, int n_rows, int64_t step, int device,
                       uintptr_t stream):
    """How many of rows 0, step, 2 step, ... of a CSR in GPU memory are
    empty, counted on `stream`."""
    cdef raw_csr g
    g.n_rows = n_rows
    g.indptr = <const void*>indptr
    g.offset_bytes = offset_bytes
    g.on_device = True
    cdef int64_t empty = 0
    cdef status st
    with nogil:
        st = count_empty_sampled_rows(g, step, device, stream, &empty)
    _check(st)
    return empty


# ---- maximum flow ---------------------------------------------------------------

cdef flow_network _flow_network(const int64_t[::1] ptr, const int32_t[::1] heads,
                                const capacity_element_t[::1] caps, int source, int sink):
    """The core's view of a checked network (no copy)."""
    cdef flow_network net
    net.n = ptr.shape[0] - 1
    net.ptr = _data_or_null(ptr)
    net.heads = _data_or_null(heads)
    if capacity_element_t is int32_t:
        net.caps32 = _data_or_null(caps)
    else:
        net.caps = _data_or_null(caps)
    net.source = source
    net.sink = sink
    return net


def maxflow(const int64_t[::1] ptr, const int32_t[::1] heads,
            const capacity_element_t[::1] caps, int source, int sink, int method, int threads,
            int device, bint return_flow, double relabel_freq, bint paper_variant,
            bint want_matrix=False):
    """Maximum flow; returns (value, arc_flow or None, source_side (bool),
    stats, matrix).  matrix: SciPy's flow matrix as flow_matrix() returns
    it when `want_matrix` and the method built it where it ran (the CPU
    methods always; gpu-pr when the device has the memory), else None;
    arc_flow: the flow on every arc when `return_flow` and no matrix was
    built, else None."""
    cdef flow_network net = _flow_network(ptr, heads, caps, source, sink)
    cdef flow_options opt
    opt.threads = threads
    opt.device = device
    opt.return_flow = return_flow
    opt.relabel_freq = relabel_freq
    opt.paper_variant = paper_variant
    # Every code that returns arc flows writes all of them; where the flow
    # matrix is built instead they stay unwritten (never paged in) and are
    # not returned (zeroing them cost milliseconds: benchmarks/NOTES.md,
    # "gpu-pr's flow matrix").
    arc_flow = np.empty(heads.shape[0], dtype=np.int64) if return_flow else None
    source_side = np.zeros(net.n, dtype=np.bool_)
    cdef flow_result result
    result.arc_flow = _mutable_data_or_null[int64_t](arc_flow) if return_flow else NULL
    result.source_side = _mutable_data_or_null[uint8_t](source_side.view(np.uint8))
    matrix = _matrix_buffers(net.n, heads.shape[0]) if return_flow and want_matrix else None
    if matrix is not None:
        result.matrix_indptr = <int64_t*>cnp.PyArray_DATA(matrix[0])
        result.matrix_indices = <int32_t*>cnp.PyArray_DATA(matrix[1])
        result.matrix_data = <int64_t*>cnp.PyArray_DATA(matrix[2])
    cdef flow_stats stats
    cdef status st
    with nogil:
        st = solve_maxflow(net, <flow_method>method, opt, &result, &stats)
    _check(st)
    if result.matrix_nnz < 0:
        matrix = None
    elif matrix is not None:
        matrix = _shrink_matrix(matrix, result.matrix_nnz)
        arc_flow = None
    return result.value, arc_flow, source_side, stats, matrix


cdef tuple _matrix_buffers(Py_ssize_t n, Py_ssize_t arcs):
    """Buffers for a flow matrix: indptr, and indices / data of the upper
    bound 2 * arcs."""
    return (np.empty(n + 1, dtype=np.int64), np.empty(2 * arcs, dtype=np.int32),
            np.empty(2 * arcs, dtype=np.int64))


cdef tuple _shrink_matrix(tuple matrix, int64_t nnz):
    """The buffers cut to nnz entries in place (realloc: no copy, and the
    untouched tail was never paged in)."""
    indptr, indices, data = matrix
    indices.resize(nnz, refcheck=False)
    data.resize(nnz, refcheck=False)
    return indptr, indices, data


def flow_matrix(const int64_t[::1] ptr, const int32_t[::1] heads, const int64_t[::1] arc_flow,
                int threads):
    """SciPy's flow matrix as CSR arrays (int64 indptr, int32 indices, int64 data)."""
    cdef flow_network net
    net.n = ptr.shape[0] - 1
    net.ptr = _data_or_null(ptr)
    net.heads = _data_or_null(heads)
    matrix = _matrix_buffers(net.n, heads.shape[0])
    cdef const int64_t* flow = _data_or_null(arc_flow)
    cdef int64_t* indptr_p = <int64_t*>cnp.PyArray_DATA(matrix[0])
    cdef int32_t* indices_p = <int32_t*>cnp.PyArray_DATA(matrix[1])
    cdef int64_t* data_p = <int64_t*>cnp.PyArray_DATA(matrix[2])
    cdef int64_t nnz = 0
    cdef status st
    with nogil:
        st = build_flow_matrix(net, flow, threads, indptr_p, indices_p, data_p, &nnz)
    _check(st)
    return _shrink_matrix(matrix, nnz)


def maxflow_scipy(const int64_t[::1] ptr, const int32_t[::1] heads,
                  const capacity_element_t[::1] caps, int32_t source, int32_t sink, bint dinic):
    """SciPy's Dinic or Edmonds-Karp (solve_maxflow_scipy): (value,
    source_side, (indptr, indices, data) of SciPy's flow matrix)."""
    cdef flow_network net = _flow_network(ptr, heads, caps, source, sink)
    matrix = _matrix_buffers(net.n, heads.shape[0])
    side = np.empty(net.n, dtype=np.uint8)
    cdef uint8_t* side_p = <uint8_t*>cnp.PyArray_DATA(side)
    cdef int64_t* indptr_p = <int64_t*>cnp.PyArray_DATA(matrix[0])
    cdef int32_t* indices_p = <int32_t*>cnp.PyArray_DATA(matrix[1])
    cdef int64_t* data_p = <int64_t*>cnp.PyArray_DATA(matrix[2])
    cdef int64_t value = 0, nnz = 0
    cdef status st
    with nogil:
        st = solve_maxflow_scipy(net, dinic, &value, side_p, indptr_p, indices_p, data_p, &nnz)
    _check(st)
    return value, side.view(bool), _shrink_matrix(matrix, nnz)


# ---- sparse assignment ----------------------------------------------------------

ctypedef fused sparse_weight:
    double
    int64_t


def lsap_sparse(const int64_t[::1] row_ptr, const int32_t[::1] col_idx,
                const sparse_weight[::1] weight, int64_t n_cols, int threads, int device):
    """Sparse LSAP over a CSR pattern, n_rows <= n_cols; returns (col4row, u, v, stats).

    u and v have the weights' dtype (float64 or int64).  device: the GPU of
    the auction start, -1 for the CPU's.
    """
    cdef int64_t n_rows = row_ptr.shape[0] - 1
    dtype = np.float64 if sparse_weight is double else np.int64
    col4row = np.empty(n_rows, dtype=np.int64)
    u = np.empty(n_rows, dtype=dtype)
    v = np.empty(n_cols, dtype=dtype)
    cdef int64_t* c4r = _mutable_data_or_null[int64_t](col4row)
    cdef sparse_weight* pu = _mutable_data_or_null[sparse_weight](u)
    cdef sparse_weight* pv = _mutable_data_or_null[sparse_weight](v)
    cdef lsap_options opt
    opt.threads = threads
    opt.device = max(device, 0)
    opt.sparse_auction_on_gpu = device >= 0
    cdef sparse_lsap_stats stats
    cdef status st
    with nogil:
        st = solve_lsap_sparse(_data_or_null(row_ptr), _data_or_null(col_idx),
                               _data_or_null(weight), n_rows, n_cols, opt, c4r, pu, pv, &stats)
    _check(st)
    return col4row, u, v, stats


# ---- linear sum assignment ------------------------------------------------------

ctypedef fused lsap_value:
    double
    float
    int64_t
    int32_t


ctypedef fused device_lsap_value:
    double
    float
    int64_t


def lsap_dense(const lsap_value[:, ::1] cost, int method, int threads, int device):
    """Dense LSAP, n_rows <= n_cols; returns (col4row, u, v, stats).

    u and v have the solve's dtype: float64, float32, or int64 for integer
    costs (int64 or int32, which is passed on as it is).
    """
    cdef lsap_options opt
    opt.threads = threads
    opt.device = device
    cdef const lsap_value* c = &cost[0, 0] if cost.shape[0] > 0 and cost.shape[1] > 0 else NULL
    return _lsap_dense(c, cost.shape[0], cost.shape[1], method, opt)


def lsap_split(const lsap_value[:, ::1] cost, int parts, bint rows=False):
    """The multi-GPU splits' CPU reference (solve_lsap_split: rows, CU-CLASS's
    row split; else CU-TREE's column split), n_rows <= n_cols, 0 < parts <=
    LSAP_MAX_PARTS; returns (col4row, u, v, stats) as lsap_dense."""
    cdef lsap_options opt
    cdef const lsap_value* c = &cost[0, 0] if cost.shape[0] > 0 and cost.shape[1] > 0 else NULL
    return _lsap_dense(c, cost.shape[0], cost.shape[1], 0, opt, parts, rows)


def lsap_dense_device(const device_lsap_value[::1] dtype_tag, uintptr_t cost, bint cost_int32,
                      int64_t n_rows, int64_t n_cols, int method, int device, uintptr_t stream,
                      uint64_t max_abs):
    """Dense LSAP of a C-contiguous cost matrix in GPU memory (its address),
    n_rows <= n_cols, already checked, of the dtype of the (empty) array
    `dtype_tag` (float64, float32 or int64: Cython picks the specialization
    by it); int64 costs given as int32 when `cost_int32`.  max_abs: max |cost|
    for the integer overflow bound.  Work ordered on `stream`; returns
    (col4row, u, v, stats) on the host."""
    cdef lsap_options opt
    opt.threads = 0
    opt.device = device
    opt.cost_on_device = True
    opt.stream = stream
    opt.cost_int32 = cost_int32
    opt.cost_max_abs = max_abs
    return _lsap_dense(<const device_lsap_value*>cost, n_rows, n_cols, method, opt)


cdef tuple _lsap_dense(const lsap_value* c, int64_t n_rows, int64_t n_cols, int method,
                       lsap_options opt, int split_parts=0, bint split_rows=False):
    """solve_lsap_dense's marshalling; with split_parts > 0, solve_lsap_split's."""
    if lsap_value is double:
        dtype = np.float64
    elif lsap_value is float:
        dtype = np.float32
    else:
        dtype = np.int64
    col4row = np.empty(n_rows, dtype=np.int64)
    u = np.empty(n_rows, dtype=dtype)
    v = np.empty(n_cols, dtype=dtype)
    cdef int64_t* c4r = _mutable_data_or_null[int64_t](col4row)
    cdef lsap_value* pu = NULL
    cdef lsap_value* pv = NULL
    cdef int64_t* pu_wide = NULL
    cdef int64_t* pv_wide = NULL
    if lsap_value is int32_t:  # int32 costs: int64 duals
        pu_wide = _mutable_data_or_null[int64_t](u)
        pv_wide = _mutable_data_or_null[int64_t](v)
    else:
        pu = _mutable_data_or_null[lsap_value](u)
        pv = _mutable_data_or_null[lsap_value](v)
    paths = np.zeros(n_rows, dtype=np.int64)  # per iteration; iterations <= n_rows
    cdef lsap_stats stats
    stats.paths_per_iteration = _mutable_data_or_null[int64_t](paths)
    cdef status st
    if lsap_value is int32_t:
        with nogil:
            if split_parts > 0:
                st = solve_lsap_split(c, n_rows, n_cols, split_parts, split_rows, c4r, pu_wide,
                                      pv_wide, &stats)
            else:
                st = solve_lsap_dense(c, n_rows, n_cols, <lsap_method>method, opt, c4r,
                                      pu_wide, pv_wide, &stats)
    else:
        with nogil:
            if split_parts > 0:
                st = solve_lsap_split(c, n_rows, n_cols, split_parts, split_rows, c4r, pu, pv,
                                      &stats)
            else:
                st = solve_lsap_dense(c, n_rows, n_cols, <lsap_method>method, opt, c4r, pu,
                                      pv, &stats)
    _check(st)
    return col4row, u, v, _lsap_stats_dict(stats, paths)


cdef dict _lsap_stats_dict(const lsap_stats& stats, paths):
    return {
        "paths_per_iteration": paths[:stats.iterations],
        "narrow_costs": bool(stats.narrow_costs),
        "narrow_cost_bytes": stats.narrow_costs,
        "seconds_init": stats.seconds_init,
        "seconds_solve": stats.seconds_solve,
        "seconds_transfer": stats.seconds_transfer,
        "iterations": stats.iterations,
        "augmenting_paths": stats.augmenting_paths,
        "dual_updates": stats.dual_updates,
        "kernel_launches": stats.kernel_launches,
        "search_steps": stats.search_steps,
        "auction_phases": stats.auction_phases,
        "auction_rounds": stats.auction_rounds,
        "auction_bids": stats.auction_bids,
    }


# ---- multi-GPU assignment (matchflow/multi_gpu_lsap.hpp) ---------------------------

LSAP_MAX_PARTS = lsap_max_parts
_COST_KINDS = {np.dtype(np.int32): cost_kind.int32, np.dtype(np.int64): cost_kind.int64,
               np.dtype(np.float32): cost_kind.float32, np.dtype(np.float64): cost_kind.float64}


cdef class LsapPart:
    """One block of a multi-GPU assignment solve (lsap_part): made with its
    block uploaded, then connected, launched and finished."""
    cdef lsap_part* ptr
    cdef object keep      # the cost array this part reads
    cdef int64_t n_rows, height, width
    cdef object dtype

    def __cinit__(self, cost, uintptr_t device_cost, dtype, int device, int part, int parts,
                  int parts_on_device, int64_t n_rows, int64_t n_cols, int64_t col0,
                  int64_t width, bint complement, double timeout_seconds, int64_t row0=0,
                  int64_t height=-1, bint split_rows=False):
        """cost: the part's height x width block (rows [row0, row0 + height),
        columns [col0, col0 + width); height -1: every row) of a host matrix
        (an ndarray whose rows may be strided, elements contiguous), or None
        with `device_cost` the address of the block in GPU memory.
        split_rows: CU-CLASS's row split (every column), else CU-TREE's
        column split (every row)."""
        cdef lsap_part_config c
        c.device = device
        c.part = part
        c.parts = parts
        c.parts_on_device = parts_on_device
        c.n_rows = n_rows
        c.n_cols = n_cols
        c.col0 = col0
        c.width = width
        c.row0 = row0
        c.height = n_rows if height < 0 else height
        c.split_rows = split_rows
        c.kind = _COST_KINDS[np.dtype(dtype)]
        c.host_cost = NULL
        c.host_stride = 0
        c.device_cost = <const void*>device_cost
        c.complement = complement
        c.timeout_seconds = timeout_seconds
        if cost is not None:
            c.host_cost = <const void*>cnp.PyArray_DATA(cost)
            c.host_stride = cost.strides[0] // cost.itemsize
        self.keep = cost
        self.n_rows = n_rows
        self.height = c.height
        self.width = width
        self.dtype = np.dtype(np.int64) if np.dtype(dtype).kind == "i" else np.dtype(dtype)
        cdef status st
        with nogil:
            st = lsap_part_create(c, &self.ptr)
        _check(st)

    def __dealloc__(self):
        if self.ptr != NULL:
            lsap_part_destroy(self.ptr)

    def ipc_handle(self) -> bytes:
        cdef char handle[64]
        _check(lsap_part_ipc_handle(self.ptr, handle))
        return handle[:64]

    def connect_ipc(self, bytes handles):
        """Connects to the other parts from every part's ipc_handle, in part order."""
        cdef const char* h = handles
        cdef status st
        with nogil:
            st = lsap_part_connect_ipc(self.ptr, h)
        _check(st)

    def launch(self):
        _check(lsap_part_launch(self.ptr))

    def finish(self, bint with_rows):
        """(col4row or None, u of the part's rows or None, v of its columns, stats)."""
        col4row = np.empty(self.n_rows, dtype=np.int64) if with_rows else None
        u = np.empty(self.height, dtype=self.dtype) if with_rows else None
        v = np.empty(self.width, dtype=self.dtype)
        paths = np.zeros(self.n_rows, dtype=np.int64)
        cdef int64_t* c4r = NULL
        cdef void* pu = NULL
        if with_rows:
            c4r = <int64_t*>cnp.PyArray_DATA(col4row)
            pu = cnp.PyArray_DATA(u)
        cdef void* pv = cnp.PyArray_DATA(v)
        cdef lsap_stats stats
        stats.paths_per_iteration = <int64_t*>cnp.PyArray_DATA(paths)
        cdef status st
        with nogil:
            st = lsap_part_finish(self.ptr, c4r, pu, pv, &stats)
        _check(st)
        return col4row, u, v, _lsap_stats_dict(stats, paths)


def connect_lsap_parts(list parts):
    """Connects every part of a solve held by this process (in part order)."""
    cdef vector[lsap_part*] ptrs
    cdef LsapPart p
    for p in parts:
        ptrs.push_back(p.ptr)
    cdef status st
    with nogil:
        st = lsap_parts_connect(ptrs.data(), <int>ptrs.size())
    _check(st)


def lsap_shortest_path(cnp.ndarray cost, bint maximize):
    """(row_ind, col_ind) of SciPy's algorithm on a 2-D array of a native
    real or boolean dtype, any strides; None for any other array, and for
    any status but ok (the full path then gives the error or the exact
    int64 solve).

    Reads the array through the NumPy C API, not a typed memoryview: the
    matrices it is given are so small (down to 1 x 1, where SciPy's whole
    call takes ~0.4 us) that acquiring a buffer would cost more than the
    solve.
    """
    if (cnp.PyArray_NDIM(cost) != 2 or not cnp.PyArray_ISALIGNED(cost)
            or not cnp.PyArray_ISNOTSWAPPED(cost)):
        return None
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(cost)
    cdef cnp.npy_intp k = min(dims[0], dims[1])
    cdef cnp.ndarray row_ind = cnp.PyArray_EMPTY(1, &k, cnp.NPY_INT64, 0)
    cdef cnp.ndarray col_ind = cnp.PyArray_EMPTY(1, &k, cnp.NPY_INT64, 0)
    cdef int64_t* rows = <int64_t*>cnp.PyArray_DATA(row_ind)
    cdef int64_t* cols = <int64_t*>cnp.PyArray_DATA(col_ind)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(cost)
    cdef const void* first = cnp.PyArray_DATA(cost)
    # By kind and size, not type number: int64 is NPY_LONG or NPY_LONGLONG
    # depending on the platform and on how the array was made.
    cdef char kind = b'u' if cost.descr.kind == b'b' else cost.descr.kind
    cdef int size = <int>cnp.PyArray_ITEMSIZE(cost)
    cdef status st
    with nogil:
        st = solve_lsap_shortest_path_of(kind, size, first, dims[0], dims[1], strides[0],
                                         strides[1], maximize, rows, cols)
    return (row_ind, col_ind) if st == status.ok else None


# ---- batched linear sum assignment ------------------------------------------------

ctypedef fused batched_cost:
    double
    float
    int64_t
    int32_t
    uint8_t


def lsap_batched(const batched_cost[:, :, ::1] cost, bint maximize, int method, int threads,
                 int device, int block_threads, bint pipeline=True):
    """A stack of problems (batch, n_rows, n_cols), any shape; returns
    (row_ind, col_ind, stats), both of shape (batch, min(n_rows, n_cols))."""
    cdef int64_t batch = cost.shape[0]
    cdef int64_t n_rows = cost.shape[1]
    cdef int64_t n_cols = cost.shape[2]
    cdef int64_t k = min(n_rows, n_cols)
    row_ind = np.empty((batch, k), dtype=np.int64)
    col_ind = np.empty((batch, k), dtype=np.int64)
    cdef int64_t[:, ::1] rows_view = row_ind
    cdef int64_t[:, ::1] cols_view = col_ind
    cdef bint empty = batch == 0 or k == 0
    cdef const batched_cost* c = NULL
    cdef int64_t* rows = NULL
    cdef int64_t* cols = NULL
    if not empty:
        c = &cost[0, 0, 0]
        rows = &rows_view[0, 0]
        cols = &cols_view[0, 0]
    cdef batched_lsap_options opt
    opt.threads = threads
    opt.device = device
    opt.block_threads = block_threads
    opt.pipeline = pipeline
    cdef batched_lsap_stats stats
    cdef status st
    with nogil:
        st = solve_batched_lsap(c, batch, n_rows, n_cols, maximize,
                                <batched_lsap_method>method, opt, rows, cols, &stats)
    _check(st)
    return row_ind, col_ind, stats


def lsap_batched_device(const batched_cost[::1] dtype_tag, uintptr_t cost, int64_t batch,
                        int64_t n_rows, int64_t n_cols, bint maximize, int device,
                        int block_threads, uintptr_t stream, uintptr_t row_ind,
                        uintptr_t col_ind):
    """gpu-sap on a C-contiguous stack in GPU memory (its address), of the
    dtype of the (empty) array `dtype_tag` (float64, float32, int64, int32 or
    uint8: Cython picks the specialization by it); writes the device arrays
    at row_ind / col_ind (batch x min(n_rows, n_cols) int64), ordered on
    `stream`.  Returns the stats."""
    cdef batched_lsap_options opt
    opt.device = device
    opt.block_threads = block_threads
    opt.on_device = True
    opt.stream = stream
    cdef const batched_cost* c = <const batched_cost*>cost
    cdef batched_lsap_stats stats
    cdef status st
    with nogil:
        st = solve_batched_lsap(c, batch, n_rows, n_cols, maximize,
                                batched_lsap_method.gpu_sap, opt, <int64_t*>row_ind,
                                <int64_t*>col_ind, &stats)
    _check(st)
    return stats


# ---- preprocessing ----------------------------------------------------------------

def scc(const int64_t[::1] ptr, const int32_t[::1] adj):
    """SCCs of the digraph v -> adj[ptr[v]:ptr[v+1]]; returns (component int32[n], count).

    Ids are in reverse topological order (an arc u -> v between components
    has component[u] > component[v])."""
    cdef adjacency_view g
    g.n = ptr.shape[0] - 1
    g.ptr = _data_or_null(ptr)
    g.adj = _data_or_null(adj)
    component = np.empty(g.n, dtype=np.int32)
    cdef int32_t* comp = _mutable_data_or_null[int32_t](component)
    cdef int32_t count = 0
    cdef status st
    with nogil:
        st = strongly_connected_components(g, comp, &count)
    _check(st)
    return component, count


def dmperm(const int64_t[::1] row_ptr, const int32_t[::1] row_adj, int n_cols,
           const int32_t[::1] col4row, const int32_t[::1] row4col, int threads,
           int scc_device, int64_t scc_device_min):
    """Dulmage-Mendelsohn from a maximum matching; returns (p, q, r, s, rr, cc, stats),
    all int32, r and s trimmed to n_blocks + 1.  scc_device >= 0: the square part's
    components start on that GPU when it has at least scc_device_min vertices."""
    cdef bipartite_view g = _bipartite(row_ptr, row_adj, n_cols)
    cdef int64_t n_bounds = min(g.rows.n, g.cols.n) + 3
    p = np.empty(g.rows.n, dtype=np.int32)
    q = np.empty(g.cols.n, dtype=np.int32)
    r = np.empty(n_bounds, dtype=np.int32)
    s = np.empty(n_bounds, dtype=np.int32)
    cdef dm_result out
    out.p = _mutable_data_or_null[int32_t](p)
    out.q = _mutable_data_or_null[int32_t](q)
    out.r = _mutable_data_or_null[int32_t](r)
    out.s = _mutable_data_or_null[int32_t](s)
    cdef dm_stats stats
    cdef status st
    with nogil:
        st = dulmage_mendelsohn(g, _data_or_null(col4row), _data_or_null(row4col), threads,
                                scc_device, scc_device_min, &out, &stats)
    _check(st)
    rr = np.array([out.rr[k] for k in range(5)], dtype=np.int32)
    cc = np.array([out.cc[k] for k in range(5)], dtype=np.int32)
    return p, q, r[:out.n_blocks + 1].copy(), s[:out.n_blocks + 1].copy(), rr, cc, stats


def transversal(const int64_t[::1] row_ptr, const int32_t[::1] col_idx,
                const double[::1] magnitude, int objective, bint scale, int threads):
    """Weighted transversal of a square CSR matrix of magnitudes (objective 0:
    product, 1: sum, 2: bottleneck); returns (col4row, row_scale, col_scale), the scalings
    None unless product with scale."""
    cdef int64_t n = row_ptr.shape[0] - 1
    col4row = np.empty(n, dtype=np.int64)
    cdef bint with_scales = objective == 0 and scale
    row_scale = np.empty(n if with_scales else 0, dtype=np.float64)
    col_scale = np.empty(n if with_scales else 0, dtype=np.float64)
    cdef int64_t* c4r = _mutable_data_or_null[int64_t](col4row)
    cdef double* pr = _mutable_data_or_null[double](row_scale)
    cdef double* ps = _mutable_data_or_null[double](col_scale)
    cdef const double* a = _data_or_null(magnitude)
    cdef sparse_lsap_stats stats
    cdef status st
    with nogil:
        st = weighted_transversal(_data_or_null(row_ptr), _data_or_null(col_idx), a, n,
                                  <transversal_objective>objective, with_scales, threads, c4r,
                                  pr, ps, &stats)
    _check(st)
    return col4row, (row_scale if with_scales else None), (col_scale if with_scales else None)

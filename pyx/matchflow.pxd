# Declarations of the C++ API (cpp/include/matchflow/*.hpp) for _core.pyx.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t, uintptr_t
from libcpp cimport bool as cbool


cdef extern from "matchflow/status.hpp" namespace "matchflow" nogil:
    enum class status(int):
        ok
        infeasible
        invalid_input
        overflow
        out_of_memory
        cuda_unavailable
        cuda_error
    const char* last_error()


cdef extern from "matchflow/backend.hpp" namespace "matchflow" nogil:
    cdef cppclass device_info:
        char name[256]
        size_t total_memory
        size_t free_memory
        int major, minor, multiprocessors
    cbool cuda_compiled()
    const char* cuda_architectures()
    int cuda_device_count()
    status cuda_get_device_info(int device, device_info* info)
    int openmp_max_threads()
    cbool openmp_compiled()
    cbool asserts_compiled()
    size_t free_host_cache()
    void* take_pinned_result(size_t* nbytes)
    void give_back_pinned_result(void* data, size_t nbytes)


cdef extern from "matchflow/graph.hpp" namespace "matchflow" nogil:
    cdef cppclass adjacency_view:
        int32_t n
        const int64_t* ptr
        const int32_t* adj
    cdef cppclass bipartite_view:
        adjacency_view rows
        adjacency_view cols
    cdef cppclass raw_csr:
        int32_t n_rows, n_cols
        int64_t nnz
        const void* indptr
        const void* indices
        int offset_bytes, index_bytes
        cbool on_device


cdef extern from "matchflow/validate.hpp" namespace "matchflow" nogil:
    status check_compressed(const int64_t* ptr, int64_t n_major, const int32_t* ids,
                            int64_t nnz, int64_t n_minor, int threads)
    status check_compressed(const int64_t* ptr, int64_t n_major, const int64_t* ids,
                            int64_t nnz, int64_t n_minor, int threads)
    void widen_offsets(const int32_t* values, int64_t count, int64_t* out, int threads)
    int64_t first_negative(const int64_t* values, int64_t n, int threads)
    int64_t first_negative(const int32_t* values, int64_t n, int threads)
    void capacity_sum(const int64_t* caps, const int32_t* heads, int64_t n, int32_t skip,
                      int threads, uint64_t* high, uint64_t* low)
    void capacity_sum(const int32_t* caps, const int32_t* heads, int64_t n, int32_t skip,
                      int threads, uint64_t* high, uint64_t* low)


cdef extern from "matchflow/matching.hpp" namespace "matchflow" nogil:
    enum class matching_method(int):
        pr
        pdbfs
        gpu_pr
        gpu_apfb
        gpu_apsb
        msbfs_graft
    enum class matching_init(int):
        none
        cheap
        karp_sipser
    cdef cppclass matching_options:
        int threads
        matching_init init
        double relabel_k
        int bfs_kernel
        int thread_layout
        int device
        bint paper_structure
        bint skewed_degrees
    cdef struct matching_stats:
        double seconds_init, seconds_solve, seconds_transfer, seconds_transpose
        double seconds_setup, seconds_per_launch
        int64_t init_cardinality, iterations, global_relabels, pushes
        int64_t augmentations, bfs_levels, kernel_launches, cardinality
    status solve_matching(const bipartite_view& g, matching_method method,
                          const matching_options& options, int32_t* col4row,
                          int32_t* row4col, matching_stats* stats)
    status solve_matching_raw(const raw_csr& g, matching_method method,
                              const matching_options& options, uintptr_t stream,
                              int32_t* col4row, int32_t* row4col, matching_stats* stats)
    status count_empty_sampled_rows(const raw_csr& g, int64_t step, int device,
                                    uintptr_t stream, int64_t* empty)


cdef extern from "matchflow/lsap.hpp" namespace "matchflow" nogil:
    enum class lsap_method(int):
        omp_tree
        gpu_tree
        gpu_classic
        gpu_auction
    cdef cppclass lsap_options:
        int threads
        int device
        cbool cost_on_device
        uintptr_t stream
        cbool cost_int32
        uint64_t cost_max_abs
        cbool sparse_auction_on_gpu
    cdef cppclass lsap_stats:
        double seconds_init, seconds_solve, seconds_transfer
        int64_t iterations, augmenting_paths, dual_updates, kernel_launches, search_steps
        int64_t* paths_per_iteration
        int64_t narrow_costs
        int64_t auction_phases, auction_rounds, auction_bids
    status solve_lsap_dense(const double* cost, int64_t n_rows, int64_t n_cols,
                            lsap_method method, const lsap_options& options,
                            int64_t* col4row, double* u, double* v, lsap_stats* stats)
    status solve_lsap_dense(const float* cost, int64_t n_rows, int64_t n_cols,
                            lsap_method method, const lsap_options& options,
                            int64_t* col4row, float* u, float* v, lsap_stats* stats)
    status solve_lsap_dense(const int64_t* cost, int64_t n_rows, int64_t n_cols,
                            lsap_method method, const lsap_options& options,
                            int64_t* col4row, int64_t* u, int64_t* v, lsap_stats* stats)
    status solve_lsap_dense(const int32_t* cost, int64_t n_rows, int64_t n_cols,
                            lsap_method method, const lsap_options& options,
                            int64_t* col4row, int64_t* u, int64_t* v, lsap_stats* stats)
    status solve_lsap_shortest_path_of(char kind, int itemsize, const void* cost,
                                       int64_t n_rows, int64_t n_cols, int64_t row_stride,
                                       int64_t col_stride, cbool maximize, int64_t* row_ind,
                                       int64_t* col_ind)
    cdef struct sparse_lsap_stats:
        double seconds_init, seconds_solve
        int64_t initial_matches, augmenting_paths, columns_scanned, edges_relaxed
        int64_t auction_phases, auction_bids
    status solve_lsap_sparse(const int64_t* row_ptr, const int32_t* col_idx,
                             const double* weight, int64_t n_rows, int64_t n_cols,
                             const lsap_options& options, int64_t* col4row, double* u,
                             double* v, sparse_lsap_stats* stats)
    status solve_lsap_sparse(const int64_t* row_ptr, const int32_t* col_idx,
                             const int64_t* weight, int64_t n_rows, int64_t n_cols,
                             const lsap_options& options, int64_t* col4row, int64_t* u,
                             int64_t* v, sparse_lsap_stats* stats)


cdef extern from "matchflow/multi_gpu_lsap.hpp" namespace "matchflow" nogil:
    enum class cost_kind(int):
        int32
        int64
        float32
        float64
    cdef cppclass lsap_part_config:
        int device, part, parts, parts_on_device
        int64_t n_rows, n_cols, col0, width, row0, height
        cbool split_rows
        cost_kind kind
        const void* host_cost
        int64_t host_stride
        const void* device_cost
        cbool complement
        double timeout_seconds
    cdef cppclass lsap_part:
        pass
    const int lsap_max_parts
    status lsap_part_create(const lsap_part_config& config, lsap_part** part)
    status lsap_part_ipc_handle(lsap_part* part, void* handle)
    status lsap_parts_connect(lsap_part* const* parts, int count)
    status lsap_part_connect_ipc(lsap_part* part, const void* handles)
    status lsap_part_launch(lsap_part* part)
    status lsap_part_finish(lsap_part* part, int64_t* col4row, void* u, void* v,
                            lsap_stats* stats)
    void lsap_part_destroy(lsap_part* part)
    status solve_lsap_split(const double* cost, int64_t n_rows, int64_t n_cols,
                            int parts, bint rows,
                            int64_t* col4row, double* u, double* v, lsap_stats* stats)
    status solve_lsap_split(const float* cost, int64_t n_rows, int64_t n_cols,
                            int parts, bint rows,
                            int64_t* col4row, float* u, float* v, lsap_stats* stats)
    status solve_lsap_split(const int64_t* cost, int64_t n_rows, int64_t n_cols,
                            int parts, bint rows,
                            int64_t* col4row, int64_t* u, int64_t* v, lsap_stats* stats)
    status solve_lsap_split(const int32_t* cost, int64_t n_rows, int64_t n_cols,
                            int parts, bint rows,
                            int64_t* col4row, int64_t* u, int64_t* v, lsap_stats* stats)


cdef extern from "matchflow/batched_lsap.hpp" namespace "matchflow" nogil:
    enum class batched_lsap_method(int):
        omp_sap
        gpu_sap
    cdef cppclass batched_lsap_options:
        int threads
        int device
        int block_threads
        int pipeline
        cbool on_device
        uintptr_t stream
    cdef struct batched_lsap_stats:
        double seconds_solve, seconds_transfer
        int64_t kernel_launches, failed_problem, shared_costs, block_threads
    status solve_batched_lsap[T](const T* cost, int64_t batch, int64_t n_rows, int64_t n_cols,
                                 cbool maximize, batched_lsap_method method,
                                 const batched_lsap_options& options, int64_t* row_ind,
                                 int64_t* col_ind, batched_lsap_stats* stats)


cdef extern from "matchflow/maxflow.hpp" namespace "matchflow" nogil:
    enum class flow_method(int):
        pr
        ppr
        gpu_pr
        bk
    cdef cppclass flow_network:
        int32_t n
        const int64_t* ptr
        const int32_t* heads
        const int64_t* caps
        const int32_t* caps32
        int32_t source
        int32_t sink
    cdef cppclass flow_options:
        int threads
        int device
        cbool return_flow
        double relabel_freq
        cbool paper_variant
    cdef struct flow_stats:
        double seconds_setup, seconds_transfer, seconds_phase1, seconds_phase2
        double seconds_global_relabel, seconds_cut
        int64_t pushes, relabels, global_relabels, bfs_levels, gaps, iterations
        int64_t kernel_launches, capacity_bytes
    cdef cppclass flow_result:
        int64_t value
        int64_t* arc_flow
        uint8_t* source_side
        int64_t* matrix_indptr
        int32_t* matrix_indices
        int64_t* matrix_data
        int64_t matrix_nnz
    status solve_maxflow(const flow_network& net, flow_method method,
                         const flow_options& options, flow_result* result, flow_stats* stats)
    status build_flow_matrix(const flow_network& net, const int64_t* arc_flow, int threads,
                             int64_t* indptr, int32_t* indices, int64_t* data, int64_t* nnz)
    status solve_maxflow_scipy(const flow_network& net, cbool dinic, int64_t* value,
                               uint8_t* source_side, int64_t* indptr, int32_t* indices,
                               int64_t* data, int64_t* nnz)


cdef extern from "matchflow/preprocess.hpp" namespace "matchflow" nogil:
    status strongly_connected_components(const adjacency_view& g, int32_t* component,
                                         int32_t* n_components)
    cdef cppclass dm_result:
        int32_t* p
        int32_t* q
        int32_t* r
        int32_t* s
        int32_t rr[5]
        int32_t cc[5]
        int32_t n_blocks
    cdef struct dm_stats:
        double seconds_coarse, seconds_graph, seconds_scc, seconds_fine
        int64_t scc_pivot_size, scc_pivot_levels
    status dulmage_mendelsohn(const bipartite_view& g, const int32_t* col4row,
                              const int32_t* row4col, int threads, int scc_device,
                              int64_t scc_device_min, dm_result* out, dm_stats* stats)
    enum class transversal_objective(int):
        pass
    status weighted_transversal(const int64_t* row_ptr, const int32_t* col_idx,
                                const double* magnitude, int64_t n,
                                transversal_objective objective, bint scale, int threads,
                                int64_t* col4row, double* row_scale, double* col_scale,
                                sparse_lsap_stats* stats)

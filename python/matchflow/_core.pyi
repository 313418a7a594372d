# Type stubs for the compiled bindings (pyx/_core.pyx).
from typing import Any

import numpy as np
import numpy.typing as npt

# Method names -> the core's enumerators.
MATCHING_METHODS: dict[str, int]
MATCHING_INITS: dict[str, int]
LSAP_METHODS: dict[str, int]
BATCHED_LSAP_METHODS: dict[str, int]
FLOW_METHODS: dict[str, int]

def build_info() -> dict[str, object]: ...
def device_count() -> int: ...
def release_host_cache() -> int: ...
def result_array(n: int, dtype: npt.DTypeLike) -> npt.NDArray[Any]: ...
def get_device_info(device: int) -> dict[str, object]: ...
def validate_compressed(ptr: npt.NDArray[np.int64],
                        ids: npt.NDArray[np.int32] | npt.NDArray[np.int64],
                        n_minor: int) -> None: ...
def widened_offsets(values: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]: ...
def find_negative(values: npt.NDArray[np.int32] | npt.NDArray[np.int64]) -> int: ...
def sum_capacities(caps: npt.NDArray[np.int32] | npt.NDArray[np.int64],
                   heads: npt.NDArray[np.int32],
                   skip: int) -> int: ...
def matching(row_ptr: npt.NDArray[np.int64], row_adj: npt.NDArray[np.int32],
             n_cols: int, method: int, init: int, threads: int, relabel_k: float,
             bfs_kernel: int, skewed_degrees: bool, thread_layout: int, device: int,
             paper_structure: bool,
             ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], dict[str, Any]]: ...
def matching_raw(indptr: int, offset_bytes: int, indices: int, index_bytes: int, nnz: int,
                 n_rows: int, n_cols: int, on_device: bool, method: int, init: int,
                 relabel_k: float, bfs_kernel: int, skewed_degrees: bool, thread_layout: int,
                 device: int, paper_structure: bool, stream: int, col4row: int, row4col: int,
                 ) -> dict[str, Any]: ...
def empty_sampled_rows(indptr: int, offset_bytes: int, n_rows: int, step: int, device: int,
                       stream: int) -> int: ...
def lsap_sparse(row_ptr: npt.NDArray[np.int64], col_idx: npt.NDArray[np.int32],
                weight: npt.NDArray[np.float64] | npt.NDArray[np.int64], n_cols: int,
                threads: int, device: int,
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray, npt.NDArray, dict[str, Any]]: ...
def lsap_dense_device(dtype_tag: np.ndarray, cost: int, cost_int32: bool, n_rows: int,
                      n_cols: int, method: int, device: int, stream: int, max_abs: int,
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray, npt.NDArray,
                                 dict[str, Any]]: ...
def lsap_batched_device(dtype_tag: np.ndarray, cost: int, batch: int, n_rows: int, n_cols: int,
                        maximize: bool, device: int, block_threads: int, stream: int,
                        row_ind: int, col_ind: int) -> dict[str, object]: ...
def lsap_dense(cost: npt.NDArray[np.float64] | npt.NDArray[np.float32] | npt.NDArray[np.int64],
               method: int, threads: int, device: int,
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray, npt.NDArray, dict[str, Any]]: ...
def lsap_shortest_path(cost: np.ndarray, maximize: bool,
                       ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None: ...
def lsap_batched(cost: npt.NDArray[np.float64] | npt.NDArray[np.float32] | npt.NDArray[np.int64]
                 | npt.NDArray[np.int32] | npt.NDArray[np.uint8], maximize: bool, method: int,
                 threads: int, device: int, block_threads: int, pipeline: bool = ...,
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], dict[str, object]]: ...
def maxflow(ptr: npt.NDArray[np.int64], heads: npt.NDArray[np.int32],
            caps: npt.NDArray[np.int32] | npt.NDArray[np.int64], source: int, sink: int,
            method: int, threads: int, device: int, return_flow: bool, relabel_freq: float,
            paper_variant: bool,
            want_matrix: bool = False,
            ) -> tuple[int, npt.NDArray[np.int64] | None, npt.NDArray[np.bool_],
                       dict[str, Any],
                       tuple[npt.NDArray[np.int64], npt.NDArray[np.int32],
                             npt.NDArray[np.int64]] | None]: ...
def flow_matrix(ptr: npt.NDArray[np.int64], heads: npt.NDArray[np.int32],
                arc_flow: npt.NDArray[np.int64], threads: int,
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32],
                           npt.NDArray[np.int64]]: ...
def maxflow_scipy(ptr: npt.NDArray[np.int64], heads: npt.NDArray[np.int32],
                  caps: npt.NDArray[np.int32] | npt.NDArray[np.int64], source: int, sink: int,
                  dinic: bool,
                  ) -> tuple[int, npt.NDArray[np.bool_],
                             tuple[npt.NDArray[np.int64], npt.NDArray[np.int32],
                                   npt.NDArray[np.int64]]]: ...
def scc(ptr: npt.NDArray[np.int64], adj: npt.NDArray[np.int32],
        ) -> tuple[npt.NDArray[np.int32], int]: ...
def dmperm(row_ptr: npt.NDArray[np.int64], row_adj: npt.NDArray[np.int32],
           n_cols: int, col4row: npt.NDArray[np.int32], row4col: npt.NDArray[np.int32],
           threads: int, scc_device: int, scc_device_min: int,
           ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32],
                      npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32],
                      dict[str, Any]]: ...
def transversal(row_ptr: npt.NDArray[np.int64], col_idx: npt.NDArray[np.int32],
                magnitude: npt.NDArray[np.float64], objective: int, scale: bool, threads: int,
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64] | None,
                           npt.NDArray[np.float64] | None]: ...

# Multi-GPU assignment (matchflow/multi_gpu_lsap.hpp).
LSAP_MAX_PARTS: int

class LsapPart:
    def __init__(self, cost: npt.NDArray[Any] | None, device_cost: int, dtype: npt.DTypeLike,
                 device: int, part: int, parts: int, parts_on_device: int, n_rows: int,
                 n_cols: int, col0: int, width: int, complement: bool,
                 timeout_seconds: float, row0: int = 0, height: int = -1,
                 split_rows: bool = False) -> None: ...
    def ipc_handle(self) -> bytes: ...
    def connect_ipc(self, handles: bytes) -> None: ...
    def launch(self) -> None: ...
    def finish(self, with_rows: bool) -> tuple[npt.NDArray[np.int64] | None,
                                               npt.NDArray[Any] | None, npt.NDArray[Any],
                                               dict[str, Any]]: ...

def connect_lsap_parts(parts: list[LsapPart]) -> None: ...
def lsap_split(cost: npt.NDArray[Any], parts: int, rows: bool = False,
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray, npt.NDArray, dict[str, Any]]: ...

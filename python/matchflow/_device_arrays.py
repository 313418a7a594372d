"""Arrays that live on a GPU: recognising them, reading their layout, and
giving results back in the caller's kind.

Neither CuPy nor PyTorch is a dependency.  Recognition never imports them:
an object is a CuPy array or a torch tensor only if its class's module is
already loaded (``sys.modules``), and anything else is read through the
CUDA Array Interface (``__cuda_array_interface__``, version 2 or 3) alone.
A library is imported only to give results back to an input of its kind.

What is read on the host (here): kinds, shapes, dtypes, contiguity, the
device ordinal and the stream.  What is checked on the device (in the core,
fused with the first pass over the data): index ranges and offsets of a
CSR, NaN / -inf costs.  Nothing here reads device memory.

Streams.  Work for a CuPy or torch input is ordered on that library's
current stream on the input's device (CuPy exports its current stream in the
interface; torch data is, by its own rules, ready on its current stream), so
a result used on that stream needs no synchronisation.  Any other producer
(e.g. Numba) is taken through ``cupy.asarray``, which waits on the stream
its interface names (protocol version 3).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

# DLPack device types (dlpack.h): CUDA memory and CUDA managed memory.
_DLPACK_CUDA = (2, 13)

# Stream handles the CUDA runtime reads as its default streams (cuda_runtime_api.h:
# cudaStreamLegacy, cudaStreamPerThread); the interface uses the same numbers.
STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


@dataclass(frozen=True)
class DeviceArray:
    """A dense array in GPU memory, as its interface describes it.

    Attributes
    ----------
    ptr : int
        Device address of element 0 (0 for an empty array).
    shape : tuple of int
    dtype : numpy.dtype
    strides : tuple of int or None
        In bytes; None when C-contiguous.
    device : int
        CUDA ordinal the memory belongs to.
    stream : int
        Stream handle the caller's work on it is ordered on (0 = the legacy
        default stream).
    kind : {"cupy", "torch", "interface"}
        The library results go back as ("interface": read from the
        interface alone, see `describe_interface`).
    obj : object
        The array the layout was read from; kept alive while it is used.
    """

    ptr: int
    shape: tuple
    dtype: np.dtype
    strides: tuple | None
    device: int
    stream: int
    kind: str
    obj: Any

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def contiguous(self) -> bool:
        return self.strides is None or self.strides == _c_strides(self.shape, self.dtype.itemsize)


def _c_strides(shape, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(strides))


# ---- recognition (no imports) ---------------------------------------------------


def _loaded_type(module: str, name: str):
    """`module.name` if `module` is already imported, else None (never imports)."""
    mod = sys.modules.get(module)
    return getattr(mod, name, None) if mod is not None else None


def _is_torch_cuda(obj) -> bool:
    tensor = _loaded_type("torch", "Tensor")
    return tensor is not None and isinstance(obj, tensor) and bool(getattr(obj, "is_cuda", False))


def _is_cupy(obj) -> bool:
    ndarray = _loaded_type("cupy", "ndarray")
    return ndarray is not None and isinstance(obj, ndarray)


def _dlpack_on_cuda(obj) -> bool:
    probe = getattr(obj, "__dlpack_device__", None)
    if probe is None or not hasattr(obj, "__dlpack__"):
        return False
    try:
        device_type = int(probe()[0])
    except Exception:  # a broken probe is "not a device array", not a crash
        return False
    return device_type in _DLPACK_CUDA


def is_device_array(obj) -> bool:
    """True for a dense array in GPU memory: a CuPy array, a CUDA torch
    tensor, anything with ``__cuda_array_interface__``, or a DLPack exporter
    whose device is CUDA.  Never imports a library.

    >>> import numpy as np
    >>> is_device_array(np.zeros(3))
    False
    """
    if isinstance(obj, np.ndarray):
        return False
    if _is_torch_cuda(obj) or _is_cupy(obj):
        return True
    return hasattr(obj, "__cuda_array_interface__") or _dlpack_on_cuda(obj)


def is_device_sparse(obj) -> bool:
    """True for a cupyx.scipy.sparse CSR/CSC matrix, a torch sparse CSR
    tensor on a GPU, or an ``(indptr, indices, shape)`` triple of device
    arrays.  Never imports a library."""
    if isinstance(obj, tuple):
        return (len(obj) == 3 and is_device_array(obj[0]) and is_device_array(obj[1])
                and not is_device_array(obj[2]))
    if type(obj).__module__.startswith("cupyx.scipy.sparse"):
        return getattr(obj, "format", None) in ("csr", "csc")
    if _is_torch_cuda(obj):
        return str(getattr(obj, "layout", "")) in ("torch.sparse_csr", "torch.sparse_csc")
    return False


# ---- reading the layout -----------------------------------------------------------


def _interface(obj) -> dict:
    try:
        face = obj.__cuda_array_interface__
    except Exception as exc:  # e.g. torch: a tensor that requires grad
        raise TypeError(f"cannot read the CUDA array interface of {type(obj).__name__}: "
                        f"{exc}") from None
    if not isinstance(face, dict) or "shape" not in face or "typestr" not in face \
            or "data" not in face:
        raise TypeError(f"{type(obj).__name__}.__cuda_array_interface__ lacks shape, typestr "
                        f"or data")
    if face.get("mask") is not None:
        raise TypeError("masked device arrays are not supported")
    return face


def _stream_of(kind: str, device: int, face: dict) -> int:
    """The stream the caller's work on a `kind` array is ordered on."""
    if kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device):
            return int(cupy.cuda.get_current_stream().ptr)
    if kind == "torch":
        torch = sys.modules["torch"]
        return int(torch.cuda.current_stream(device).cuda_stream)
    stream = face.get("stream")
    return 0 if stream is None else int(stream)


def _as_library_array(obj):
    """A CuPy array (else torch tensor) viewing a foreign device array: the
    library's own import of the interface / DLPack, which honours the
    producer's stream.  TypeError naming both when neither is installed."""
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        if hasattr(obj, "__cuda_array_interface__"):
            return cupy.asarray(obj)
        return cupy.from_dlpack(obj)
    try:
        import torch
    except ImportError:
        raise TypeError(f"{type(obj).__name__} is a GPU array; matchflow reads such arrays "
                        f"directly only from CuPy or PyTorch (install one of them to pass "
                        f"other kinds)") from None
    return torch.from_dlpack(obj) if not hasattr(obj, "__cuda_array_interface__") \
        else torch.as_tensor(obj, device="cuda")


def describe(obj, what: str = "array") -> DeviceArray:
    """The layout of a device array (see `DeviceArray`); `what` names it in errors."""
    if _is_torch_cuda(obj):
        kind = "torch"
        if getattr(obj, "requires_grad", False):
            obj = obj.detach()
        face = _interface(obj)
    elif _is_cupy(obj):
        kind = "cupy"
        face = _interface(obj)
    else:
        if hasattr(obj, "__cuda_array_interface__"):
            _check_pointer(_interface(obj), what)
        obj = _as_library_array(obj)
        return describe(obj, what)
    return _from_interface(obj, face, kind, what)


def _check_pointer(face: dict, what: str) -> None:
    """A non-empty array must have a data pointer (the interface's rule)."""
    size = 1
    for d in face["shape"]:
        size *= int(d)
    if size > 0 and not face["data"][0]:
        raise ValueError(f"{what} is a device array with a null data pointer")


def describe_interface(obj, what: str = "array") -> DeviceArray:
    """The layout as the interface alone gives it (kind "interface", the
    stream its ``stream`` field names); `describe` is the one that resolves
    CuPy's and torch's streams."""
    return _from_interface(obj, _interface(obj), "interface", what)


def _from_interface(obj, face: dict, kind: str, what: str) -> DeviceArray:
    shape = tuple(int(d) for d in face["shape"])
    try:
        dtype = np.dtype(face["typestr"])
    except TypeError:
        raise TypeError(f"{what} has an unknown data type {face['typestr']!r}") from None
    ptr = int(face["data"][0] or 0)
    strides = face.get("strides")
    strides = None if strides is None else tuple(int(s) for s in strides)
    device = _ordinal(obj)
    return DeviceArray(ptr, shape, dtype, strides, device,
                       _stream_of(kind, device, face), kind, obj)


def _ordinal(obj) -> int:
    """The CUDA ordinal of a CuPy array (``device.id``) or a torch tensor
    (``device.index``); 0 for an object that does not say."""
    device = getattr(obj, "device", None)
    for attr in ("id", "index"):
        value = getattr(device, attr, None)
        if isinstance(value, int):
            return value
    return 0


# ---- checks on the host -------------------------------------------------------------


def vector(arr: DeviceArray, what: str, dtypes) -> DeviceArray:
    """`arr` must be 1-D, contiguous and of one of `dtypes` (names)."""
    if len(arr.shape) != 1:
        raise ValueError(f"{what} must be one-dimensional; got shape {arr.shape}")
    if arr.dtype.name not in dtypes or arr.dtype.byteorder == ">":
        raise ValueError(f"{what} must have data type {' or '.join(dtypes)}; got {arr.dtype}")
    if not arr.contiguous:
        raise ValueError(f"{what} must be contiguous")
    return arr


def same_device(arrays, what: str) -> int:
    """The one ordinal every array lives on; ValueError if they differ."""
    ordinals = {a.device for a in arrays}
    if len(ordinals) != 1:
        raise ValueError(f"{what} must live on one device; got cuda:"
                         f"{', cuda:'.join(str(o) for o in sorted(ordinals))}")
    return ordinals.pop()


def check_device_choice(device, ordinal: int, what: str) -> None:
    """`device=` for an input on cuda:`ordinal`: "auto", "cuda" or
    "cuda:<ordinal>" (the data is not moved); ValueError otherwise."""
    if device in ("auto", "cuda", f"cuda:{ordinal}"):
        return
    if not isinstance(device, str):
        raise TypeError(f"device must be a string ('auto', 'cpu', 'cuda', 'cuda:N'); "
                        f"got {type(device).__name__}")
    raise ValueError(f"{what} lives on cuda:{ordinal}, and matchflow computes where the data "
                     f"is: device must be 'auto', 'cuda' or 'cuda:{ordinal}'; got {device!r} "
                     f"(copy the input to the host to solve it there)")


# ---- results in the caller's kind ------------------------------------------------------


def empty(kind: str, device: int, shape, dtype):
    """An uninitialised array of the caller's kind on cuda:`device`, allocated
    by that library (its memory pool, ordered on its current stream)."""
    dtype = np.dtype(dtype)
    if kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    if kind == "torch":
        torch = sys.modules["torch"]
        return torch.empty(tuple(shape), dtype=_torch_dtype(torch, dtype),
                           device=f"cuda:{device}")
    raise TypeError(f"no device results of kind {kind!r}")


def _torch_dtype(torch, dtype: np.dtype):
    return {"int32": torch.int32, "int64": torch.int64, "float32": torch.float32,
            "float64": torch.float64, "bool": torch.bool}[dtype.name]


def pointer(arr) -> int:
    """Device address of an array made by `empty` (0 when it is empty)."""
    face = arr.__cuda_array_interface__
    return int(face["data"][0] or 0)


# ---- sparse patterns -------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceCSR:
    """A compressed sparse pattern in GPU memory, read as CSR.

    A CSC input is the CSR of its transpose: `transposed` is then True and
    n_rows / n_cols are the transpose's (the caller swaps the results back).
    Checked here: kinds, dtypes (int32 / int64 each, as given), lengths,
    one device.  Checked on the device by the core: indptr starts at 0,
    does not decrease and ends at nnz; ids in [0, n_cols).
    """

    n_rows: int
    n_cols: int
    indptr: DeviceArray
    indices: DeviceArray
    transposed: bool

    @property
    def nnz(self) -> int:
        return self.indices.shape[0]

    @property
    def device(self) -> int:
        return self.indptr.device

    @property
    def kind(self) -> str:
        return self.indptr.kind


_INDEX_DTYPES = ("int32", "int64")
_MAX_VERTICES = np.iinfo(np.int32).max - 1


def _sparse_parts(graph):
    """(indptr, indices, (rows, cols) of the stored orientation, is_csc)."""
    if isinstance(graph, tuple):
        indptr, indices, shape = graph
        return indptr, indices, shape, False
    if _is_torch_cuda(graph):
        if str(graph.layout) == "torch.sparse_csc":
            rows, cols = graph.shape
            return graph.ccol_indices(), graph.row_indices(), (cols, rows), True
        return graph.crow_indices(), graph.col_indices(), tuple(graph.shape), False
    rows, cols = graph.shape
    if graph.format == "csc":
        return graph.indptr, graph.indices, (cols, rows), True
    return graph.indptr, graph.indices, (rows, cols), False


def _shape2(shape) -> tuple[int, int]:
    try:
        dims = tuple(shape)
    except TypeError:
        dims = ()
    if len(dims) != 2 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                 for d in dims):
        raise ValueError(f"shape must be a pair of integers; got {shape!r}")
    if min(dims) < 0:
        raise ValueError(f"shape must be non-negative; got {tuple(int(d) for d in dims)}")
    return int(dims[0]), int(dims[1])


def sparse_pattern(graph, read=describe) -> DeviceCSR:
    """The CSR pattern of a device sparse input (`is_device_sparse`), checked
    on the host as far as the host can without reading device memory.
    `read` turns an array into a `DeviceArray` (`describe`; tests pass
    `describe_interface`)."""
    indptr, indices, shape, is_csc = _sparse_parts(graph)
    n_rows, n_cols = _shape2(shape)
    if max(n_rows, n_cols) > _MAX_VERTICES:
        raise ValueError(f"graph has {max(n_rows, n_cols)} rows or columns; at most "
                         f"{_MAX_VERTICES} are supported")
    ptr = vector(read(indptr, "indptr"), "indptr", _INDEX_DTYPES)
    ids = vector(read(indices, "indices"), "indices", _INDEX_DTYPES)
    if ptr.shape[0] != n_rows + 1:
        raise ValueError(f"index pointer size ({ptr.shape[0]}) should be ({n_rows + 1})")
    same_device((ptr, ids), "indptr and indices")
    if ptr.kind != ids.kind:
        raise TypeError(f"indptr and indices must be arrays of one kind; got {ptr.kind} "
                        f"and {ids.kind}")
    return DeviceCSR(n_rows, n_cols, ptr, ids, is_csc)

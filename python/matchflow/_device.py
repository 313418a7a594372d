"""Which device runs a problem: parsing `device=`, and the machine's facts.

Nothing touches CUDA at import; the device count is queried on first use
and cached.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings
from typing import Callable, TypeVar

from . import _core

_T = TypeVar("_T")


@functools.lru_cache(maxsize=1)
def device_count() -> int:
    """Number of usable CUDA devices (0 when CUDA is not compiled in)."""
    if not _core.build_info()["cuda_compiled"]:
        return 0
    return _core.device_count()


def cuda_available() -> bool:
    """True when matchflow was built with CUDA and a device is usable.

    Examples
    --------
    >>> import matchflow
    >>> device = "cuda" if matchflow.cuda_available() else "cpu"
    >>> device in ("cuda", "cpu")
    True
    """
    return device_count() > 0


def _cuda_ordinal(device: str) -> int:
    if device == "cuda":
        return 0
    suffix = device[len("cuda:"):]
    if not suffix.isdigit():
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")
    return int(suffix)


def _require_cuda(ordinal: int) -> None:
    if not _core.build_info()["cuda_compiled"]:
        raise RuntimeError("a CUDA device was requested, but matchflow was built without "
                           "CUDA support (no CUDA compiler at build time)")
    count = device_count()
    if count == 0:
        raise RuntimeError("a CUDA device was requested, but no usable CUDA device is "
                           "visible (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides them)")
    if ordinal >= count:
        raise RuntimeError(f"CUDA device {ordinal} was requested, but only {count} "
                           f"device(s) are visible")


def resolve(device, *, large_enough: bool) -> tuple[str, int]:
    """Map a `device=` argument to ("cpu", 0) or ("cuda", ordinal).

    "auto" picks the GPU when one is usable and `large_enough` says the
    problem gains from it, else the CPU; it never fails for lack of a GPU.
    An explicit "cuda"/"cuda:N" raises RuntimeError when it is not there.
    """
    if not isinstance(device, str):
        raise TypeError(f"device must be a string ('auto', 'cpu', 'cuda', 'cuda:N'); "
                        f"got {type(device).__name__}")
    if device == "cpu":
        return "cpu", 0
    if device == "auto":
        return ("cuda", 0) if large_enough and cuda_available() else ("cpu", 0)
    if device == "cuda" or device.startswith("cuda:"):
        ordinal = _cuda_ordinal(device)
        _require_cuda(ordinal)
        return "cuda", ordinal
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")


def resolve_method(method: str, device, cpu_methods, gpu_methods, *,
                   large_enough: bool) -> tuple[str, str, int]:
    """(method, backend, ordinal) for a method= already known to be valid.

    A CPU method needs a CPU device, a GPU method a GPU (device="auto" then
    means "cuda"); "auto" stays "auto" for the caller to pick once the
    backend is known.
    """
    if method in cpu_methods:
        backend, _ = resolve(device, large_enough=False)
        if backend != "cpu":
            raise ValueError(f"method {method!r} runs on the CPU; use device='cpu' or 'auto', "
                             f"or a GPU method ({', '.join(gpu_methods)})")
        return method, "cpu", 0
    if method in gpu_methods:
        if device == "cpu":
            raise ValueError(f"method {method!r} runs on a GPU; use device='cuda' or 'auto', "
                             f"or a CPU method ({', '.join(cpu_methods)})")
        backend, ordinal = resolve("cuda" if device == "auto" else device, large_enough=True)
        return method, backend, ordinal
    backend, ordinal = resolve(device, large_enough=large_enough)
    return method, backend, ordinal


#: What a GPU run raises when the GPU cannot take the problem: out of device
#: memory (MemoryError) or a CUDA error (RuntimeError).
GPU_FAILURES = (MemoryError, RuntimeError)


def with_cpu_fallback(device, backend: str, run: Callable[[], _T], run_on_cpu: Callable[[], _T],
                      *, stacklevel: int, fallback: str = "falling back to the CPU") -> _T:
    """`run()`, on the `backend` resolved from `device`; where "auto" chose
    the GPU and `run` fails with one of GPU_FAILURES, a RuntimeWarning (the
    cause, then `fallback`) and `run_on_cpu()` instead.  An explicit device
    raises as it is: "auto" never fails for lack of a GPU, "cuda" never
    hides one that failed.  `stacklevel` is the warning's, as the caller
    would pass it to warnings.warn."""
    if device != "auto" or backend != "cuda":
        return run()
    try:
        return run()
    except GPU_FAILURES as exc:
        warnings.warn(f"{exc}; {fallback}", RuntimeWarning, stacklevel=stacklevel + 1)
    return run_on_cpu()


def free_host_cache() -> int:
    """Free the host memory matchflow keeps between calls.

    The CPU maximum-flow codes keep their largest scratch arrays (the
    residual graph, the flow matrix's transpose) after a call, already paged
    in, so that the next call on a graph of similar size skips the page
    faults of fresh memory.  What is kept is capped by the environment
    variable ``MATCHFLOW_HOST_CACHE_MB`` (read whenever an array is handed back;
    default 1024 MiB or a sixteenth of physical memory, whichever is less;
    0 keeps nothing).  The GPU codes keep device memory in CUDA's
    stream-ordered pool in the same way, and page-locked host memory for
    the arrays they return from host input (a GPU matching's mates of at
    least 1 MiB): such an array's download is then one DMA, and its block
    is kept for the next call when the array is freed.  What is pinned,
    held by arrays or kept, is capped by ``MATCHFLOW_PINNED_RESULTS_MB``
    (default 256 MiB or a 64th of physical memory, whichever is less; 0
    pins nothing); this function frees the kept blocks too.

    Returns
    -------
    int
        The bytes freed.

    Examples
    --------
    >>> import matchflow
    >>> matchflow.free_host_cache() >= 0
    True
    """
    return int(_core.release_host_cache())


def device_name(backend: str, ordinal: int) -> str:
    """What a result's `device` field says: "cpu" or "cuda:N"."""
    return "cpu" if backend == "cpu" else f"cuda:{ordinal}"


def config() -> dict:
    """Everything show_config() prints, as a dict."""
    import numpy
    import scipy

    from . import __version__

    info = dict(_core.build_info())
    devices = []
    for i in range(device_count()):
        try:
            devices.append(_core.get_device_info(i))
        except RuntimeError as exc:  # a device that errors is reported, not fatal
            devices.append({"name": f"unusable: {exc}"})
    info.update(
        matchflow=__version__,
        python=sys.version.split()[0],
        numpy=numpy.__version__,
        scipy=scipy.__version__,
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        devices=devices,
    )
    return info


def show_config() -> None:
    """Print how matchflow was built and what it can use on this machine.

    Examples
    --------
    >>> import matchflow
    >>> matchflow.show_config()  # doctest: +ELLIPSIS
    matchflow ... (python ..., numpy ..., scipy ...)
    ...
    """
    info = config()
    print(f"matchflow {info['matchflow']} (python {info['python']}, numpy {info['numpy']}, "
          f"scipy {info['scipy']})")
    arch = info["cuda_architectures"] or "-"
    print(f"  CUDA compiled:      {info['cuda_compiled']} (architectures: {arch})")
    print(f"  Debug assertions:   {info['asserts_compiled']}")
    print(f"  OpenMP compiled:    {info['openmp_compiled']} "
          f"(max threads: {info['openmp_max_threads']})")
    print(f"  CUDA devices:       {len(info['devices'])}")
    for i, d in enumerate(info["devices"]):
        if "total_memory" in d:
            cc = ".".join(map(str, d["compute_capability"]))
            print(f"    cuda:{i}  {d['name']}  {d['total_memory'] / 2**30:.1f} GiB  "
                  f"sm_{cc.replace('.', '')}  {d['multiprocessors']} SMs")
        else:
            print(f"    cuda:{i}  {d['name']}")

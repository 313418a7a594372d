"""The one GPU-to-CPU fallback rule (_device.with_cpu_fallback): device="auto"
that picked a GPU falls back to the CPU, with a RuntimeWarning naming the
cause, when the GPU run raises MemoryError (out of device memory) or
RuntimeError (a CUDA error); an explicit device raises as it is.  Checked on
the helper and through every entry point that uses it, with a GPU that
fails on demand (so the test runs on machines without one)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import matchflow
from matchflow import _batched, _core, _device, _flow, _lsap, _matching, _preprocess
from matchflow._device import with_cpu_fallback


def _fail(exc):
    def run():
        raise exc
    return run


@pytest.mark.parametrize("exc", [MemoryError("out of device memory"),
                                 RuntimeError("CUDA error: unspecified launch failure")])
def test_auto_on_a_gpu_falls_back_with_a_warning(exc):
    with pytest.warns(RuntimeWarning, match=f"{exc}; falling back to the CPU"):
        assert with_cpu_fallback("auto", "cuda", _fail(exc), lambda: "cpu", stacklevel=1) == "cpu"


@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_an_explicit_device_raises_as_it_is(device):
    with pytest.raises(MemoryError, match="out of device memory"):
        with_cpu_fallback(device, "cuda", _fail(MemoryError("out of device memory")),
                          lambda: "cpu", stacklevel=1)


def test_other_errors_and_cpu_runs_are_not_caught():
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        with_cpu_fallback("auto", "cuda", _fail(ValueError("cost matrix is infeasible")),
                          lambda: "cpu", stacklevel=1)
    with pytest.raises(MemoryError):  # the CPU's own MemoryError is the caller's
        with_cpu_fallback("auto", "cpu", _fail(MemoryError("host")), lambda: "cpu",
                          stacklevel=1)


def _failing_gpu(monkeypatch, name: str, gpu_codes, code_at: int | str, exc):
    """_core.<name> raising `exc` when its method argument (position or
    keyword `code_at`) is a GPU method's code, else the real function."""
    real = getattr(_core, name)

    def wrapped(*args, **kwargs):
        code = kwargs[code_at] if isinstance(code_at, str) else args[code_at]
        if code in gpu_codes:
            raise exc
        return real(*args, **kwargs)
    monkeypatch.setattr(_core, name, wrapped)


@pytest.fixture
def failing_gpu(monkeypatch):
    """A visible GPU, taken by "auto" at any size, on which every solve fails."""
    monkeypatch.setattr(_device, "cuda_available", lambda: True)
    for module, name in ((_matching, "GPU_MIN_EDGES"), (_lsap, "GPU_MIN_ELEMENTS"),
                         (_batched, "GPU_MIN_ELEMENTS"), (_flow, "GPU_MIN_ARCS")):
        monkeypatch.setattr(module, name, 0)

    def fail_with(exc):
        gpu = lambda table: {table[m] for m in table if m.startswith("gpu")}  # noqa: E731
        _failing_gpu(monkeypatch, "matching", gpu(_core.MATCHING_METHODS), 3, exc)
        _failing_gpu(monkeypatch, "matching_raw", gpu(_core.MATCHING_METHODS), 8, exc)
        _failing_gpu(monkeypatch, "lsap_dense", gpu(_core.LSAP_METHODS), 1, exc)
        _failing_gpu(monkeypatch, "lsap_batched", gpu(_core.BATCHED_LSAP_METHODS), 2, exc)
        _failing_gpu(monkeypatch, "maxflow", gpu(_core.FLOW_METHODS), 5, exc)
    return fail_with


CALLS = {
    "matching": lambda: matchflow.maximum_matching(sp.random(60, 50, 0.1, random_state=1,
                                                             format="csr")),
    "matching-karp-sipser": lambda: matchflow.maximum_matching(
        sp.random(60, 50, 0.1, random_state=1, format="csr"), init="karp-sipser"),
    "assignment": lambda: matchflow.solve_assignment(
        np.random.default_rng(2).integers(0, 50, (40, 40))),
    "batched": lambda: matchflow.batch_linear_sum_assignment(
        np.random.default_rng(3).random((4, 10, 12))),
    "flow": lambda: matchflow.solve_flow(
        sp.csr_array(np.triu(np.random.default_rng(4).integers(0, 9, (30, 30)), 1)), 0, 29),
}


@pytest.mark.parametrize("exc", [MemoryError("out of device memory"),
                                 RuntimeError("CUDA error: an illegal memory access")])
@pytest.mark.parametrize("call", list(CALLS))
def test_every_entry_point_falls_back(call, exc, failing_gpu):
    failing_gpu(exc)
    with pytest.warns(RuntimeWarning, match=f"{exc}; falling back to the CPU"):
        result = CALLS[call]()
    device = getattr(result, "device", None)
    if device is not None:
        assert device == "cpu"


def test_dulmage_mendelsohn_components_fall_back(monkeypatch):
    monkeypatch.setattr(_preprocess, "_scc_device", lambda matching_device: 0)
    real = _core.dmperm

    def dmperm(*args):
        if args[6] >= 0:
            raise MemoryError("out of device memory")
        return real(*args)
    monkeypatch.setattr(_core, "dmperm", dmperm)
    a = sp.random(50, 50, 0.08, random_state=5, format="csc") + sp.eye(50, format="csc")
    with pytest.warns(RuntimeWarning, match="the strongly connected components run on the CPU"):
        dm = matchflow.dulmage_mendelsohn(a)
    assert sorted(dm.p.tolist()) == list(range(50))

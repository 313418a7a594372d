"""Shared fixtures: data location, device parametrisation, the GIL check."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

import matchflow

# GPU methods resolve races after the fact, so every GPU answer is checked on
# several runs of the same input (benchmarks/gpu_run.sh sets 10).
GPU_REPEATS = int(os.environ.get("MATCHFLOW_GPU_REPEATS", "3"))

requires_cuda = pytest.mark.skipif(not matchflow.cuda_available(),
                                   reason="no usable CUDA device")


def data_dir() -> Path | None:
    """The real-matrix folder: $MATCHFLOW_DATA, else ../shared/data beside the repo."""
    env = os.environ.get("MATCHFLOW_DATA")
    candidate = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def assert_gil_released(work, min_seconds):
    """While `work` runs in another thread, this one keeps running: no gap
    between its clock reads takes half the time.  The work starts only once
    this thread is reading the clock (else it could run, GIL held, while this
    one still waits in Thread.start), and the GIL changes hands every 0.1 ms."""
    gaps = []
    go, done = threading.Event(), threading.Event()

    def run():
        go.wait()
        work()
        done.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        solver = threading.Thread(target=run)
        solver.start()
        start = last = time.perf_counter()
        go.set()
        while not done.is_set():
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        elapsed = time.perf_counter() - start
        solver.join()
    finally:
        sys.setswitchinterval(interval)
    assert elapsed > min_seconds  # the work was long enough to tell
    assert max(gaps) < 0.5 * elapsed


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(requires_cuda)

"""Shared fixtures: data location, device parametrisation."""
from __future__ import annotations

import os
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


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(requires_cuda)

"""matchflow.distributed: two processes under mpirun, one column block each
(on one GPU they share it; on two, one each), against SciPy; faults end the
call with an exception on every rank in bounded time."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPU_REPEATS, requires_cuda

JOB = Path(__file__).with_name("distributed_job.py")


def _mpirun(case: str, timeout: float) -> str:
    pytest.importorskip("mpi4py")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpirun, "-n", "2", "--oversubscribe", "--bind-to", "none", sys.executable, str(JOB),
           case, str(GPU_REPEATS)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return done.stdout + done.stderr


@requires_cuda
def test_two_processes_match_scipy():
    out = _mpirun("solve", 600)
    assert "rank 0: OK solve" in out and "rank 1: OK solve" in out, out


@requires_cuda
def test_a_rank_that_fails_before_the_first_collective():
    out = _mpirun("early", 60)
    assert "rank 0: RAISED" in out and "did not reach the exchange" in out, out


@requires_cuda
def test_a_rank_whose_gpu_never_starts():
    out = _mpirun("stalled", 90)
    assert "rank 0: RAISED" in out and "heard nothing" in out, out
    assert "rank 1: RAISED" in out and "rank 0 failed" in out, out


@requires_cuda
def test_two_processes_under_torchrun(tmp_path):
    pytest.importorskip("torch")
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("no torchrun")
    import numpy as np
    from scipy.optimize import linear_sum_assignment as scipy_lsa

    c = np.random.default_rng(3).integers(0, 5000, size=(700, 900)).astype(np.int32)
    np.save(tmp_path / "cost.npy", c)
    for maximize in (False, True):
        out = tmp_path / f"answer{int(maximize)}.npz"
        cmd = [torchrun, "--nproc-per-node", "2", "-m", "matchflow.distributed",
               str(tmp_path / "cost.npy"), "--comm", "torch", "--out", str(out)]
        if maximize:
            cmd.append("--maximize")
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        got = np.load(out)
        rows, cols = scipy_lsa(c, maximize=maximize)
        assert int(got["cost"]) == int(c[rows, cols].sum())
        assert int(c[got["row_ind"], got["col_ind"]].sum()) == int(got["cost"])

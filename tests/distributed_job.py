"""One rank of a multi-process assignment test (tests/test_distributed.py runs
it under mpirun).  Prints `rank R: OK ...` or `rank R: RAISED ...` lines."""
import sys
import time

import numpy as np
from mpi4py import MPI
from scipy.optimize import linear_sum_assignment as scipy_lsa

import matchflow.distributed as md
from matchflow import _core

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
case = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def say(text):
    print(f"rank {rank}: {text}", flush=True)


def solve_cases():
    rng = np.random.default_rng(0)
    for dtype in (np.int32, np.int64, np.float32, np.float64):
        for shape in ((1, 2), (50, 50), (120, 300), (301, 301)):
            for maximize in (False, True):
                c = (rng.random(shape) * 1000).astype(dtype)
                rows, cols = scipy_lsa(c, maximize=maximize)
                want = c[rows, cols].sum()
                for _ in range(repeats):
                    r = md.solve_assignment(md.column_block(c, rank, size), maximize=maximize,
                                            timeout=30)
                    got = c[r.row_ind, r.col_ind].sum()
                    assert np.isclose(float(got), float(want), rtol=1e-6), (dtype, shape, got, want)
                    assert np.isclose(float(r.cost), float(want), rtol=1e-6)
                    sign = -1 if maximize else 1
                    slack = sign * (c.astype(np.float64) - r.u[:, None] - r.v[None, :])
                    assert slack.min() >= -1e-3 * max(1.0, abs(float(want)))
    say("OK solve")


def early():
    if rank == 1:
        try:
            raise RuntimeError("this rank fails before the first collective")
        except RuntimeError as e:
            say(f"failed on purpose: {e}")
        time.sleep(15)
        return
    t0 = time.monotonic()
    try:
        md.solve_assignment(np.ones((8, 4)), timeout=4)
    except RuntimeError as e:
        say(f"RAISED after {time.monotonic() - t0:.1f} s: {e}")


class NeverStarts(_core.LsapPart):
    def launch(self):  # this rank's GPU never runs its part
        pass


def stalled():
    if rank == 1:
        md._core = type("core", (), {"LsapPart": NeverStarts})
    c = np.random.default_rng(1).integers(0, 100, size=(64, 64))
    t0 = time.monotonic()
    try:
        md.solve_assignment(md.column_block(c, rank, size), timeout=4)
    except RuntimeError as e:
        say(f"RAISED after {time.monotonic() - t0:.1f} s: {e}")


{"solve": solve_cases, "early": early, "stalled": stalled}[case]()

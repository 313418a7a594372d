"""Page-locked result arrays (cuda/src/common/pinned_results.cu, handed out
by _core.result_array): the mates of a GPU matching from host memory come
back in them, by one DMA, and their blocks are kept for the next call."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import GPU_REPEATS, requires_cuda
from oracles import assert_maximum_matching, scipy_cardinality

import matchflow
from matchflow import _core, generators
from matchflow._matching import GPU_METHODS

MIB = 1 << 20


def pinned(a: np.ndarray) -> bool:
    """Whether `a` lies in one of the core's page-locked blocks: the array
    NumPy made on the block has a memoryview of it as its base (a view of
    that array, e.g. SciPy's `indices[:nnz]`, has the array)."""
    base = a.base
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and type(base.obj).__name__ == "_PinnedBlock"


@pytest.mark.parametrize("n,dtype", [(0, np.int32), (10, np.int64), (300_001, np.int32),
                                     (MIB, np.float64)])
def test_result_array_is_a_plain_writable_array(n, dtype):
    a = _core.result_array(n, dtype)
    assert a.shape == (n,) and a.dtype == np.dtype(dtype)
    assert a.flags.writeable and a.flags.c_contiguous and a.flags.aligned
    a[:] = np.arange(n)
    assert np.array_equal(a, np.arange(n, dtype=dtype))


@requires_cuda
def test_large_results_are_page_locked_and_kept(monkeypatch):
    monkeypatch.delenv("MATCHFLOW_PINNED_RESULTS_MB", raising=False)
    matchflow.free_host_cache()
    a = _core.result_array(MIB, np.int32)  # 4 MiB
    assert pinned(a)
    address = a.ctypes.data
    assert address % (2 * MIB) == 0  # a fresh block starts on a huge page
    del a
    b = _core.result_array(MIB - 5, np.int32)  # the kept block fits
    assert pinned(b) and b.ctypes.data == address
    assert not pinned(_core.result_array(1000, np.int32))  # below 1 MiB: pageable
    del b
    assert matchflow.free_host_cache() >= 4 * MIB


@requires_cuda
def test_pinned_bytes_are_capped(tmp_path):
    """The cap counts every block, held or kept; a lowered cap lets kept
    blocks go.  In a fresh process: blocks held by other tests' results
    would count against the small caps here."""
    code = textwrap.dedent(f"""
        import os, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from matchflow import _core
        from test_pinned_results import MIB, pinned
        os.environ["MATCHFLOW_PINNED_RESULTS_MB"] = "0"
        assert not pinned(_core.result_array(MIB, np.int32))
        os.environ["MATCHFLOW_PINNED_RESULTS_MB"] = "6"
        held = _core.result_array(MIB, np.int32)  # 4 of the 6 MiB
        assert pinned(held)
        assert not pinned(_core.result_array(MIB, np.int32))  # 8 > 6: pageable
        del held
        again = _core.result_array(MIB, np.int32)  # the kept block
        assert pinned(again)
        del again
        os.environ["MATCHFLOW_PINNED_RESULTS_MB"] = "3"  # the kept 4 MiB block is let go
        assert not pinned(_core.result_array(MIB, np.int32))
        assert pinned(_core.result_array(MIB // 2, np.int32))  # 2 MiB fit under 3
        print("ok")
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def _pinned_copy(a: np.ndarray) -> np.ndarray:
    out = _core.result_array(a.shape[0], a.dtype)
    out[:] = a
    return out


@requires_cuda
@pytest.mark.parametrize("method", GPU_METHODS)
def test_matching_into_page_locked_mates(method, monkeypatch):
    """Mates of 2 MiB each come back page-locked, call after call (each call
    reusing the blocks the one before freed), and equal SciPy's cardinality;
    a CSR whose arrays are page-locked goes up by DMA alone."""
    monkeypatch.delenv("MATCHFLOW_PINNED_RESULTS_MB", raising=False)
    g = generators.uniform_random(2**19, 2**19 - 7, degree=2.5, seed=3)
    expected = scipy_cardinality(g)
    for _ in range(GPU_REPEATS):
        r = matchflow.maximum_matching(g, method=method)
        assert pinned(r.col4row) and pinned(r.row4col)
        assert_maximum_matching(g, r, expected)
    g_pinned = g.copy()
    g_pinned.indices, g_pinned.indptr = _pinned_copy(g.indices), _pinned_copy(g.indptr)
    r = matchflow.maximum_matching(g_pinned, method=method)
    assert pinned(g_pinned.indices) and pinned(g_pinned.indptr)  # what the call read
    assert_maximum_matching(g, r, expected)


@requires_cuda
def test_page_locked_mates_across_fork(tmp_path):
    """A child of fork() reads its own copy of a page-locked result while the
    parent writes its array; the parent's blocks from before the fork are
    let go, not kept (their pages may be shared copy-on-write with the
    child), and its next call is right."""
    code = textwrap.dedent("""
        import os, numpy as np, matchflow
        from matchflow import generators
        g1 = generators.uniform_random(2**19, seed=1)
        g2 = generators.uniform_random(2**19, degree=1.5, seed=2)
        r = matchflow.maximum_matching(g1, method="gpu-pr")
        mates = r.col4row
        assert type(mates.base.obj).__name__ == "_PinnedBlock"
        kept = mates.copy()
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.read(go_r, 1)  # the parent has written and freed its array, and solved again
            os._exit(0 if np.array_equal(mates, kept) else 3)
        os.close(go_r)
        mates[:] = -7  # a write while the child shares the pages
        del r, mates
        let_go = matchflow.free_host_cache() == 0  # nothing kept: both blocks were unpinned
        again = matchflow.maximum_matching(g2, method="gpu-pr")
        want = matchflow.maximum_matching(g2, method="pr", device="cpu").cardinality
        right = (again.cardinality == want and int(np.count_nonzero(again.col4row >= 0)) == want
                 and np.array_equal(again.row4col[again.col4row[again.col4row >= 0]],
                                    np.flatnonzero(again.col4row >= 0)))
        os.write(go_w, b"x")
        _, status = os.waitpid(pid, 0)
        print(let_go, right, os.waitstatus_to_exitcode(status))
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "True", "0"], out.stdout


@requires_cuda
def test_blocks_are_kept_without_fork(tmp_path):
    """The counterpart of the fork test: with no fork, the freed mates'
    blocks are kept (what test_page_locked_mates_across_fork's let_go
    tells apart)."""
    code = ("import matchflow; from matchflow import generators; "
            "g = generators.uniform_random(2**19, seed=1); "
            "r = matchflow.maximum_matching(g, method='gpu-pr'); del r; "
            "print(matchflow.free_host_cache())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, check=True)
    assert int(out.stdout) == 2 * 2 * MIB  # two 2 MiB blocks

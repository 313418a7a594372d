"""The core's preconditions (MATCHFLOW_ASSERT, cpp/include/matchflow/detail/
assert.hpp): compiled in by MATCHFLOW_ASSERTS=ON (the debug build .ci/run
tests), out otherwise.  A call that breaks one, which only a bug in the
Python layer could make, aborts with the condition and its place."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from matchflow import _core

ASSERTS = _core.build_info()["asserts_compiled"]

# source == sink: _flow._checked refuses it before the core is reached.
BROKEN_FLOW_CALL = textwrap.dedent("""
    import numpy as np
    from matchflow import _core
    ptr = np.array([0, 1, 1], dtype=np.int64)
    heads = np.array([1], dtype=np.int32)
    caps = np.array([5], dtype=np.int64)
    _core.maxflow(ptr, heads, caps, 0, 0, _core.FLOW_METHODS["pr"], 1, 0, True, -1.0, False)
""")


@pytest.mark.skipif(not ASSERTS, reason="a release build: preconditions are not checked")
def test_a_broken_precondition_aborts_with_its_place():
    proc = subprocess.run([sys.executable, "-c", BROKEN_FLOW_CALL], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "matchflow: precondition failed: net.source != net.sink" in proc.stderr
    assert "maxflow/dispatch.cpp" in proc.stderr

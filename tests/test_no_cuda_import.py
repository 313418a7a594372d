"""With no visible GPU (and possibly no driver) the package imports and solves."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import scipy.sparse as sp
import matchflow
assert not matchflow.cuda_available()
g = sp.csr_array([[1, 1], [1, 0]])
assert matchflow.structural_rank(g) == 2
r = matchflow.maximum_matching(g, device="auto")
assert r.device == "cpu", r.device
try:
    matchflow.maximum_matching(g, device="cuda")
except RuntimeError as exc:
    print("cuda refused:", exc)
else:
    raise SystemExit("device='cuda' should have raised")
matchflow.show_config()
print("OK")
"""


def test_import_and_solve_with_no_visible_gpu():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("OK")
    assert "cuda refused" in out.stdout

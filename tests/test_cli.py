"""The console script: `matchflow info` and `matchflow demo`."""
from __future__ import annotations

import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "matchflow._cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_info():
    out = run("info")
    assert out.returncode == 0, out.stderr
    assert "CUDA compiled" in out.stdout and "OpenMP" in out.stdout


def test_demo_checks_every_method():
    out = run("demo", "--n", "5000")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "scipy" in out.stdout and "WRONG" not in out.stdout
    assert out.stdout.count(" ok") >= 2

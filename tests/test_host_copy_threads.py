"""The staged copies' host threads (chunk_workers, populate_ahead in
cuda/src/common/host_copy.cuh), tested without a GPU: tests/cpp/
host_copy_threads.cpp built with the C++ compiler against the CUDA headers,
as it is and under ThreadSanitizer.  Only GPU runs use these classes, so
this is their test on machines without one."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "cpp" / "host_copy_threads.cpp"


def _cuda_include() -> Path | None:
    nvcc = shutil.which("nvcc")
    for base in ([Path(nvcc).resolve().parents[1]] if nvcc else []) + [Path("/usr/local/cuda")]:
        if (base / "include" / "cuda_runtime.h").is_file():
            return base / "include"
    return None


@pytest.fixture(scope="module")
def toolchain():
    cxx = shutil.which("g++") or shutil.which("c++")
    include = _cuda_include()
    if cxx is None or include is None:
        pytest.skip("needs a C++ compiler and the CUDA headers (cuda_runtime.h)")
    return cxx, include


def _build(tmp_path: Path, toolchain, flags: list[str]):
    cxx, include = toolchain
    exe = tmp_path / "host_copy_threads"
    cmd = [cxx, "-std=c++17", "-O1", "-g", *flags, f"-I{ROOT / 'cuda' / 'src'}",
           f"-I{ROOT / 'cpp' / 'include'}", f"-I{include}", str(SOURCE), "-o", str(exe),
           "-pthread"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300), exe


def _run(exe: Path) -> None:
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.stdout, out.stderr[-4000:])


def test_hand_offs_deliver_every_chunk(tmp_path, toolchain):
    built, exe = _build(tmp_path, toolchain, [])
    assert built.returncode == 0, built.stderr  # the header compiles wherever CUDA's headers are
    _run(exe)


def test_hand_offs_race_free_under_thread_sanitizer(tmp_path, toolchain):
    built, exe = _build(tmp_path, toolchain, ["-fsanitize=thread"])
    if built.returncode != 0 and "tsan" in built.stderr.lower():
        pytest.skip("this toolchain cannot link -fsanitize=thread (no libtsan)")
    assert built.returncode == 0, built.stderr
    _run(exe)

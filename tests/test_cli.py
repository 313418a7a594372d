"""The console script: `matchflow info`, `matchflow demo` and `matchflow solve`."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import maximum_bipartite_matching, min_weight_full_bipartite_matching
from scipy.sparse.csgraph import maximum_flow as scipy_flow

from conftest import data_dir
from matchflow import _cli, _cli_solve


def run(*args):
    return subprocess.run([sys.executable, "-m", "matchflow._cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_info():
    out = run("info")
    assert out.returncode == 0, out.stderr
    assert "CUDA compiled" in out.stdout and "OpenMP" in out.stdout


def test_demo_checks_every_method_of_the_four_problems():
    out = run("demo", "--n", "5000", "--assignment-n", "100", "--flow-side", "40")
    assert out.returncode == 0, out.stdout + out.stderr
    for title in ("Maximum matching", "Linear assignment", "Maximum flow",
                  "Sparse preprocessing"):
        assert title in out.stdout
    assert "scipy" in out.stdout and "WRONG" not in out.stdout
    assert out.stdout.count(" ok") >= 7


# ---- matchflow solve ------------------------------------------------------------------



def solve(capsys, *args):
    code = _cli.main(["solve", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _data_files():
    root = data_dir()
    if root is None:
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("MANIFEST")
                  and p.name != "assignopt.txt")


@pytest.mark.parametrize("path", _data_files(), ids=lambda p: p.name)
def test_solve_every_data_file(path, tmp_path, capsys):
    out = tmp_path / "answer.txt"
    code, text = solve(capsys, path, "--output", out, "--device", "cpu")
    loaded = _cli_solve.load(path)
    if loaded.guess == "sparse-assignment":  # DIMACS asn: SciPy's verdict
        try:
            rows, cols = min_weight_full_bipartite_matching(loaded.data.costs)
        except ValueError as e:
            assert code == 2 and str(e) in text, text
            return
        assert code == 0, text
        assert f"cost: {loaded.data.costs.toarray()[rows, cols].sum()}" in text
        return
    assert code == 0, text
    assert "(guessed; --problem to choose)" in text
    lines = out.read_text().splitlines()
    if loaded.guess == "matching":
        pattern = sp.csr_array(loaded.data, copy=True)
        pattern.data = np.ones_like(pattern.data, dtype=np.int8)
        pattern.sum_duplicates()
        want = int(np.count_nonzero(maximum_bipartite_matching(
            pattern, perm_type="column") >= 0)) if min(pattern.shape) else 0
        assert f"matched pairs: {want}" in text
        pairs = np.array([line.split() for line in lines if line], dtype=np.int64).reshape(-1, 2)
        assert len(pairs) == want and len(set(pairs[:, 0])) == len(set(pairs[:, 1])) == want
        assert all(pattern[i, j] for i, j in pairs[:50])
    elif loaded.guess == "assignment":
        c = np.asarray(loaded.data)
        rows, cols = scipy_lsa(c)
        assert f"cost: {c[rows, cols].sum()}" in text
        pairs = np.array([line.split() for line in lines], dtype=np.int64)
        assert c[pairs[:, 0], pairs[:, 1]].sum() == c[rows, cols].sum()
    else:  # flow
        graph, s, t = loaded.data
        want = scipy_flow(sp.csr_array(graph, dtype=np.int32), s, t).flow_value
        assert f"maximum flow: {want}" in text and lines[0] == f"s {want}"


def test_solve_problem_choices(tmp_path, capsys):
    path = tmp_path / "a.mtx"
    a = sp.random(30, 40, density=0.2, random_state=0, format="coo")
    scipy.io.mmwrite(path, a)
    for problem in ("rank", "dm", "sparse-assignment"):
        out = tmp_path / f"{problem}.npz"
        code, text = solve(capsys, path, "--problem", problem, "--output", out)
        assert code == 0 and f"problem: {problem}" in text, text
    assert {"p", "q", "r", "s", "rr", "cc"} <= set(np.load(tmp_path / "dm.npz").files)
    code, text = solve(capsys, path, "--problem", "flow")
    assert code != 0 and "does not read" in str(text)


def test_solve_dense_npy_and_dimacs_answers(tmp_path, capsys):
    c = np.random.default_rng(0).integers(0, 100, size=(20, 30))
    np.save(tmp_path / "c.npy", c)
    code, text = solve(capsys, tmp_path / "c.npy", "--maximize", "--output", tmp_path / "o.txt")
    rows, cols = scipy_lsa(c, maximize=True)
    assert code == 0 and f"cost: {c[rows, cols].sum()}" in text
    asn = tmp_path / "a.asn"
    asn.write_text("p asn 4 4\nn 1\nn 2\na 1 3 5\na 1 4 2\na 2 3 1\na 2 4 7\n")
    code, text = solve(capsys, asn, "--output", tmp_path / "o.txt")
    assert code == 0, text
    assert (tmp_path / "o.txt").read_text().split("\n")[:3] == ["s 3", "f 1 4 2", "f 2 3 1"]


@pytest.mark.parametrize("name,text,line", [
    ("bad.max", "p max 3 2\nn 1 s\nn 3 t\na 1 2 5\na 2 x 3\n", 5),
    ("bad.asn", "p asn 4 2\nn 1\na 1 3 5\na 1 9 2\n", 4),
    ("bad.asn", "p asn 4 1\nn 1\nq 1 3\n", 3),
    ("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 2\n", 4),
    ("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 x 2\n1 1 1.0\n2 2 1\n", 2),
])
def test_solve_malformed_files_name_the_line(tmp_path, capsys, name, text, line):
    path = tmp_path / name
    path.write_text(text)
    code, out = solve(capsys, path)
    assert code == 2 and f"line {line}" in out, out


def test_solve_missing_file(capsys):
    code, out = solve(capsys, "/nonexistent/file.mtx")
    assert code == 2 and "No such file" in out


# ---- matchflow bench ------------------------------------------------------------------

def test_bench_all_quick(tmp_path, capsys):
    import json
    import time
    t0 = time.perf_counter()
    code = _cli.main(["bench", "all", "--quick", "--out", str(tmp_path)])
    seconds = time.perf_counter() - t0
    text = capsys.readouterr().out
    assert code == 0, text
    assert seconds < 60  # the promise of --quick on the 2-core CI machine
    results = json.loads((tmp_path / "results.json").read_text())
    meta, rows = results["meta"], results["rows"]
    assert {"matchflow", "commit", "python", "numpy", "scipy", "gpus", "command"} <= set(meta)
    assert meta["command"] == f"matchflow bench all --quick --out {tmp_path}"
    assert {r["suite"] for r in rows} == {"matching", "assignment", "batched", "flow",
                                          "preprocess"}
    for r in rows:
        assert r["ok"] and all(r["ok"].values()), r
        assert "scipy" in r["seconds"] and len(r["seconds"]) == len(r["ok"]) + 1
    assert "## flow" in (tmp_path / "results.md").read_text()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "profile.png").exists() and (tmp_path / "speedup.png").exists()

"""Hostile inputs, each in a subprocess: a crash or a hang fails the test
instead of the run.  Each case must either succeed with the right answer or
raise the exception SciPy would (or a clear one where SciPy has none), and
refusals must come at once, without a pass over logical entries that were
never stored.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Imported in every case; `outcome(fn)` prints what the call did as JSON:
# the exception's type and message, or the checks' verdict, and the seconds
# the call took.  `limit_memory()` caps the address space (RLIMIT_AS) a
# little above what is in use, so that "cannot fit" means the same on a
# 24 GiB CI runner and a 128 GiB GPU host.
PRELUDE = textwrap.dedent("""
    import json, resource, sys, threading, time
    import numpy as np, scipy.sparse as sp
    import matchflow
    from scipy.optimize import linear_sum_assignment as scipy_lsa

    def limit_memory(extra=2 << 30):
        with open("/proc/self/status") as f:
            used = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (used + extra, resource.RLIM_INFINITY))

    def outcome(fn):
        start = time.perf_counter()
        try:
            value = fn()
            result = {"ok": True if value is None else bool(value)}
        except Exception as exc:
            result = {"exc": type(exc).__name__, "msg": str(exc)[:300]}
        result["seconds"] = time.perf_counter() - start
        print(json.dumps(result))

    def same_cost(c, maximize=False, **kw):
        c = np.asarray(c)
        r, k = matchflow.linear_sum_assignment(c, maximize, **kw)
        r0, k0 = scipy_lsa(c, maximize)
        return c[r, k].sum() == c[r0, k0].sum()
""")

# Refusals must take less than this inside the subprocess (imports excluded).
REFUSAL_SECONDS = 1.0
HANG_SECONDS = 120


def run_case(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, f"crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expect_error(code: str, exc: str, match: str = "", seconds: float = REFUSAL_SECONDS):
    got = run_case(code)
    assert got.get("exc") == exc, got
    assert match in got["msg"], got
    assert got["seconds"] < seconds, got


def expect_ok(code: str):
    got = run_case(code)
    assert got.get("ok") is True, got


# ---- huge logical shapes of tiny stored data -----------------------------------

@pytest.mark.parametrize("fn", ["linear_sum_assignment", "solve_assignment"])
@pytest.mark.parametrize("value, shape", [
    ("1.0", "(1, 10**12)"),            # SciPy: MemoryError, 7.28 TiB
    ("np.float32(1)", "(10**6, 10**6)"),
    ("np.int8(3)", "(10**6, 10**6)"),
    ("True", "(10**7, 10**6)"),
    ("np.uint64(2**63)", "(10**6, 10**6)"),
])
def test_broadcast_views_are_refused_at_once(fn, value, shape):
    expect_error(f"outcome(lambda: matchflow.{fn}(np.broadcast_to({value}, {shape})))",
                 "MemoryError", "Unable to allocate")


def test_broadcast_view_that_fits_is_solved():
    expect_ok("c = np.broadcast_to(np.arange(3.0)[:, None], (3, 10**6))\n"
              "outcome(lambda: same_cost(c) and same_cost(c, True))")


@pytest.mark.parametrize("fn", ["maximum_bipartite_matching", "structural_rank",
                                "maximum_matching", "maximum_transversal", "dulmage_mendelsohn",
                                "min_weight_full_bipartite_matching"])
@pytest.mark.parametrize("fmt, shape", [("coo", "(n, n)"), ("csr", "(4, n)"), ("csc", "(n, 4)")])
def test_huge_sparse_shapes_are_refused_at_once(fn, fmt, shape):
    # 2^31 - 2 rows or columns and one entry: the mate arrays alone (or the
    # CSR offsets) need 8-16 GiB.  The shapes keep the input's own index
    # arrays small, as a caller's would be.
    expect_error(f"""
        n = 2**31 - 2
        g = sp.coo_array(([1.0], ([0], [0])), shape={shape}).asformat("{fmt}")
        limit_memory()
        outcome(lambda: matchflow.{fn}(g))""", "MemoryError", "Unable to allocate")


@pytest.mark.parametrize("call", ["matchflow.maximum_flow(g.tocsr(), 0, 1)",
                                  "matchflow.solve_flow(g, 0, 1)",
                                  "matchflow.solve_flow(g, 0, 1, return_flow=False)"])
def test_huge_flow_networks_are_refused_at_once(call):
    expect_error(f"""
        n = 2**31 - 2
        g = sp.coo_array((np.array([5], dtype=np.int64), ([0], [1])), shape=(n, n))
        limit_memory()
        outcome(lambda: {call})""", "MemoryError", "Unable to allocate")


@pytest.mark.parametrize("shape", ["(2**31, 4)", "(4, 2**31 + 5)", "(2**62, 2**62)",
                                   "(2**63 - 1, 1)"])
def test_shapes_past_int32_ids_are_value_errors(shape):
    expect_error(f"g = sp.coo_array(([1.0], ([0], [0])), shape={shape})\n"
                 f"outcome(lambda: matchflow.maximum_bipartite_matching(g))", "ValueError")


# ---- corrupted index arrays ----------------------------------------------------

_CORRUPT = {
    "index past the end": "g = sp.csr_array(np.eye(4)); g.indices[2] = 7",
    "negative index": "g = sp.csr_array(np.eye(4)); g.indices[1] = -3",
    "decreasing offsets": "g = sp.csr_array(np.eye(4)); g.indptr[2] = 0",
    "short offsets": "g = sp.csr_array(np.eye(4)); g.indptr = g.indptr[:-1]",
    "offsets past the data": "g = sp.csr_array(np.eye(4)); g.indptr[-1] = 99",
    "csc index past the end": "g = sp.csc_array(np.eye(4)); g.indices[0] = 4",
    "coo negative row": "g = sp.coo_array(np.eye(4)); g.row[0] = -1",
    "coo column past the end": "g = sp.coo_array(np.eye(4)); g.col[3] = 4",
    "bsr index past the end": "g = sp.bsr_array(np.eye(4), blocksize=(2, 2)); g.indices[0] = 9",
    "int64 offsets past 2^31": "g = sp.csr_array(np.eye(4)); "
                               "g.indptr = g.indptr.astype(np.int64); g.indptr[-1] = 2**40",
}


@pytest.mark.parametrize("call", ["maximum_bipartite_matching(g)", "structural_rank(g)",
                                  "solve_flow(g.astype(np.int64), 0, 3)"])
@pytest.mark.parametrize("name", list(_CORRUPT))
def test_corrupted_index_arrays_are_value_errors(call, name):
    expect_error(f"{_CORRUPT[name]}\noutcome(lambda: matchflow.{call})", "ValueError")


@pytest.mark.parametrize("name", [n for n in _CORRUPT if not n.startswith(("coo", "bsr", "csc"))])
def test_corrupted_flow_csr_is_a_value_error(name):
    expect_error(f"{_CORRUPT[name]}\ng.data = g.data.astype(np.int64)\n"
                 f"outcome(lambda: matchflow.maximum_flow(g, 0, 3))", "ValueError")


# ---- dense layouts and odd objects ------------------------------------------------

@pytest.mark.parametrize("make", [
    "c = np.random.default_rng(0).random((300, 200)); c.flags.writeable = False",
    "c = np.asfortranarray(np.random.default_rng(0).integers(0, 9, (700, 500)))",
    "c = np.ma.masked_array(np.random.default_rng(0).random((300, 300)), mask=True)",
    "c = np.random.default_rng(0).random((900, 1400))[::2, ::-3]",
    "c = np.random.default_rng(0).random((300, 200)).astype('>f8')",
])
def test_unusual_layouts_are_solved(make):
    expect_ok(f"{make}\noutcome(lambda: same_cost(c) and same_cost(c, True, device='cpu'))")


def test_array_conversion_errors_propagate_as_in_scipy():
    expect_error("""
        class Bad:
            def __array__(self, *args, **kwargs):
                raise RuntimeError("no array here")
        outcome(lambda: matchflow.linear_sum_assignment(Bad()))""",
                 "RuntimeError", "no array here")
    expect_error("""
        class Bad:
            def __array__(self, *args, **kwargs):
                raise RuntimeError("no array here")
        outcome(lambda: matchflow.solve_assignment(Bad()))""", "RuntimeError", "no array here")


# ---- keyword values ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc", [
    ("threads=0", "ValueError"), ("threads=-1", "ValueError"),
    ("threads=10**9", "ValueError"), ("threads='abc'", "ValueError"),
    ("threads=2**70", "ValueError"), ("device=None", "TypeError"),
    ("device='cuda:99'", "RuntimeError"), ("device='gpu'", "ValueError"),
    ("method=None", "ValueError"), ("method='simplex'", "ValueError"),
])
@pytest.mark.parametrize("call", [
    "matchflow.solve_assignment(np.eye(5), {})",
    "matchflow.maximum_matching(sp.csr_array(np.eye(5)), {})",
    "matchflow.solve_flow(sp.csr_array(np.eye(5, k=1, dtype=np.int64)), 0, 4, {})",
])
def test_bad_keywords_are_clear_errors(call, kwargs, exc):
    expect_error(f"outcome(lambda: {call.format(kwargs)})", exc)


# ---- concurrency -----------------------------------------------------------------------

def test_eight_threads_at_once_get_right_answers():
    expect_ok("""
        from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_match
        rng = np.random.default_rng(0)
        costs = [rng.integers(0, 50, (int(rng.integers(50, 400)),) * 2) for _ in range(16)]
        graphs = [sp.random_array((3000, 3000), density=0.001, format="csr", rng=i)
                  for i in range(16)]
        want_costs = [c[scipy_lsa(c)].sum() for c in costs]
        want_sizes = [int((scipy_match(g, perm_type="column") >= 0).sum()) for g in graphs]
        errors = []

        def work(k):
            try:
                for i in range(k, 16, 8):
                    r, c = matchflow.linear_sum_assignment(costs[i])
                    assert costs[i][r, c].sum() == want_costs[i]
                    a = matchflow.solve_assignment(costs[i], threads=2)
                    assert a.cost == want_costs[i]
                    m = matchflow.maximum_matching(graphs[i], method="pdbfs", threads=2)
                    assert m.cardinality == want_sizes[i]
                    assert matchflow.structural_rank(graphs[i]) == want_sizes[i]
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        outcome(lambda: not errors or print(errors, file=sys.stderr))""")

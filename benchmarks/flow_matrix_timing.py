"""SciPy's flow matrix for Delaunay 2^20: the core's builder at 1, 4, 16 threads vs SciPy sparse
operations (what it replaced).  Run: python benchmarks/flow_matrix_timing.py"""
import time
import numpy as np
import scipy.sparse as sp
from matchflow import _flow
from matchflow.generators import flow

inst = flow.delaunay_flow(1 << 20, seed=0)[0]
net = _flow._checked(inst.graph, inst.source, inst.sink)
arc_flow = np.random.default_rng(0).integers(0, 100, net.n_arcs)

def scipy_ops():
    a = sp.csr_array((arc_flow, net.heads, net.ptr), shape=(net.n, net.n))
    a.sum_duplicates()
    return a - a.T.tocsr()

def best(fn, k=5):
    times = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)

print(f"delaunay 2^20: n {net.n}, arcs {net.n_arcs}")
print(f"scipy sparse ops      {best(scipy_ops):.4f} s")
for threads in (1, 4, 16):
    seconds = best(lambda: _flow._flow_matrix(net, arc_flow, True, threads))
    print(f"core, {threads:2d} threads      {seconds:.4f} s")

"""Maximum flow and minimum cut: the SciPy drop-in and the rich entry point.

The input is checked once here, with NumPy passes only (no Python loop over
arcs), and handed to the core as a flow network: int64 offsets, int32 heads,
int32 capacities when their dtype fits int32 (as SciPy's do), else int64, one
arc per stored entry (duplicates are parallel arcs).
"""
from __future__ import annotations

import operator
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from . import _core, _device
from ._validation import (_INT32_MAX, _INT64_MAX, _check_structure, _checked_compressed,
                          check_allocation, check_choice, check_threads, check_vertex_ids,
                          stored_entries, team_size)


# Method name -> the core's enumerator (flow_method, maxflow.hpp).
_METHOD_CODES = _core.FLOW_METHODS
CPU_METHODS = ("pr", "ppr", "bk")
GPU_METHODS = ("gpu-pr",)
# SciPy's method names: SciPy's own algorithms on its residual graph and
# arc order (scipy_flows.cpp), so that the flow is the very one SciPy
# returns; on the CPU, and never auto's pick (SciPy's speed).
SCIPY_METHODS = ("dinic", "edmonds_karp")
METHODS = ("auto",) + CPU_METHODS + GPU_METHODS + SCIPY_METHODS

# At or above this many arcs "auto" runs on a GPU when one is usable:
# gpu-pr's whole call beat pr's on every instance of the flow suite, the
# smallest of 0.5M arcs, and ppr's on 16 threads down to the complete DAG of
# 1000 vertices (benchmarks/NOTES.md, "The `auto` thresholds").
GPU_MIN_ARCS = 400_000
# CPU "auto" is "ppr" from this many arcs on a team of at least
# PPR_MIN_THREADS, else "pr".  Same suite, 16 threads: ppr's whole call beat
# pr's on 16 of the 18 instances (geometric mean 1.40x on the 17 of >= 10^6
# arcs; GENRMF long 1.1x slower), the smallest the 0.5M-arc complete DAG
# (19 vs 24 ms); smaller graphs and smaller teams were not measured there.
PPR_MIN_ARCS = 400_000
PPR_MIN_THREADS = 16
# CPU "auto" takes "bk" for an image's graph cut, where at most 1 in THIN_PIXELS
# of the pixels may have fewer than 2 out-arcs: a pixel whose arcs all but one
# have capacity 0 and were not stored (7 of the million of
# segmentation_grid(1024, 1024, seed=0), 35 at 2048^2, 4 of segmentation_volume
# (128, 128, 128, seed=0)).  Half of a matching-as-flow network's vertices have
# one (benchmarks/NOTES.md, "Graph cuts").
THIN_PIXELS = 100

# Every excess in push-relabel is at most the capacity leaving the source;
# below 2^62 it, and every sum of two, fits in int64 (maxflow.hpp).
MAX_SOURCE_CAPACITY = 2**62

_VARIANTS = ("tuned", "paper")


@dataclass(frozen=True)
class FlowStats:
    """What one run did.  Fields a method does not use are 0."""

    seconds_total: float = 0.0     #: wall time of the whole call, checks and flow matrix included
    seconds_setup: float = 0.0     #: residual graph (reverse arcs), allocations
    seconds_transfer: float = 0.0  #: host <-> device copies (GPU)
    seconds_phase1: float = 0.0    #: maximum preflow, then the minimum cut
    seconds_phase2: float = 0.0    #: excess returned to the source (only with the flow)
    seconds_global_relabel: float = 0.0  #: of both phases, in global relabels
    #: of phase 1, the cut's own search: a CPU method whose preflow did not end on
    #: exact labels searches the residual graph for the vertices that reach the sink
    seconds_cut: float = 0.0
    pushes: int = 0
    relabels: int = 0
    global_relabels: int = 0
    bfs_levels: int = 0            #: levels of all global relabels (gpu-pr, ppr)
    gaps: int = 0                  #: gap-heuristic firings
    iterations: int = 0            #: rounds / cycles of the main loop
    kernel_launches: int = 0
    #: gpu-pr: bytes each capacity took to the GPU (4 when given as int32, or
    #: when every one fits int32 and the network is large enough to stage; else 8);
    #: pr: bytes a residual capacity takes in its arc records (4 when every
    #: capacity is below 2**30, else 8)
    capacity_bytes: int = 0
    device: str = "cpu"            #: "cpu" or "cuda:N"


@dataclass(frozen=True)
class _Network:
    """A validated flow network, as the core takes it."""

    n: int
    ptr: np.ndarray    # int64, n + 1
    heads: np.ndarray  # int32, m
    caps: np.ndarray   # int32 (a dtype that fits it) or int64, m, >= 0
    source: int
    sink: int

    @property
    def n_arcs(self) -> int:
        return int(self.heads.shape[0])

    def tails(self) -> np.ndarray:
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.ptr))


@dataclass(frozen=True)
class MaximumFlowResult:
    """A maximum flow, a minimum cut, and how they were found.

    `flow_value` and `flow` are what SciPy's result carries.

    Attributes
    ----------
    flow_value : int
        The value of the maximum flow.
    flow : csr_matrix or csr_array of int64, or None
        The flow as SciPy gives it: entry (u, v) is the flow from u to v
        minus the flow from v to u (antisymmetric), stored for every arc of
        the input and its reverse.  The container kind is the input's.
        None when `solve_flow` ran with ``return_flow=False``.
    source_side : ndarray of bool, shape (n,)
        A minimum cut: the vertices that cannot reach the sink in the
        residual graph.  The source is in it, the sink is not.
    method, device : str
        The algorithm and the device that ran it ("cpu" or "cuda:N").
    stats : FlowStats
    """

    flow_value: int
    flow: sp.csr_array | sp.csr_matrix | None
    source_side: np.ndarray
    method: str
    device: str
    stats: FlowStats = field(default_factory=FlowStats)
    _network: _Network | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        return f"MaximumFlowResult with value of {self.flow_value}"  # as SciPy

    def cut_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """The arcs of positive capacity from `source_side` to the rest.

        Each is saturated by every maximum flow, and their capacities sum to
        `flow_value`.  Parallel arcs appear once each.

        Returns
        -------
        u, v : ndarray of int32
            Tails and heads of the cut arcs, in CSR order.
        """
        net = self._network
        if net is None:
            empty = np.empty(0, dtype=np.int32)
            return empty, empty
        tails = net.tails()
        side = self.source_side
        crossing = side[tails] & ~side[net.heads] & (net.caps > 0)
        return tails[crossing], net.heads[crossing]


# ---- checks ----------------------------------------------------------------------

def _vertex(value, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {type(value).__name__}") from None


def _check_vertices(shape, source, sink) -> tuple[int, int]:
    """SciPy's checks and messages, in SciPy's order (after the dtype)."""
    source, sink = _vertex(source, "source"), _vertex(sink, "sink")
    if source == sink:
        raise ValueError("source and sink vertices must differ")
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError("graph must be specified as a square matrix.")
    n = int(shape[0])
    if source < 0 or source >= n:
        raise ValueError(f"source value ({source}) must be between 0 and {n - 1}")
    if sink < 0 or sink >= n:
        raise ValueError(f"sink value ({sink}) must be between 0 and {n - 1}")
    check_vertex_ids(n, "vertices")
    return source, sink


def _check_dtype(graph) -> None:
    # As SciPy: bool is not an integer type.
    if not issubclass(graph.dtype.type, np.integer):
        raise ValueError("graph capacities must be integers")


def _int64_capacities(data: np.ndarray, ptr: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The capacities as int64; every one in [0, 2^63)."""
    if data.dtype == np.uint64 and data.size and data.max() > _INT64_MAX:
        arc = int(np.argmax(data > _INT64_MAX))
        raise ValueError(f"graph capacities must fit in int64; arc {_arc_name(arc, ptr, heads)} "
                         f"has capacity {int(data[arc])}")
    return _non_negative(np.ascontiguousarray(data, dtype=np.int64), ptr, heads)


def _capacities(data: np.ndarray, ptr: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The capacities, checked: as int32 (SciPy's type, which every method
    reads as it is: int32 ones need no copy) when their dtype fits it, else
    as int64."""
    if not np.can_cast(data.dtype, np.int32):
        return _int64_capacities(data, ptr, heads)
    return _non_negative(np.ascontiguousarray(data, dtype=np.int32), ptr, heads)


def _non_negative(caps: np.ndarray, ptr: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """`caps`, once none is negative (else ValueError naming the first such arc)."""
    arc = _core.find_negative(caps)  # in parallel (NumPy's min is one thread)
    if arc >= 0:
        raise ValueError(f"graph capacities must be non-negative; arc "
                         f"{_arc_name(arc, ptr, heads)} has capacity {int(caps[arc])}")
    return caps


def _arc_name(arc: int, ptr: np.ndarray, heads: np.ndarray) -> str:
    tail = int(np.searchsorted(ptr, arc, side="right")) - 1
    return f"({tail}, {int(heads[arc])})"


def _source_capacity(ptr, heads, caps, source: int) -> int:
    """Exact total capacity of the arcs leaving the source (self loops carry
    no flow), in one parallel pass: NumPy's took 4 ms of the validation's 13
    on a 2048^2 segmentation_grid, whose source has an arc to every pixel
    (benchmarks/results/h200/flow-call-overhead-value-only.txt)."""
    lo, hi = int(ptr[source]), int(ptr[source + 1])
    return _core.sum_capacities(caps[lo:hi], heads[lo:hi], source)


def _network(ptr, heads, data, source: int, sink: int) -> _Network:
    caps = _capacities(data, ptr, heads)
    total = _source_capacity(ptr, heads, caps, source)
    if total >= MAX_SOURCE_CAPACITY:
        raise ValueError(f"the arcs leaving the source have total capacity {total}; it must be "
                         f"below 2**62 so that no excess overflows int64")
    return _Network(int(ptr.shape[0]) - 1, ptr, heads, caps, source, sink)


def _csr_arrays(graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int64 offsets, int32 heads, raw capacities) of any checked sparse
    input, one arc per stored entry: duplicates stay parallel arcs."""
    fmt = graph.format
    if fmt == "csr":
        ptr, heads = _checked_compressed(graph)
        return ptr, heads, graph.data[:heads.shape[0]]
    if fmt == "csc":
        _checked_compressed(graph)
        csr = graph.tocsr()  # a transpose: keeps duplicates and explicit zeros
        return (np.ascontiguousarray(csr.indptr, dtype=np.int64),
                np.ascontiguousarray(csr.indices, dtype=np.int32), csr.data)
    _check_structure(graph)
    coo = graph.tocoo()
    rows, cols = coo.coords if hasattr(coo, "coords") else (coo.row, coo.col)
    order = np.argsort(rows, kind="stable")  # CSR order, entries of a row as stored
    counts = np.bincount(rows, minlength=graph.shape[0])
    ptr = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    return ptr, cols[order].astype(np.int32), coo.data[order]


def _least_flow_bytes(graph) -> int:
    """A lower bound on what solving allocates: int64 offsets of the
    residual graph (forward and reverse), labels and excesses, and per arc
    its int64 capacity, flow and reverse arc.  Checked before any pass over
    the input, so that a huge shape with few stored entries is refused at
    once."""
    return 32 * (int(graph.shape[0]) + 1) + 24 * stored_entries(graph)


def _checked(graph, source, sink) -> _Network:
    """Everything SciPy checks (its messages, its order), then ours."""
    _check_dtype(graph)
    source, sink = _check_vertices(graph.shape, source, sink)
    check_allocation(_least_flow_bytes(graph), f"a maximum flow on {graph.shape[0]} vertices")
    ptr, heads, data = _csr_arrays(graph)
    return _network(ptr, heads, data, source, sink)


# ---- method and device -----------------------------------------------------------

def _graph_cut_shaped(net: _Network) -> bool:
    """A vision graph cut's shape (segmentation_grid's, Boykov & Jolly's):
    terminal links on many vertices (the source's arcs reach an eighth of
    them or more) and every other vertex with a few neighbours (at most 32
    out-arcs, its terminal link included, and at least 2 but for 1 in
    THIN_PIXELS).  Matching-as-flow networks fail the second test: their
    right vertices have one arc, to the sink."""
    if net.n < 16:
        return False
    if net.ptr[net.source + 1] - net.ptr[net.source] < net.n // 8:
        return False
    degree = np.diff(net.ptr)
    degree[[net.source, net.sink]] = 2  # the terminals pass, without a copy of the rest
    thin = int(np.count_nonzero(degree < 2))
    return bool(degree.max() <= 32 and thin * THIN_PIXELS <= net.n)


def _auto_method(backend: str, net: _Network | None = None, threads: int = 0) -> str:
    """auto's method on `backend` (threads: check_threads' value): on the
    CPU, "bk" for graph cuts shaped like images, else "ppr" for large graphs
    on a large team, else "pr"."""
    if backend == "cuda":
        return "gpu-pr"
    # bk's phase 1 took 0.080 s where pr's took 0.27 s on a 1024 x 1024
    # segmentation_grid, one thread; on one thread its whole call beat ppr's
    # on 16 on every vision instance of results/h200/flow-graph-cuts.md
    # (benchmarks/NOTES.md, "Graph cuts"), and it uses the team too.
    if net is not None and _graph_cut_shaped(net):
        return "bk"
    n_arcs = 0 if net is None else net.n_arcs
    if n_arcs >= PPR_MIN_ARCS and team_size(threads) >= PPR_MIN_THREADS:
        return "ppr"
    return "pr"


def _resolve(net: _Network, method: str, device, threads: int) -> tuple[str, str, int]:
    """Pick (method, backend, ordinal) from the user's method= and device=."""
    check_choice(method, "method", METHODS)
    method, backend, ordinal = _device.resolve_method(
        method, device, CPU_METHODS, GPU_METHODS, large_enough=net.n_arcs >= GPU_MIN_ARCS)
    if method == "auto":
        method = _auto_method(backend, net, threads)
    return method, backend, ordinal


@dataclass(frozen=True)
class _Tuning:
    threads: int = 0
    return_flow: bool = True
    relabel_freq: float = -1.0
    paper_variant: bool = False


def _tuning(threads=None, return_flow=True, relabel_freq=None, variant="tuned") -> _Tuning:
    check_choice(variant, "variant", _VARIANTS)
    if relabel_freq is not None and not (np.isfinite(relabel_freq) and relabel_freq > 0):
        raise ValueError(f"relabel_freq must be a positive number; got {relabel_freq!r}")
    return _Tuning(check_threads(threads), bool(return_flow),
                   -1.0 if relabel_freq is None else float(relabel_freq), variant == "paper")


# ---- solve -----------------------------------------------------------------------

def _solve(net: _Network, method: str, ordinal: int, t: _Tuning):
    """(value, arc_flow, source_side, stats, matrix): the method builds the
    flow matrix where the flow is (matrix not None): the CPU methods from
    their residual graph, the GPU when it has the memory."""
    return _core.maxflow(net.ptr, net.heads, net.caps, net.source, net.sink,
                         _METHOD_CODES[method], t.threads, ordinal, t.return_flow,
                         t.relabel_freq, t.paper_variant, want_matrix=True)


def _flow_matrix(net: _Network, arc_flow: np.ndarray | None, array: bool, threads: int = 0,
                 built=None):
    """SciPy's flow matrix: f(u, v) - f(v, u) on the arcs and their reverses.

    The pattern is SciPy's: the input's pattern plus its transpose, sorted,
    explicit zeros included (a self-loop gives a stored 0).  Built by the
    core (parallel by rows, parallel arcs summed): where the flow is
    (`built`: the CPU methods' residual graph, the GPU), else from the arc
    flows; wrapped without a copy; the index dtype is int32 while 2 m fits, as
    SciPy's own construction picks it.
    """
    if built is None:
        assert arc_flow is not None  # the arc flows, where the method built no matrix
        built = _core.flow_matrix(net.ptr, net.heads, arc_flow, threads)
    indptr, indices, data = built
    index = np.int32 if 2 * net.n_arcs < _INT32_MAX else np.int64
    kind = sp.csr_array if array else sp.csr_matrix
    flow = kind((data, indices.astype(index, copy=False), indptr.astype(index, copy=False)),
                shape=(net.n, net.n))
    flow.has_sorted_indices = True  # sorted and summed by the core: no SciPy re-check
    flow.has_canonical_format = True
    return flow


def _run_scipy(net: _Network, start: float, method: str, device, tuning: _Tuning,
               array: bool) -> MaximumFlowResult:
    """SciPy's own Dinic or Edmonds-Karp: SciPy's flow matrix, as it is
    (its pattern, parallel arcs not summed)."""
    if device not in ("auto", "cpu"):
        raise ValueError(f"method {method!r} is SciPy's algorithm and runs on the CPU; "
                         f"got device={device!r}")
    t0 = time.perf_counter()
    value, source_side, (indptr, indices, data) = _core.maxflow_scipy(
        net.ptr, net.heads, net.caps, net.source, net.sink, method == "dinic")
    solved = time.perf_counter() - t0
    flow = None
    if tuning.return_flow:
        index = np.int32 if indices.shape[0] < _INT32_MAX else np.int64
        kind = sp.csr_array if array else sp.csr_matrix
        flow = kind((data, indices.astype(index, copy=False), indptr.astype(index, copy=False)),
                    shape=(net.n, net.n))
    stats = FlowStats(seconds_total=time.perf_counter() - start, seconds_phase1=solved)
    return MaximumFlowResult(flow_value=int(value), flow=flow, source_side=source_side,
                             method=method, device="cpu", stats=stats, _network=net)


def _run(net: _Network, start: float, method: str, device, tuning: _Tuning,
         array: bool) -> MaximumFlowResult:
    if method in SCIPY_METHODS:
        return _run_scipy(net, start, method, device, tuning, array)
    method, backend, ordinal = _resolve(net, method, device, tuning.threads)

    def on_cpu():  # the fallback's method, only looked at when it runs
        cpu_method = _auto_method("cpu", net, tuning.threads)
        return cpu_method, "cpu", 0, _solve(net, cpu_method, 0, tuning)

    method, backend, ordinal, (value, arc_flow, source_side, stats, built) = (
        _device.with_cpu_fallback(
            device, backend,
            lambda: (method, backend, ordinal, _solve(net, method, ordinal, tuning)),
            on_cpu, stacklevel=4))
    flow = (_flow_matrix(net, arc_flow, array, tuning.threads, built)
            if tuning.return_flow else None)
    where = _device.device_name(backend, ordinal)
    stats = FlowStats(seconds_total=time.perf_counter() - start, device=where, **stats)
    return MaximumFlowResult(flow_value=int(value), flow=flow, source_side=source_side,
                             method=method, device=where, stats=stats, _network=net)


def maximum_flow(csgraph, source, sink, *, method: str = "auto",
                 device: str = "auto") -> MaximumFlowResult:
    """Maximum flow between two vertices; a drop-in for SciPy's function.

    Same input, checks, messages and result fields (`flow_value`, `flow`)
    as `scipy.sparse.csgraph.maximum_flow`, with these differences:
    capacities stay int64 (SciPy casts them to int32 silently), a negative
    capacity raises ValueError (SciPy returns a wrong flow), and so does a
    total capacity leaving the source of 2**62 or more.

    Parameters
    ----------
    csgraph : csr_matrix or csr_array, shape (n, n), integer dtype
        Entry (i, j) is the capacity of the arc from i to j.  Explicit zeros
        are arcs of capacity 0, duplicate entries parallel arcs, self loops
        carry no flow.
    source, sink : int
        The vertices the flow leaves and enters.
    method : {"auto", "pr", "ppr", "bk", "gpu-pr", "dinic", "edmonds_karp"}
        "pr": sequential highest-label push-relabel; "ppr": OpenMP parallel
        push-relabel; "bk": Boykov-Kolmogorov search trees (for graph cuts
        on images; on a team, first in one range of vertices per thread);
        "gpu-pr": ECL-MaxFlow push-relabel on a GPU.
        "auto" picks by size, shape and device: "gpu-pr" on a GPU (from
        400,000 arcs), else "bk" when the graph is shaped like an image's
        graph cut (the source linked to an eighth of the vertices or more,
        every other vertex with at most 32 arcs and, but for 1%, at least
        2), else "ppr" on large graphs with 16 or more threads, else "pr".
        "dinic" and "edmonds_karp" run SciPy's own algorithms on the CPU, on
        SciPy's residual graph and arc order, so that `flow` is the very
        matrix SciPy returns (at SciPy's speed; auto never picks them).  The
        value and the cut are the same whatever the method; which maximum flow
        `flow` holds may differ between the other methods, and between runs
        of "ppr" and "gpu-pr", whose threads race ("pr" repeats itself).
    device : {"auto", "cpu", "cuda", "cuda:N"}
        "auto" uses a GPU when one is usable and the graph is large enough
        to gain from it (and falls back to the CPU, with a RuntimeWarning,
        when the GPU runs out of memory).

    Returns
    -------
    MaximumFlowResult
        `flow_value`, `flow` (of the input's container kind, int64) as
        SciPy, and a minimum cut (`source_side`, `cut_edges()`), `method`,
        `device`, `stats`.

    Raises
    ------
    TypeError
        If `csgraph` is not in CSR format (as SciPy), or `source` / `sink`
        is not an integer.
    ValueError
        If the capacities are not integers (bool included, as SciPy), the
        graph is not square, source == sink, either is out of range (SciPy's
        messages), or a capacity is negative or above int64, or the arcs
        leaving the source hold 2**62 or more.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import maximum_flow
    >>> graph = sp.csr_array([[0, 5, 0], [0, 0, 3], [0, 0, 0]])
    >>> res = maximum_flow(graph, 0, 2)
    >>> res.flow_value, res.flow.toarray().tolist()
    (3, [[0, 3, 0], [-3, 0, 3], [0, -3, 0]])
    >>> res.source_side.tolist()
    [True, True, False]
    """
    start = time.perf_counter()
    if not (sp.issparse(csgraph) and csgraph.format == "csr"):
        raise TypeError("graph must be in CSR format")
    net = _checked(csgraph, source, sink)
    return _run(net, start, method, device, _Tuning(), isinstance(csgraph, sp.sparray))


def solve_flow(graph, source, sink, *, method: str = "auto", device: str = "auto",
               threads: int | None = None, return_flow: bool = True,
               relabel_freq: float | None = None,
               variant: str = "tuned") -> MaximumFlowResult:
    """Maximum flow and minimum cut of any sparse graph, with statistics.

    Push-relabel works in two phases.  Phase 1 computes a maximum preflow,
    which determines both the flow value and a minimum cut; phase 2 only
    returns the excess left at vertices to the source to make it a flow.
    With ``return_flow=False`` only phase 1 runs.

    Parameters
    ----------
    graph : scipy.sparse matrix or array, shape (n, n), integer dtype
        Entry (i, j) is the capacity of the arc from i to j.  Any sparse
        format, int32 or int64 indices; explicit zeros are arcs of capacity
        0, duplicate entries parallel arcs (each with its own flow; `flow`
        sums them), self loops carry no flow.
    source, sink : int
        The vertices the flow leaves and enters.
    method : {"auto", "pr", "ppr", "bk", "gpu-pr", "dinic", "edmonds_karp"}
        See `maximum_flow`.
    device : {"auto", "cpu", "cuda", "cuda:N"}
        See `maximum_flow`.  Asking for a GPU that is not there raises
        RuntimeError.
    threads : int, optional
        OpenMP threads (default: OMP_NUM_THREADS or all cores): "ppr" runs
        on them, "bk" grows its trees in one part of the graph per thread
        first; "pr" is sequential but builds its residual graph and reads
        the flow back on them (the value and the cut do not depend on the
        count).
    return_flow : bool
        False: phase 1 only; the result has `flow_value` and the cut, and
        `flow` is None.
    relabel_freq : float, optional
        Global-relabel frequency factor; default: the method's own.
    variant : {"tuned", "paper"}
        "gpu-pr" only: "paper" runs paper 002's host-driven loop instead of
        the Hopper-tuned one, for reproducible comparisons.

    Returns
    -------
    MaximumFlowResult
        `flow` is a csr_array for a sparse-array input, a csr_matrix for a
        sparse-matrix input.

    Raises
    ------
    TypeError
        If `graph` is not a scipy.sparse matrix or array.
    ValueError
        As `maximum_flow`, and for unknown option values.

    Notes
    -----
    "pr" and "ppr" keep their largest scratch arrays (the residual graph,
    the flow matrix's transpose) for the next call, up to a cap:
    `free_host_cache` hands them back.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from matchflow import solve_flow
    >>> graph = sp.coo_array(([4, 2, 3], ([0, 0, 1], [1, 2, 2])), shape=(3, 3))
    >>> res = solve_flow(graph, 0, 2, return_flow=False)
    >>> res.flow_value, res.flow, res.source_side.tolist()
    (5, None, [True, True, False])
    >>> [a.tolist() for a in res.cut_edges()]
    [[0, 1], [2, 2]]
    """
    start = time.perf_counter()
    if not sp.issparse(graph):
        raise TypeError("graph must be a scipy.sparse matrix or array")
    tuning = _tuning(threads, return_flow, relabel_freq, variant)
    net = _checked(graph, source, sink)
    return _run(net, start, method, device, tuning, isinstance(graph, sp.sparray))

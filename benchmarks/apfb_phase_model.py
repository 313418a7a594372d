"""A sequential model of APFB-WR's phases, with and without tree grafting.

Counts what the GPU kernels would do (edges scanned, BFS levels, phases), not
time: level-synchronous BFS from the free rows (the searching side), the
columns of a level in random order, a tree stopping at its first free column
(GPUBFS-WR), one path per tree, a greedy start.  Modes:

    scratch      the forest rebuilt from every free row in every phase
    graft-exact  live trees kept; their vertices that met a torn-down tree
                 search again (MS-BFS-Graft's renewal, exact sets)
    graft-kK     the same with K touch slots a vertex (more: search again
                 whenever any tree is torn down), as apfb_kernels.cuh keeps 4

    python benchmarks/apfb_phase_model.py --graphs rmat16 powerlaw16 --modes scratch graft-k4

Starts (--starts): `id`, the papers' row-order greedy; `degree`, rows by
(degree, id), as the device start where degrees are skewed; `degree-cols`,
rows by (degree, id) each taking its free column of fewest entries (not on
the device).  Each line gives the start's size and the maximum's.

(benchmarks/NOTES.md, "APFB's tree grafting", quotes its counts.)  Pure
Python: 2^16 vertices take seconds to a minute a mode.
"""
from __future__ import annotations

import argparse
import random

from matchflow import generators

GRAPHS = {
    "rmat16": lambda: generators.rmat(16, edge_factor=8, seed=1),
    "rmat16ef16": lambda: generators.rmat(16, edge_factor=16, seed=2),
    "powerlaw16": lambda: generators.power_law(1 << 16, degree=4.0, seed=1),
    "uniform16": lambda: generators.uniform_random(1 << 16, degree=3.0, seed=1),
    "rgg16": lambda: generators.random_geometric(1 << 16, degree=8, seed=1),
}


def greedy(ptr: list[int], adj: list[int], n_other: int,
           start: str = "id") -> tuple[list[int], list[int]]:
    """The greedy start: rows in id or (degree, id) order, each takes its
    first free column (`degree-cols`: its free column of fewest entries)."""
    n = len(ptr) - 1
    order = range(n) if start == "id" else sorted(range(n), key=lambda u: (ptr[u + 1] - ptr[u], u))
    col_degree = [0] * n_other
    for v in adj:
        col_degree[v] += 1
    mate_row, mate_col = [-1] * n, [-1] * n_other
    for u in order:
        row = adj[ptr[u]:ptr[u + 1]]
        if start == "degree-cols":
            row = sorted(row, key=lambda v: col_degree[v])
        for v in row:
            if mate_col[v] == -1:
                mate_row[u], mate_col[v] = v, u
                break
    return mate_row, mate_col


def must_search_again(met: set[int], torn: set[int], mode: str) -> bool:
    """Whether a live vertex that met the trees `met` searches again."""
    if mode == "graft-exact":
        return bool(met & torn)
    slots = int(mode.removeprefix("graft-k"))
    return len(met) > slots or bool(met & torn)


def run(graph, mode: str, start: str = "id", seed: int = 0) -> dict:
    """Phases of APFB-WR on `graph` (rows search); counts per phase."""
    rng = random.Random(seed)
    ptr, adj = graph.indptr.tolist(), graph.indices.tolist()
    n = len(ptr) - 1
    mate_row, mate_col = greedy(ptr, adj, graph.shape[1], start)
    start_size = sum(1 for x in mate_row if x != -1)
    root, pred = [-1] * n, [-1] * graph.shape[1]
    met: list[set[int]] = [set() for _ in range(n)]
    frontier = [u for u in range(n) if mate_row[u] == -1 and ptr[u + 1] > ptr[u]]
    for u in frontier:
        root[u] = u
    edges, levels = [], []
    while True:
        done: set[int] = set()  # roots whose tree found its path
        claimed: set[int] = set()
        ends, scanned, depth = [], 0, 0
        while frontier:
            depth += 1
            rng.shuffle(frontier)
            reached = []
            for u in frontier:
                r = root[u]
                if r in done:
                    continue
                met[u] = set()
                for v in adj[ptr[u]:ptr[u + 1]]:
                    if r in done:
                        break
                    scanned += 1
                    w = mate_col[v]
                    if w == -1 and v not in claimed:
                        claimed.add(v)
                        pred[v] = u
                        done.add(r)
                        ends.append(v)
                    elif w == -1:
                        met[u].add(root[pred[v]])
                    elif root[w] == -1:
                        root[w], pred[v] = r, u
                        reached.append(w)
                    elif root[w] != r:
                        met[u].add(root[w])
            frontier = reached
        edges.append(scanned)
        levels.append(depth)
        if not ends:
            break
        for v in ends:  # the trees are disjoint: one path each
            while v != -1:
                u = pred[v]
                mate_row[u], mate_col[v], v = v, u, mate_row[u]
        if mode == "scratch":
            root = [-1] * n
            frontier = [u for u in range(n) if mate_row[u] == -1 and ptr[u + 1] > ptr[u]]
        else:
            for u in range(n):
                if root[u] in done:
                    root[u] = -1
            frontier = [u for u in range(n)
                        if root[u] != -1 and must_search_again(met[u], done, mode)]
            frontier += [r for r in done if mate_row[r] == -1]  # walks that lost
        for u in frontier:
            if root[u] == -1:
                root[u] = u
    matched = sum(1 for x in mate_row if x != -1)
    return {"start": start_size, "matched": matched, "edges": edges, "levels": levels}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["rmat16"], choices=sorted(GRAPHS))
    p.add_argument("--modes", nargs="+", default=["scratch", "graft-k4", "graft-exact"])
    p.add_argument("--starts", nargs="+", default=["id"], choices=["id", "degree", "degree-cols"])
    args = p.parse_args()
    for name in args.graphs:
        graph = GRAPHS[name]().tocsr()
        for start in args.starts:
            for mode in args.modes:
                out = run(graph, mode, start)
                print(f"{name:<11} {start:<11} {mode:<12} start {out['start']} matched "
                      f"{out['matched']} phases {len(out['edges'])} edges {sum(out['edges'])} "
                      f"{out['edges']} levels {sum(out['levels'])}", flush=True)


if __name__ == "__main__":
    main()

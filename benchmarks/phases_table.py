"""Summarise a flow_phases.py log (gpu_run.sh's phases.txt): whole-call seconds per
instance, method and build (the "== installed" / "== base" sections; min over rounds), and
geometric means of pr's time over each other method's, per build.

    python benchmarks/phases_table.py OUT/phases.txt [--setting NAME=V]

--setting keeps only the rows of one --env setting (e.g. MATCHFLOW_PPR_BFS_WINDOW=4); rows
without settings are kept always.
"""
import argparse
import collections
import math
import re

ROW = re.compile(r"(?P<name>\S+)\s+\d+\s+(?P<method>\S+)(?P<settings>(?:\s+\S+=\S+)*)\s+"
                 r"total (?P<total>[0-9.]+)")


def read(path, setting=None):
    """{instance: {(method, build): [totals]}} in file order."""
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    build = "installed"
    for line in open(path):
        if line.startswith("== "):
            build = line.split()[1]
            continue
        m = ROW.match(line)
        if m is None:
            continue
        settings = m["settings"].split()
        if setting and settings and setting not in settings:
            continue
        rows[m["name"]][(m["method"], build)].append(float(m["total"]))
    return rows


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--setting", help="keep only rows of this NAME=VALUE setting")
    args = ap.parse_args()
    rows = read(args.log, args.setting)
    columns = sorted({key for cells in rows.values() for key in cells},
                     key=lambda k: (k[1] != "base", k[0]))
    print(f"{'instance':34s} " + " ".join(f"{m + ' ' + b:>18s}" for m, b in columns))
    ratios = collections.defaultdict(list)
    for name, cells in rows.items():
        best = {key: min(values) for key, values in cells.items()}
        print(f"{name[:34]:34s} " + " ".join(
            f"{best[key]:18.4f}" if key in best else f"{'-':>18s}" for key in columns))
        for method, build in best:
            if method != "pr" and ("pr", build) in best:
                ratios[(method, build)].append(best[("pr", build)] / best[(method, build)])
    for (method, build), values in sorted(ratios.items()):
        print(f"pr / {method} ({build}): {geomean(values):.3f} over {len(values)} instances")


if __name__ == "__main__":
    main()

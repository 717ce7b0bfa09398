#!/usr/bin/env python3
"""Plots the iterative Jacobi benchmark: cell updates per second of each
kernel as a multiple of the single-sweep roofline, fp32 and fp64.

usage: benchmarks/plot_jacobi.py LOG... -o DIR

Reads the lines
`CSV,<problem>,<kernel>,<type>,<T>,<W>,<H>,<D>,<N>,<ms>,<Gcells/s>,<x roofline>,<check>`
with problem jacobi2d, jacobi2d9 (the 9-point box), jacobi3d or jacobi3d27 (the
27-point box) (and the 2-D
lines of earlier logs, without D; anything else is ignored) and writes
DIR/PROBLEM_roofline.png for each problem with
rows: a group of bars per type, one bar per kernel, the roofline (1.0) dashed.
Rows whose check is not PASS are left out; a row in several logs is drawn at
its median.
"""
import argparse
import collections
import os
import statistics
import sys

from plot_common import csv_rows, labelled_bars, passed, plt, save_fraction_figure


def read_rows(paths):
    """{problem: {kernel: {type: [multiple of the roofline, ...]}}} from the PASS rows, and the count left out."""
    rows = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    skipped = 0
    for fields in csv_rows(paths):
        if fields[1] not in ("jacobi2d", "jacobi2d9", "jacobi3d", "jacobi3d27"):
            continue
        if len(fields) == 12 and fields[1] == "jacobi2d":
            fields.insert(7, "1")  # a log from before D
        if len(fields) != 13:
            continue
        kernel, type_ = fields[2], fields[3]
        try:
            value = float(fields[11])
        except ValueError:
            continue
        if not passed(value, fields[12]):
            skipped += 1
            continue
        rows[fields[1]][kernel][type_].append(value)
    return rows, skipped


def plot_problem(problem, rows, out):
    """One figure: a group of bars per type, a bar per kernel."""
    types = sorted({t for per_type in rows.values() for t in per_type})
    kernels = sorted(rows, key=lambda k: (not k.startswith("plain"), k))
    width = 0.8 / len(kernels)
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(kernels) * len(types)), 4.5))
    for i, kernel in enumerate(kernels):
        xs = [t + (i - (len(kernels) - 1) / 2) * width for t in range(len(types))]
        ys = [statistics.median(rows[kernel][t]) if rows[kernel].get(t) else 0 for t in types]
        labelled_bars(ax, xs, ys, width, kernel.replace(problem + "_", "Pulse "), fontsize=7)
    ax.set_xticks(range(len(types)))
    ax.set_xticklabels(types)
    path = os.path.join(out, problem + "_roofline.png")
    title = {"jacobi2d": "Iterative 2-D Jacobi (5 points)", "jacobi2d9": "Iterative 2-D Jacobi (9-point box)",
             "jacobi3d27": "Iterative 3-D Jacobi (27-point box)"}.get(
        problem, "Iterative 3-D Jacobi (7 points)")
    save_fraction_figure(fig, ax, path, title + ": cell updates per second",
                         ylabel="multiple of the single-sweep roofline", ncol=3, grid_axis="y")
    return path


def main():
    parser = argparse.ArgumentParser(description="Plot jacobi_bench multiples of the roofline.")
    parser.add_argument("logs", nargs="+", help="jacobi_bench logs")
    parser.add_argument("-o", "--out", required=True, help="folder for the PNG file")
    args = parser.parse_args()
    rows, skipped = read_rows(args.logs)
    if skipped:
        print(f"plot_jacobi: left out {skipped} row(s) that did not pass their check")
    if not rows:
        print("plot_jacobi: no jacobi rows")
        return 1
    os.makedirs(args.out, exist_ok=True)
    for problem in sorted(rows):
        print(f"plot_jacobi: wrote {plot_problem(problem, rows[problem], args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

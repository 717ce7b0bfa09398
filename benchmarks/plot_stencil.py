#!/usr/bin/env python3
"""Plots the fraction of the bandwidth floor reached by each kernel in
stencil_bench logs.

usage: benchmarks/plot_stencil.py LOG... -o DIR

Reads the lines `CSV,stencil2d,<kernel>,<shape>,<type>,<W>,<H>,<ms>,<fraction>,<check>`
and `CSV,stencil3d,<kernel>,<shape>,<type>,<W>,<H>,<D>,<ms>,<fraction>,<check>`
(anything else in the logs is ignored) and writes DIR/stencil2d_fraction.png and
DIR/stencil3d_fraction.png (each where the logs hold such rows):
a group of bars per stencil and type, one bar per kernel. Rows whose check is
not PASS are left out. A row that appears in several logs (the same kernel,
stencil, type and size) is drawn at its median. When the logs hold more than
one problem size, each size gets its own bar.
"""
import argparse
import collections
import os
import statistics
import sys

from plot_common import csv_rows, labelled_bars, passed, plt, save_fraction_figure

LABELS = {"pulse": "Pulse", "plain": "plain CUDA", "npp": "NPP"}
ORDER = ["pulse", "plain", "npp"]
SHAPES = ["5pt", "9pt", "25pt", "star2", "7pt", "27pt"]
DIMENSIONS = {"stencil2d": 2, "stencil3d": 3}  # the CSV tag and its number of sizes


def read_rows(paths, tag="stencil2d"):
    """{(kernel, (W, H[, D])): {(shape, type): [fraction, ...]}} from the PASS rows of `tag`,
    and the count left out."""
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    skipped = 0
    sizes = DIMENSIONS[tag]
    for fields in csv_rows(paths):
        if len(fields) != 8 + sizes or fields[1] != tag:
            continue
        kernel, shape, type_ = fields[2:5]
        fraction, check = fields[-2:]
        try:
            value = float(fraction)
            key = (kernel, tuple(int(v) for v in fields[5:5 + sizes]))
        except ValueError:
            continue
        if not passed(value, check):
            skipped += 1
            continue
        rows[key][(shape, type_)].append(value)
    return rows, skipped


def problem_order(problem):
    shape, type_ = problem
    return (SHAPES.index(shape) if shape in SHAPES else len(SHAPES), shape, type_)


def series_order(key):
    kernel = key[0]
    return (ORDER.index(kernel) if kernel in ORDER else len(ORDER), kernel, key[1])


def plot(rows, path, dimensions="2-D"):
    keys = sorted(rows, key=series_order)
    several = len({size for _, size in keys}) > 1
    problems = sorted({p for key in keys for p in rows[key]}, key=problem_order)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(problems)), 4.5))
    width = 0.8 / max(1, len(keys))
    colors = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
    for n, key in enumerate(keys):
        kernel, size = key
        xs, ys = [], []
        for i, p in enumerate(problems):
            if p in rows[key]:
                xs.append(i - 0.4 + width * (n + 0.5))
                ys.append(statistics.median(rows[key][p]))
        text = LABELS.get(kernel, kernel) + (" (" + "x".join(map(str, size)) + ")" if several else "")
        labelled_bars(ax, xs, ys, width, text, fontsize=7, color=colors(n % colors.N))
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels([f"{s} {t}" for s, t in problems])
    sizes = sorted({size for _, size in keys})
    title = f"{dimensions} stencils, single sweep" + ("" if several else ", " + " x ".join(map(str, sizes[0])) + " cells")
    save_fraction_figure(fig, ax, path, title, ylabel="fraction of the bandwidth floor", ncol=4, grid_axis="y")


def main():
    parser = argparse.ArgumentParser(description="Plot stencil_bench fractions of the bandwidth floor.")
    parser.add_argument("logs", nargs="+", help="bench logs holding CSV lines")
    parser.add_argument("-o", "--out", required=True, help="folder for the PNG file")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    drawn = 0
    for tag, dimensions in (("stencil2d", "2-D"), ("stencil3d", "3-D")):
        rows, skipped = read_rows(args.logs, tag)
        if skipped:
            print(f"plot_stencil: left out {skipped} {tag} row(s) that did not pass their check")
        if not rows:
            continue
        path = os.path.join(args.out, f"{tag}_fraction.png")
        plot(rows, path, dimensions)
        print(f"plot_stencil: wrote {path}")
        drawn += 1
    if not drawn:
        print("plot_stencil: no stencil2d or stencil3d rows")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

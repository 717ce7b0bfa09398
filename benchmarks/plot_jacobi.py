#!/usr/bin/env python3
"""Plots the iterative Jacobi benchmark: cell updates per second of each
kernel as a multiple of the single-sweep roofline, fp32 and fp64.

usage: benchmarks/plot_jacobi.py LOG... -o DIR

Reads the lines
`CSV,jacobi2d,<kernel>,<type>,<T>,<W>,<H>,<N>,<ms>,<Gcells/s>,<x roofline>,<check>`
(anything else is ignored) and writes DIR/jacobi2d_roofline.png: a group of
bars per type, one bar per kernel, the roofline (1.0) dashed. Rows whose check
is not PASS are left out; a row in several logs is drawn at its median.
"""
import argparse
import collections
import os
import statistics
import sys

from plot_common import labelled_bars, plt, save_fraction_figure


def read_rows(paths):
    """{kernel: {type: [multiple of the roofline, ...]}} from the PASS rows, and the count left out."""
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    skipped = 0
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                fields = line.strip().split(",")
                if len(fields) != 12 or fields[:2] != ["CSV", "jacobi2d"]:
                    continue
                kernel, type_ = fields[2], fields[3]
                try:
                    value = float(fields[10])
                except ValueError:
                    continue
                if fields[11] != "PASS" or value != value:
                    skipped += 1
                    continue
                rows[kernel][type_].append(value)
    return rows, skipped


def main():
    parser = argparse.ArgumentParser(description="Plot jacobi_bench multiples of the roofline.")
    parser.add_argument("logs", nargs="+", help="jacobi_bench logs")
    parser.add_argument("-o", "--out", required=True, help="folder for the PNG file")
    args = parser.parse_args()
    rows, skipped = read_rows(args.logs)
    if skipped:
        print(f"plot_jacobi: left out {skipped} row(s) that did not pass their check")
    if not rows:
        print("plot_jacobi: no jacobi2d rows")
        return 1
    os.makedirs(args.out, exist_ok=True)
    types = sorted({t for per_type in rows.values() for t in per_type})
    kernels = sorted(rows, key=lambda k: (not k.startswith("plain"), k))
    width = 0.8 / len(kernels)
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(kernels) * len(types)), 4.5))
    for i, kernel in enumerate(kernels):
        xs = [t + (i - (len(kernels) - 1) / 2) * width for t in range(len(types))]
        ys = [statistics.median(rows[kernel][t]) if rows[kernel].get(t) else 0 for t in types]
        labelled_bars(ax, xs, ys, width, kernel.replace("jacobi2d_", "Pulse "), fontsize=7)
    ax.set_xticks(range(len(types)))
    ax.set_xticklabels(types)
    path = os.path.join(args.out, "jacobi2d_roofline.png")
    save_fraction_figure(fig, ax, path, "Iterative 2-D Jacobi: cell updates per second",
                         ylabel="multiple of the single-sweep roofline", ncol=3, grid_axis="y")
    print(f"plot_jacobi: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plots the fraction of the floor reached by each kernel in conv2d_bench and
conv1d_bench logs.

usage: benchmarks/plot_conv.py LOG... -o DIR

Reads the lines `CSV,<bench>,<kernel>,<K>,<W>,<H>,<ms>,<fraction>,<check>`
(anything else in the logs is ignored) and writes
  DIR/conv2d_fraction.png  fraction of the floor against K, one line per kernel
  DIR/conv1d_fraction.png  a group of bars per Q, one bar per kernel
Rows whose check is not PASS are left out. A row that appears in several logs
(the same bench, kernel, K and size) is drawn at its median. When the logs
hold more than one problem size, each size gets its own line or bar.
"""
import argparse
import collections
import os
import statistics
import sys

from plot_common import csv_rows, labelled_bars, passed, plt, save_fraction_figure

LABELS = {
    "pulse": "Pulse",
    "plain": "plain CUDA",
    "npp": "NPP",
    "cudnn": "cuDNN",
    "cufft": "cuFFT",
    "pulse_sbm": "Pulse SBM",
    "pulse_fbs": "Pulse FBS",
}
ORDER = ["pulse", "pulse_sbm", "pulse_fbs", "plain", "npp", "cudnn", "cufft"]


def read_rows(paths):
    """{bench: {(kernel, W, H): {K: [fraction, ...]}}} from the PASS rows."""
    rows = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    skipped = 0
    for fields in csv_rows(paths):
        if len(fields) != 9:
            continue
        _, bench, kernel, k, w, h, _ms, fraction, check = fields
        try:
            value = float(fraction)
            key = (kernel, int(w), int(h))
            k = int(k)
        except ValueError:
            continue
        if not passed(value, check):
            skipped += 1
            continue
        rows[bench][key][k].append(value)
    return rows, skipped


def series_order(keys):
    def rank(key):
        kernel = key[0]
        return (ORDER.index(kernel) if kernel in ORDER else len(ORDER), kernel, key[1], key[2])

    return sorted(keys, key=rank)


def label(key, several_sizes, bench):
    kernel, w, h = key
    text = LABELS.get(kernel, kernel)
    if several_sizes:
        text += f" ({w}x{h})" if bench == "conv2d" else f" (N={w})"
    return text


def plot_conv2d(series, path):
    several = len({(w, h) for _, w, h in series}) > 1
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ks = set()
    keys = series_order(series)
    colors = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
    for i, key in enumerate(keys):
        points = sorted((k, statistics.median(v)) for k, v in series[key].items())
        ks.update(k for k, _ in points)
        # Other Pulse mappings of a K (pulse_<tag>) dashed, beside the chosen one.
        style = "--" if key[0].startswith("pulse_") and key[0] not in LABELS else "-"
        ax.plot([k for k, _ in points], [f for _, f in points], marker="o", linestyle=style, color=colors(i % colors.N),
                label=label(key, several, "conv2d"))
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xticks(sorted(ks))
    ax.set_xlabel("filter size K (K x K)")
    sizes = sorted({(w, h) for _, w, h in series})
    save_fraction_figure(fig, ax, path, "2-D convolution" + ("" if several else f", {sizes[0][0]} x {sizes[0][1]} outputs"))


def plot_conv1d(series, path):
    several = len({(w, h) for _, w, h in series}) > 1
    keys = series_order(series)
    qs = sorted({q for key in keys for q in series[key]})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / max(1, len(keys))
    for n, key in enumerate(keys):
        xs, ys = [], []
        for i, q in enumerate(qs):
            if q in series[key]:
                xs.append(i - 0.4 + width * (n + 0.5))
                ys.append(statistics.median(series[key][q]))
        labelled_bars(ax, xs, ys, width, label(key, several, "conv1d"))
    ax.set_xticks(range(len(qs)))
    ax.set_xticklabels([f"Q={q}" for q in qs])
    sizes = sorted({w for _, w, _ in series})
    save_fraction_figure(fig, ax, path, "1-D convolution" + ("" if several else f", N = {sizes[0]}"), grid_axis="y")


def main():
    parser = argparse.ArgumentParser(description="Plot conv2d_bench / conv1d_bench fractions of the floor.")
    parser.add_argument("logs", nargs="+", help="bench logs holding CSV lines")
    parser.add_argument("-o", "--out", required=True, help="folder for the PNG files")
    args = parser.parse_args()
    rows, skipped = read_rows(args.logs)
    os.makedirs(args.out, exist_ok=True)
    if skipped:
        print(f"plot_conv: left out {skipped} row(s) that did not pass their check")
    wrote = 0
    for bench, draw in (("conv2d", plot_conv2d), ("conv1d", plot_conv1d)):
        if not rows.get(bench):
            print(f"plot_conv: no {bench} rows")
            continue
        path = os.path.join(args.out, f"{bench}_fraction.png")
        draw(rows[bench], path)
        print(f"plot_conv: wrote {path}")
        wrote += 1
    return 0 if wrote else 1


if __name__ == "__main__":
    sys.exit(main())

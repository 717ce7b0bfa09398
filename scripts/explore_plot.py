#!/usr/bin/python3
"""Plots of an exploration (Debian's python3-matplotlib).

usage: scripts/explore_plot.py DIR
  DIR/designs.csv  written by --explore: outturn_utilization.png (every valid
                   design, the Pareto front of (outturn, utilization) joined)
  DIR/measured.csv written by scripts/explore_measure.sh, if present:
                   predicted_measured.png (predicted cycles per output against
                   measured nanoseconds per output, one point per design)
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def valid_designs(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["verdict"] == "valid"]


def plot_front(designs, out):
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.scatter([float(d["utilization"]) * 100 for d in designs], [float(d["outturn"]) for d in designs],
               s=14, alpha=0.5, label=f"valid designs ({len(designs)})")
    front = sorted((d for d in designs if d["pareto"] == "1"), key=lambda d: float(d["utilization"]))
    ax.plot([float(d["utilization"]) * 100 for d in front], [float(d["outturn"]) for d in front],
            "o-", color="C3", label="Pareto front")
    # One label per point of the front: the classes that reach it, and one design id each.
    at = {}
    for d in front:
        at.setdefault((float(d["utilization"]) * 100, float(d["outturn"])), {}).setdefault(d["class"], d["id"])
    for (x, y), classes in at.items():
        text = ", ".join(f"{c} #{i}" for c, i in sorted(classes.items()))
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(-8, -14), ha="right", fontsize=8)
    # Off the front, at each outturn the best-utilized point, with the classes found there.
    best = {}
    for d in designs:
        x, y = float(d["utilization"]) * 100, float(d["outturn"])
        if (x, y) not in at and x >= best.get(y, (-1, set()))[0]:
            best[y] = (x, (best[y][1] if y in best and best[y][0] == x else set()) | {d["class"]})
    for y, (x, classes) in best.items():
        names = sorted(classes)
        text = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7, color="0.3")
    ax.set_xlabel("PE utilization (%)")
    ax.set_ylabel("outturn (outputs per step)")
    ax.legend(loc="center right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_measured(rows, out):
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    xs = [float(r["predicted"]) for r in rows]
    ys = [float(r["ns_per_output"]) for r in rows]
    ax.scatter(xs, ys)
    for r, x, y in zip(rows, xs, ys):
        ax.annotate(f"{r['class']} #{r['id']}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("predicted (cost model units per output)")
    ax.set_ylabel("measured (ns per output)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    designs_csv = os.path.join(directory, "designs.csv")
    if not os.path.exists(designs_csv):
        sys.exit(f"{designs_csv}: not found; run the spec program with --explore -o {directory} first")
    designs = valid_designs(designs_csv)
    if not designs:
        sys.exit(f"{designs_csv}: no valid design to plot; widen --range")
    plot_front(designs, os.path.join(directory, "outturn_utilization.png"))
    print(f"wrote {os.path.join(directory, 'outturn_utilization.png')}")
    measured_csv = os.path.join(directory, "measured.csv")
    if os.path.exists(measured_csv):
        with open(measured_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        if rows:
            plot_measured(rows, os.path.join(directory, "predicted_measured.png"))
            print(f"wrote {os.path.join(directory, 'predicted_measured.png')}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Pulse's matmul_2d as a fraction of cuBLAS SGEMM, one bar per design step.

usage: benchmarks/plot_matmul.py CSV PNG
CSV: lines `design,ms,fraction_of_cublas` (a header line and lines starting
with # are skipped), as docs/benchmarks/matmul_2d_h200_2026-11-27.csv."""
import csv
import sys

from plot_common import plt

TARGET = 0.75  # issue 27's target: 0.75 of cuBLAS SGEMM


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#")) if r and r[0] != "design"]
    names = [r[0] for r in rows]
    fractions = [float(r[2]) for r in rows]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    bars = ax.barh(range(len(rows)), fractions, color="tab:blue")
    if hasattr(ax, "bar_label"):
        ax.bar_label(bars, labels=[f"{x:.3f} ({r[1]} ms)" for x, r in zip(fractions, rows)], fontsize=8, padding=2)
    ax.axvline(TARGET, color="tab:red", linestyle="--", linewidth=1, label=f"target {TARGET} of cuBLAS")
    ax.axvline(1.0, color="gray", linestyle="--", linewidth=1, label="cuBLAS SGEMM")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("fraction of cuBLAS SGEMM (TF32 off) in the same run, higher is better")
    ax.set_title("matmul_2d as a fraction of cuBLAS SGEMM, one bar per design")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The device-wide Jacobi against the tiled mapping and the plain kernel over
grid sizes: G cell-updates/s of the 2-D star per size (jacobi_bench's CSV
lines, problem jacobi2d), one panel per type. For each size the best kernel
of each kind is drawn: the plain kernel, the tiled mappings (T steps per
launch in overlapped tiles), and the device-wide ones (`grid1` in the name:
every block resident, a grid barrier per step), which run only where the
grid fits the GPU at once (their rows say SKIP elsewhere).

usage: benchmarks/plot_jacobi_grid.py OUT.png LOG_OR_CSV...
"""
import sys

from plot_common import csv_rows, passed, plt


def kind(name):
    if name.startswith("plain"):
        return "plain kernel, a launch per step"
    return "device-wide (gpu_grid_sync)" if "grid1" in name else "tiled (T steps per launch)"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    best = {}  # (type, kind) -> {size: G cells/s}
    for row in csv_rows(sys.argv[2:]):
        extra = len(row) - 13  # commas inside the kernel's name ("plain CUDA (1 cell/thread, N launches)")
        row = row[:2] + [",".join(row[2:3 + extra])] + row[3 + extra:]
        problem, name, type_, width, rate, check = row[1], row[2], row[3], int(row[5]), row[10], row[12]
        if problem != "jacobi2d" or not rate or not passed(float(rate), check):
            continue
        series = best.setdefault((type_, kind(name)), {})
        series[width] = max(series.get(width, 0.0), float(rate))
    types = sorted({t for t, _ in best})
    fig, axes = plt.subplots(1, len(types), figsize=(6 * len(types), 4.2), squeeze=False)
    for ax, type_ in zip(axes[0], types):
        for (t, k), series in sorted(best.items()):
            if t != type_:
                continue
            sizes = sorted(series)
            ax.plot(sizes, [series[s] for s in sizes], marker="o", label=k)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("grid width = height (cells)")
        ax.set_ylabel("G cell-updates/s")
        ax.set_title(f"Jacobi 2-D 5-point, {type_}, 120 steps")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=120)


if __name__ == "__main__":
    main()

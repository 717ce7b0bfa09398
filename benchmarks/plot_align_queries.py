#!/usr/bin/env python3
"""TCUPS over the whole ragged database per query length, one line per way of
running it (one pass; passes of L residues at a register budget), from a CSV
written as docs/benchmarks/align_queries_h100_2026-12-07.csv (a row per run:
kernel,Q,passes,L,K,flags,registers,spill_bytes,pulse_ms,pulse_gcups,peer_ms,
peer_gcups,...), with the peer (one thread per pair) and the issue's target.

usage: benchmarks/plot_align_queries.py CSV PNG [TITLE]"""
import csv
import sys

from plot_common import plt

TARGET_TCUPS = 2.9  # issue 26: half of the best hand-written aligner's published H100 figure


def way(row):
    """How a row ran its query: one pass, or passes of L at its registers."""
    if row["passes"] == "1":
        return "one pass (Q residues a kernel)"
    return f"passes of {row['L']} residues, {row['registers']} registers" + (
        f", {row['spill_bytes']} B spilled" if row["spill_bytes"] != "0" else "")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = list(csv.DictReader(f))
    lines = {}
    for row in rows:
        lines.setdefault(way(row), []).append((int(row["Q"]), float(row["pulse_gcups"]) / 1000))
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for label, points in lines.items():
        points.sort()
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", label=label)
        for x, y in points:
            ax.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    peer = sorted((int(r["Q"]), float(r["peer_gcups"]) / 1000) for r in rows)
    ax.plot(*zip(*peer), marker="x", color="gray", linestyle=":", label="peer: one thread per pair")
    ax.axhline(TARGET_TCUPS, color="tab:red", linestyle="--", linewidth=1, label="target 2.9 TCUPS")
    ax.set_xscale("log", base=2)
    queries = sorted({int(r["Q"]) for r in rows})
    ax.set_xticks(queries)
    ax.set_xticklabels([str(q) for q in queries])
    ax.set_xlabel("query length Q (residues)")
    ax.set_ylabel("TCUPS over the whole database (higher is better)")
    top = max(float(r["pulse_gcups"]) for r in rows) / 1000
    ax.set_ylim(0, max(3.4, 1.12 * top))
    ax.set_title(sys.argv[3] if len(sys.argv) == 4 else "")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""GCUPS of each length class of the ragged database, and of the whole of it,
for each kernel of a CSV written as docs/benchmarks/align_packed_h100_2026-12-07.csv
(a row per kernel: kernel,Q,K,flags,registers,spill_bytes,pulse_ms,pulse_gcups,
peer_ms,peer_gcups,gcups_s256,...,gcups_s16384,scores_differing), with the
issue's target.

usage: benchmarks/plot_align_classes.py CSV PNG [TITLE]"""
import csv
import sys

from plot_common import plt

TARGET_GCUPS = 2900  # issue 26: half of the best hand-written aligner's published H100 figure


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = list(csv.DictReader(f))
    classes = [c for c in rows[0] if c.startswith("gcups_s")]
    groups = ["S <= " + c[len("gcups_s"):] for c in classes] + ["whole\ndatabase"]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    width = 0.8 / len(rows)
    for k, row in enumerate(rows):
        values = [float(row[c]) for c in classes] + [float(row["pulse_gcups"])]
        xs = [g + (k - (len(rows) - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=f"{row['kernel']}, Q = {row['Q']}")
        if hasattr(ax, "bar_label"):
            ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.axhline(TARGET_GCUPS, color="tab:red", linestyle="--", linewidth=1, label="target 2.9 TCUPS")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_xlabel("length class of the database (residues); 2^20 sequences, median 300")
    ax.set_ylabel("GCUPS (higher is better)")
    ax.set_title(sys.argv[3] if len(sys.argv) == 4 else "")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()

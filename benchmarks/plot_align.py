#!/usr/bin/env python3
"""GCUPS per query length of each alignment design, the one-thread-per-pair
peer measured in the same runs, and the issue's target.

usage: benchmarks/plot_align.py CSV PNG [DATABASE]
DATABASE: the x axis's words on the database (default "database 65536 x 301 residues").
CSV: lines `design,Q,S,B,pulse_ms,pulse_gcups,peer_ms,peer_gcups` (a header
line and lines starting with # are skipped), as
docs/benchmarks/align_h200_2026-11-27.csv."""
import csv
import sys

from plot_common import plt

TARGET_GCUPS = 2900  # issue 26: half of the best hand-written aligner's published H100 figure


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    database = sys.argv[3] if len(sys.argv) == 4 else "database 65536 x 301 residues"
    with open(sys.argv[1]) as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#")) if r and r[0] != "design"]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    designs = list(dict.fromkeys(r[0] for r in rows))
    for design in designs:
        points = sorted((int(r[1]), float(r[5])) for r in rows if r[0] == design)
        ax.plot([q for q, _ in points], [g for _, g in points], marker="o", label=f"Pulse: {design}")
    peer = {}
    for r in rows:
        peer.setdefault(int(r[1]), []).append(float(r[7]))
    qs = sorted(peer)
    ax.plot(qs, [max(peer[q]) for q in qs], marker="s", color="gray", linestyle=":", label="one thread per pair (peer, same runs)")
    ax.axhline(TARGET_GCUPS, color="tab:red", linestyle="--", linewidth=1, label="target 2.9 TCUPS")
    ax.set_xscale("log", base=2)
    ax.set_xticks(qs)
    ax.set_xticklabels([str(q) for q in qs])
    ax.set_xlabel(f"query length Q (residues); {database}")
    ax.set_ylabel("GCUPS (higher is better)")
    ax.set_ylim(0, TARGET_GCUPS * 1.1)
    ax.set_title("Smith-Waterman, BLOSUM62, int32 and packed int16, NVIDIA H200")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()

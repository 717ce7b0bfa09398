#!/usr/bin/env python3
"""Prints the Intel resource table of docs/backends.md ("Intel resources") from
the tab-separated file test_intel writes with PULSE_INTEL_TABLE=FILE:
per spec and backend, each device's GRF registers touched, spill bytes and
instructions, with the CM register plan of Pulse (plans: lines "SPEC BYTES"
from scripts/intel_resources.sh).

usage: scripts/intel_resources.py TABLE.tsv [PLANS.txt]
"""
import csv
import sys

DEVICES = ["kbl", "tgllp", "dg2", "pvc"]


def main():
    rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
    plans = {}
    if len(sys.argv) > 2:
        for line in open(sys.argv[2]):
            fields = line.split()
            if len(fields) >= 2:
                plans[fields[0]] = fields[1]
    cell = {}
    specs = []
    for r in rows:
        if r["spec"] not in specs:
            specs.append(r["spec"])
        spill = int(r["spill_bytes"])
        text = f"{r['grf_touched']} / {r['instructions']}" + (f" / **{spill}**" if spill else "")
        cell[(r["spec"], r["backend"], r["device"])] = text
    print("| spec | plan (bytes) | backend | " + " | ".join(DEVICES) + " |")
    print("|---|---|---|" + "---|" * len(DEVICES))
    for spec in specs:
        for backend in ["cm", "opencl"]:
            cells = [cell.get((spec, backend, d), "-") for d in DEVICES]
            print(f"| {spec} | {plans.get(spec, '-')} | {backend} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

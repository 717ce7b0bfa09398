#!/usr/bin/env python3
"""The fastest checked mapping of each Jacobi problem and type in jacobi_bench logs.

usage: benchmarks/best_jacobi.py LOG... [--write FILE]

Reads the lines
`CSV,<problem>,<kernel>,<type>,<T>,<W>,<H>,<D>,<N>,<ms>,<Gcells/s>,<x roofline>,<check>`
of the logs (scripts/gpu_bench_jacobi.sh's jacobi.log, any number of runs: a
kernel's rate is its median), keeps the rows whose check passed, and prints, per
problem (jacobi2d, jacobi2d9, jacobi3d, jacobi3d27) and type, the fastest Pulse kernel and
the mapping that generates it, read back from the kernel's name as
benchmarks/generate_jacobi.sh spells it (jacobi2d_f32_wave1_t6_pe64_th64_u0_pf is
WAVE=1,T=6,PE=64,TH=64,--unroll-steps=0,--prefetch). With --write, FILE gets
those mappings, one line per dimension ("2 MAPPING..." and "3 MAPPING..."),
which generate_jacobi.sh then uses as its defaults.
"""
import argparse
import collections
import re
import statistics
import sys

# Tag prefixes of generate_jacobi.sh, longest first, and what they spell.
TAGS = [("plane", "PLANE={}"), ("wave", "WAVE={}"), ("box", "BOX={}"), ("sm", "--max-shared-bytes={}"), ("th", "TH={}"), ("tz", "TZ={}"), ("pe", "PE={}"), ("mb", "--min-blocks-per-sm={}"),
        ("pf", "--prefetch"), ("t", "T={}"), ("u", "--unroll-steps={}")]


def mapping_of(kernel):
    """The generate_jacobi.sh mapping that names `kernel`, or None for another kernel."""
    m = re.fullmatch(r"jacobi([23])d_(f32|f64)_(.+)", kernel)
    if not m:
        return None
    settings = []
    for tag in m.group(3).split("_"):
        for prefix, spelled in TAGS:
            value = tag[len(prefix):]
            if tag.startswith(prefix) and (value.isdigit() if "{}" in spelled else value == ""):
                settings.append(spelled.format(value))
                break
        else:
            return None
    return ",".join(settings)


def best_rows(paths):
    """{(problem, type): (rate, kernel)} of the fastest passing Pulse kernel."""
    rates = collections.defaultdict(list)
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if not line.startswith("CSV,"):
                    continue
                fields = line.strip().split(",")
                if len(fields) != 13 or fields[12] != "PASS" or mapping_of(fields[2]) is None:
                    continue
                try:
                    rates[(fields[1], fields[2], fields[3])].append(float(fields[10]))
                except ValueError:
                    continue
    best = {}
    for (problem, kernel, type_), values in rates.items():
        rate = statistics.median(values)
        if (problem, type_) not in best or rate > best[(problem, type_)][0]:
            best[(problem, type_)] = (rate, kernel)
    return best


def main():
    parser = argparse.ArgumentParser(description="The fastest Jacobi mapping per problem and type.")
    parser.add_argument("logs", nargs="+", help="jacobi_bench logs")
    parser.add_argument("--write", help="file for the best mappings (generate_jacobi.sh's defaults)")
    args = parser.parse_args()
    best = best_rows(args.logs)
    if not best:
        print("best_jacobi: no passing Pulse rows in the logs")
        return 1
    by_dims = collections.defaultdict(list)
    for (problem, type_), (rate, kernel) in sorted(best.items()):
        mapping = mapping_of(kernel)
        print(f"{problem} {type_}: {rate:.1f} G cell-updates/s  {kernel}  ({mapping})")
        dims = "3" if problem.startswith("jacobi3d") else "2"
        if mapping not in by_dims[dims]:
            by_dims[dims].append(mapping)
    if args.write:
        with open(args.write, "w") as f:
            for dims in sorted(by_dims):
                f.write(dims + " " + " ".join(by_dims[dims]) + "\n")
        print(f"best_jacobi: wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

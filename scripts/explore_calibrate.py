#!/usr/bin/env python3
"""Calibrates the explorer's cost model from measured times, and reports how
well it ranks designs (Spearman rank correlation with measurement).

usage: scripts/explore_calibrate.py DIR
  DIR/designs.csv   the exploration (--explore)
  DIR/measured.csv  scripts/explore_measure.sh: id, ns_per_output, ...

The model predicts, per output,
    step * warps*steps/outputs + exchange * warps*steps*exchanges_per_step/outputs
        + load * loads_per_output
The three coefficients are fitted to the measured nanoseconds per output by
least squares, none negative. Writes DIR/calibration.txt and prints the
correlation of the model as run (designs.csv's predicted column) and as
calibrated, and the --cost flag that applies the calibrated coefficients.
Only the standard library: it runs where the GPU is.
"""
import csv
import itertools
import os
import sys


def features(d):
    warps, steps, outputs = float(d["warps"]), float(d["steps"]), float(d["outputs"])
    return [warps * steps / outputs, warps * steps * float(d["exchanges_per_step"]) / outputs,
            float(d["loads_per_output"])]


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties (equal to 1e-9, rounding aside) share their mean rank
        j = i
        while j + 1 < len(order) and abs(values[order[j + 1]] - values[order[i]]) <= 1e-9 * max(1.0, abs(values[order[i]])):
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def solve(a, b):
    """Solves the square system a x = b by Gaussian elimination; None if singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit_nonnegative(xs, ys):
    """Least squares over every subset of the features; the best fit with no negative coefficient."""
    best = None
    n = len(xs[0])
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            a = [[sum(x[i] * x[j] for x in xs) for j in subset] for i in subset]
            b = [sum(x[i] * y for x, y in zip(xs, ys)) for i in subset]
            sol = solve(a, b)
            if sol is None or min(sol) < 0:
                continue
            coef = [0.0] * n
            for i, v in zip(subset, sol):
                coef[i] = v
            err = sum((sum(c * f for c, f in zip(coef, x)) - y) ** 2 for x, y in zip(xs, ys))
            if best is None or err < best[1]:
                best = (coef, err)
    return best[0] if best else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    designs_csv, measured_csv = (os.path.join(directory, f) for f in ("designs.csv", "measured.csv"))
    for path in (designs_csv, measured_csv):
        if not os.path.exists(path):
            sys.exit(f"{path}: not found (designs.csv from --explore, measured.csv from scripts/explore_measure.sh)")
    designs = {d["id"]: d for d in csv.DictReader(open(designs_csv, newline=""))}
    measured = list(csv.DictReader(open(measured_csv, newline="")))
    rows = [(designs[m["id"]], float(m["ns_per_output"])) for m in measured if m["id"] in designs]
    if len(rows) < 3:
        sys.exit(f"{measured_csv}: {len(rows)} measured design(s) found in designs.csv; calibration needs at least 3")
    xs = [features(d) for d, _ in rows]
    ys = [y for _, y in rows]
    before = spearman([float(d["predicted"]) for d, _ in rows], ys)
    coef = fit_nonnegative(xs, ys)
    if coef is None:
        sys.exit("no nonnegative fit of the cost model to these measurements")
    calibrated = [sum(c * f for c, f in zip(coef, x)) for x in xs]
    after = spearman(calibrated, ys)
    lines = [f"designs measured: {len(rows)}",
             f"rank correlation (Spearman) of the model as run with measurement: {before:.3f}",
             f"calibrated coefficients (ns): step {coef[0]:.6g}, exchange {coef[1]:.6g}, load {coef[2]:.6g}",
             f"rank correlation of the calibrated model with measurement: {after:.3f}",
             f"use them: --cost {coef[0]:.6g},{coef[1]:.6g},{coef[2]:.6g}",
             "id,class,predicted,calibrated_ns,measured_ns"]
    for (d, y), c in zip(rows, calibrated):
        lines.append(f"{d['id']},{d['class']},{d['predicted']},{c:.6g},{y:.6g}")
    text = "\n".join(lines) + "\n"
    open(os.path.join(directory, "calibration.txt"), "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()

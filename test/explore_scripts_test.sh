#!/usr/bin/env bash
# The explorer's scripts on a real exploration: the plot script draws the
# front, and the calibration recovers a cost model from times that follow one
# (synthetic times, made from designs.csv by a known formula, stand in for a
# GPU here; the GPU run itself is scripts/explore_measure.sh).
# usage: test/explore_scripts_test.sh SPEC_PROGRAM SOURCE_DIR WORK_DIR
set -euo pipefail
program="$1" root="$2" work="$3"
rm -rf "$work"
"$program" -g conv1d_sbm --explore --range -2:2 -o "$work" >/dev/null
/usr/bin/python3 "$root/scripts/explore_plot.py" "$work"
[[ -s "$work/outturn_utilization.png" ]] || { echo "no outturn_utilization.png"; exit 1; }
# Times of 12 valid designs from the formula 2 A + 0.5 B + 3 C (the script's features).
python3 - "$work" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1] + "/designs.csv", newline="")) if r["verdict"] == "valid"]
rows = rows[:: max(1, len(rows) // 12)][:12]
with open(sys.argv[1] + "/measured.csv", "w") as f:
    f.write("id,name,class,predicted,instances,outputs,median_ms,ns_per_output\n")
    for r in rows:
        w, s, o = float(r["warps"]), float(r["steps"]), float(r["outputs"])
        ns = 2 * w * s / o + 0.5 * w * s * float(r["exchanges_per_step"]) / o + 3 * float(r["loads_per_output"])
        f.write(f"{r['id']},x,{r['class']},{r['predicted']},1,{o},0,{ns}\n")
PY
python3 "$root/scripts/explore_calibrate.py" "$work"
grep -q "rank correlation of the calibrated model with measurement: 1.000" "$work/calibration.txt"
grep -q "use them: --cost 2,0.5,3" "$work/calibration.txt"
/usr/bin/python3 "$root/scripts/explore_plot.py" "$work"
[[ -s "$work/predicted_measured.png" ]] || { echo "no predicted_measured.png"; exit 1; }
echo "explore scripts ok"

#!/usr/bin/env bash
# Explores a spec and emits its K best-ranked designs as CUDA, for
# scripts/explore_measure.sh to time on a GPU machine (which needs only nvcc).
#
# usage: scripts/explore_generate.sh PROGRAM SPEC OUT_DIR K [EXPLORE_FLAGS...]
#   PROGRAM        a spec program (build/examples/conv1d)
#   SPEC           the spec it explores (conv1d_sbm)
#   OUT_DIR        receives designs.csv, designs.json, pareto.csv and kernels/:
#                  SPEC_dID.{cu,h}, SPEC_dID_check.cu, SPEC_dID_reference.h for
#                  the K best, listed in kernels/designs.txt (id and name)
#   K              how many designs to emit (by rank)
#   EXPLORE_FLAGS  passed to --explore and to each --design (--range, --space-rows,
#                  --fix-row, --cost, --param ...)
set -euo pipefail
usage="usage: scripts/explore_generate.sh PROGRAM SPEC OUT_DIR K [EXPLORE_FLAGS...]"
program="${1:?$usage}" spec="${2:?$usage}" out="${3:?$usage}" k="${4:?$usage}"
shift 4
[[ -x "$program" ]] || { echo "$program: not an executable spec program; build first (cmake --build build)" >&2; exit 2; }
[[ "$k" =~ ^[1-9][0-9]*$ ]] || { echo "K = $k: expected a count >= 1" >&2; exit 2; }
mkdir -p "$out/kernels"
"$program" -g "$spec" --explore -o "$out" "$@"
# The K valid designs of best rank (quoted fields hold commas: a CSV reader, not cut).
python3 - "$out/designs.csv" "$k" >"$out/kernels/top.txt" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["verdict"] == "valid"]
rows.sort(key=lambda r: int(r["rank"]))
for r in rows[: int(sys.argv[2])]:
    print(r["id"])
PY
[[ -s "$out/kernels/top.txt" ]] || { echo "no valid design to emit; widen --range" >&2; exit 1; }
: >"$out/kernels/designs.txt"
while read -r id; do
  name="${spec}_d$id"
  "$program" -g "$spec" "$@" --design "$id" --emit cuda -o "$out/kernels" >/dev/null
  echo "$id $name" >>"$out/kernels/designs.txt"
done <"$out/kernels/top.txt"
rm "$out/kernels/top.txt"
cp "$out/designs.csv" "$out/kernels/designs.csv"
echo "emitted $(wc -l <"$out/kernels/designs.txt") design(s) into $out/kernels; on the GPU machine:"
echo "  scripts/explore_measure.sh $out/kernels MEASURE_DIR"

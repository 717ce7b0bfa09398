#!/usr/bin/env bash
# Builds and times the designs scripts/explore_generate.sh emitted, on a
# machine with CUDA (nvcc and a GPU; Halide and isl are not needed). Each
# design's check harness first compares the kernel with the reference, then
# (--bench) prints the median of 20 timed runs after 5 warm-up runs.
#
# usage: scripts/explore_measure.sh KERNELS_DIR OUT_DIR
#   KERNELS_DIR  OUT_DIR/kernels of explore_generate.sh (designs.txt, designs.csv, sources)
#   OUT_DIR      binaries, logs and measured.csv: id, name, class, predicted,
#                instances, outputs, median_ms, ns_per_output (one row per design
#                that built, passed and ran)
# environment: NVCC (default nvcc), ARCH (default sm_90), OUTPUTS (default
#   33554432: the instances run are enough for this many outputs, buffers larger than L2),
#   BUILD_ONLY=1 to stop after building (checks that every design compiles)
set -uo pipefail
usage="usage: scripts/explore_measure.sh KERNELS_DIR OUT_DIR"
src="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
target="${OUTPUTS:-33554432}"
[[ -f "$src/designs.txt" && -f "$src/designs.csv" ]] || { echo "$src: no designs.txt/designs.csv; run scripts/explore_generate.sh first" >&2; exit 2; }
# A column of one design in designs.csv (quoted fields hold commas: a CSV reader, not cut).
field() {  # id column-name
  python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["id"] == sys.argv[2]: print(r[sys.argv[3]])' "$src/designs.csv" "$1" "$2"
}
echo "id,name,class,predicted,instances,outputs,median_ms,ns_per_output" >"$out/measured.csv"
failures=0
while read -r id name; do
  [[ -n "$id" ]] || continue
  if ! "$nvcc" -O3 -std=c++17 "-arch=$arch" -Xptxas -v "-I$root/runtime" "-I$src" "$src/${name}_check.cu" "$src/$name.cu" \
      -o "$out/${name}_check" >"$out/$name.build.log" 2>&1; then
    echo "FAIL $name: nvcc failed (see $out/$name.build.log)"
    failures=$((failures + 1))
    continue
  fi
  if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
    echo "built $name: $(grep -o "Used [0-9]* registers" "$out/$name.build.log" | head -1), $(grep -o "[0-9]* bytes spill stores" "$out/$name.build.log" | sort -rn | head -1)"
    continue
  fi
  per_instance="$(field "$id" outputs)"
  instances=$(( (target + per_instance - 1) / per_instance ))
  if ! "$out/${name}_check" "$instances" --bench >"$out/$name.run.log" 2>&1; then
    echo "FAIL $name: $(head -1 "$out/$name.run.log")"
    failures=$((failures + 1))
    continue
  fi
  ms="$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$out/$name.run.log")"
  [[ -n "$ms" ]] || { echo "FAIL $name: no median in $out/$name.run.log"; failures=$((failures + 1)); continue; }
  outputs=$((instances * per_instance))
  ns="$(python3 -c "print($ms * 1e6 / $outputs)")"
  echo "$id,$name,$(field "$id" class),$(field "$id" predicted),$instances,$outputs,$ms,$ns" >>"$out/measured.csv"
  echo "$name: $(field "$id" class), predicted $(field "$id" predicted), $ms ms for $outputs outputs ($ns ns per output)"
done <"$src/designs.txt"
cp "$src/designs.csv" "$out/designs.csv"
echo "wrote $out/measured.csv; then: scripts/explore_calibrate.py $out && scripts/explore_plot.py $out"
exit $((failures != 0))

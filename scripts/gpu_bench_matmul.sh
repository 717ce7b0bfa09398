#!/usr/bin/env bash
# Builds and runs the matrix-multiply benchmark on a machine with CUDA, cuBLAS
# and a GPU: for each kernel folder benchmarks/generate_matmul.sh wrote, the
# check harness (random inputs, odd instance counts, poisoned outputs) and
# benchmarks/matmul_bench.cu (Pulse against cuBLAS SGEMM with TF32 off and the
# FMA floor, measured in the same run). Prints a table; writes matmul.csv
# (design,ms,fraction_of_cublas) to OUT_DIR and, where matplotlib is
# importable, matmul.png (benchmarks/plot_matmul.py).
#
# usage: scripts/gpu_bench_matmul.sh GENERATED_DIR OUT_DIR
# environment: NVCC (default nvcc), ARCH (default sm_90)
set -uo pipefail
usage="usage: scripts/gpu_bench_matmul.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
failures=0
dirs=()
for d in "$gen"/*/; do [[ -f "$d/matmul_2d.cu" ]] && dirs+=("${d%/}"); done
# Every build at once, then the runs one by one.
for d in "${dirs[@]}"; do
  n="$(basename "$d")"
  ("$nvcc" -O3 -std=c++17 -arch="$arch" -Xptxas -v -I"$gen" -I"$d" "$d/matmul_2d.cu" "$root/benchmarks/matmul_bench.cu" -lcublas \
     -o "$out/${n}_bench" >"$out/$n.build.log" 2>&1 &&
   "$nvcc" -O3 -std=c++17 -arch="$arch" -I"$gen" -I"$d" "$d/matmul_2d.cu" "$d/matmul_2d_check.cu" -o "$out/${n}_check" \
     >>"$out/$n.build.log" 2>&1) &
done
wait
echo "design,ms,fraction_of_cublas" >"$out/matmul.csv"
for d in "${dirs[@]}"; do
  n="$(basename "$d")"  # NAME_JxI_SIZE
  size="${n##*_}"
  rows="${n%_*}"
  rows="${rows##*x}"
  if [[ ! -x "$out/${n}_bench" || ! -x "$out/${n}_check" ]]; then
    echo "FAIL $n: did not build (see $out/$n.build.log)"
    failures=$((failures + 1))
    continue
  fi
  echo "== $n: $(grep -o 'Used [0-9]* registers' "$out/$n.build.log" | head -1), $(grep -o '[0-9]* bytes spill stores' "$out/$n.build.log" | head -1)"
  "$out/${n}_check" 3 | tail -1 || failures=$((failures + 1))
  line="$("$out/${n}_bench" "$size" "$size" "$size" "$rows")" || failures=$((failures + 1))
  echo "$line"
  csv="$(grep '^CSV,matmul' <<<"$line")"
  IFS=, read -r _ _ _ _ _ ms _ fraction check <<<"$csv"
  [[ "$check" == PASS ]] && echo "\"$n\",$ms,$fraction" >>"$out/matmul.csv"
done
if python3 -c "import matplotlib" 2>/dev/null; then
  python3 "$root/benchmarks/plot_matmul.py" "$out/matmul.csv" "$out/matmul.png" && echo "plotted $out/matmul.png"
fi
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_matmul: $failures step(s) failed"
  exit 1
fi

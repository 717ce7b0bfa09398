#!/usr/bin/env bash
# Builds and runs the alignment benchmark on a machine with CUDA and a GPU: for
# each kernel folder benchmarks/generate_align.sh wrote, the check harness
# (random inputs, odd instance counts, poisoned outputs) and
# benchmarks/align_bench.cu (Pulse's align_sw_matrix against a plain CUDA
# aligner, one thread per pair, in the same run, every score compared). Prints
# a table and writes align.csv (Q,S,B,pulse_ms,pulse_gcups,peer_ms,peer_gcups) to OUT_DIR.
#
# usage: scripts/gpu_bench_align.sh GENERATED_DIR OUT_DIR
# environment: NVCC (default nvcc), ARCH (default sm_90), ALIGN_SEQUENCES (default 65536)
set -uo pipefail
usage="usage: scripts/gpu_bench_align.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
sequences="${ALIGN_SEQUENCES:-65536}"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
failures=0
dirs=()
for d in "$gen"/q*_s*/; do [[ -f "$d/align_sw_matrix.cu" ]] && dirs+=("${d%/}"); done
for d in "${dirs[@]}"; do
  n="$(basename "$d")"
  ("$nvcc" -O3 -std=c++17 -arch="$arch" -Xptxas -v -I"$gen" -I"$d" -I"$root/examples" "$d/align_sw_matrix.cu" "$root/benchmarks/align_bench.cu" \
     -o "$out/${n}_bench" >"$out/$n.build.log" 2>&1 &&
   "$nvcc" -O3 -std=c++17 -arch="$arch" -I"$gen" -I"$d" "$d/align_sw_matrix.cu" "$d/align_sw_matrix_check.cu" -o "$out/${n}_check" \
     >>"$out/$n.build.log" 2>&1) &
done
wait
echo "Q,S,B,pulse_ms,pulse_gcups,peer_ms,peer_gcups" >"$out/align.csv"
for d in "${dirs[@]}"; do
  n="$(basename "$d")"  # q<Q>_s<S>
  q="${n%_s*}"; q="${q#q}"
  s="${n##*_s}"
  if [[ ! -x "$out/${n}_bench" || ! -x "$out/${n}_check" ]]; then
    echo "FAIL $n: did not build (see $out/$n.build.log)"
    failures=$((failures + 1))
    continue
  fi
  echo "== $n: $(grep -A2 'Function properties for .*align_sw_matrix_kernel' "$out/$n.build.log" | grep -o 'Used [0-9]* registers' | head -1), $(grep -A2 'Function properties for .*align_sw_matrix_kernel' "$out/$n.build.log" | grep -o '[0-9]* bytes spill stores' | head -1)"
  "$out/${n}_check" 3 | tail -1 || failures=$((failures + 1))
  line="$("$out/${n}_bench" "$q" "$s" "$sequences")" || failures=$((failures + 1))
  echo "$line"
  csv="$(grep '^CSV,align' <<<"$line")"
  IFS=, read -r _ _ cq cs cb pms pg ems eg check <<<"$csv"
  [[ "$check" == PASS ]] && echo "$cq,$cs,$cb,$pms,$pg,$ems,$eg" >>"$out/align.csv"
done
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_align: $failures step(s) failed"
  exit 1
fi

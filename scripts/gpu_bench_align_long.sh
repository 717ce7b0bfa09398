#!/usr/bin/env bash
# Builds and runs the long-query benchmark on a machine with CUDA and a GPU:
# for each segment kernel benchmarks/generate_align_long.sh wrote, its check
# harness (random inputs, odd instance counts, poisoned outputs) and
# benchmarks/align_long_bench.cu at each query length of ALIGN_QUERIES the
# segment divides (Pulse in passes against a plain CUDA aligner on the whole
# query, every score compared), and compute-sanitizer memcheck on the
# shortest such run over 1024 sequences. Prints the lines and writes
# align_long.csv to OUT_DIR.
#
# usage: scripts/gpu_bench_align_long.sh GENERATED_DIR OUT_DIR
# environment: NVCC (default nvcc), ARCH (default sm_90), ALIGN_QUERIES
#   (default "1024 2048 4096"), ALIGN_SEQUENCES (default 65536), MEMCHECK (default 1)
set -uo pipefail
usage="usage: scripts/gpu_bench_align_long.sh GENERATED_DIR OUT_DIR"
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
for d in "$gen"/l*_s*/; do [[ -f "$d/align_segment.cu" ]] && dirs+=("${d%/}"); done
for d in "${dirs[@]}"; do
  n="$(basename "$d")"
  ("$nvcc" -O3 -std=c++17 -arch="$arch" -Xptxas -v -I"$gen" -I"$d" -I"$root/examples" "$d/align_segment.cu" "$root/benchmarks/align_long_bench.cu" \
     -o "$out/${n}_bench" >"$out/$n.build.log" 2>&1 &&
   "$nvcc" -O3 -std=c++17 -arch="$arch" -I"$gen" -I"$d" "$d/align_segment.cu" "$d/align_segment_check.cu" -o "$out/${n}_check" \
     >>"$out/$n.build.log" 2>&1) &
done
wait
echo "Q,L,S,B,pulse_ms,pulse_gcups,peer_ms,peer_gcups" >"$out/align_long.csv"
checked=""
for d in "${dirs[@]}"; do
  n="$(basename "$d")"  # l<L>_s<S>
  l="${n%_s*}"; l="${l#l}"
  s="${n##*_s}"
  if [[ ! -x "$out/${n}_bench" || ! -x "$out/${n}_check" ]]; then
    echo "FAIL $n: did not build"; cat "$out/$n.build.log"; failures=$((failures + 1)); continue
  fi
  echo "== $n: $(grep -A2 'Function properties for .*align_segment_kernel' "$out/$n.build.log" | grep -o 'Used [0-9]* registers' | head -1), $(grep -A2 'Function properties for .*align_segment_kernel' "$out/$n.build.log" | grep -o '[0-9]* bytes spill stores' | head -1)"
  "$out/${n}_check" 3 | tail -1 || failures=$((failures + 1))
  for q in ${ALIGN_QUERIES:-1024 2048 4096}; do
    (( q % l == 0 )) || continue
    line="$("$out/${n}_bench" "$q" "$l" "$s" "$sequences")" || failures=$((failures + 1))
    echo "$line"
    IFS=, read -r _ _ cq cl cs cb pms pg ems eg check <<<"$(grep '^CSV,align_long' <<<"$line")"
    [[ "$check" == PASS ]] && echo "$cq,$cl,$cs,$cb,$pms,$pg,$ems,$eg" >>"$out/align_long.csv"
    [[ -z "$checked" ]] && checked="$n $q $l $s"
  done
done
if [[ "${MEMCHECK:-1}" != 0 && -n "$checked" ]]; then
  read -r n q l s <<<"$checked"
  echo "== compute-sanitizer memcheck: ${n}_bench $q $l $s 1024"
  compute-sanitizer --tool memcheck --error-exitcode 1 "$out/${n}_bench" "$q" "$l" "$s" 1024 2>&1 | tail -3 || failures=$((failures + 1))
fi
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_align_long: $failures step(s) failed"
  exit 1
fi

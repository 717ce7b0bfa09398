#!/usr/bin/env bash
# Builds and runs the ragged-database alignment benchmark on a machine with
# CUDA and a GPU: for each query folder benchmarks/generate_align_db.sh wrote
# (q<Q>, or l<L> with ALIGN_SEGMENT: each query length its file `queries` lists),
# every length class's check harness (random inputs and lengths, odd instance
# counts, poisoned outputs) and benchmarks/align_db_bench.cu (the whole
# database, Pulse against a plain CUDA aligner in the same run, every score
# compared), and compute-sanitizer memcheck on the benchmark over the whole
# database. Prints the lines and writes align_db.csv to OUT_DIR.
#
# usage: scripts/gpu_bench_align_db.sh GENERATED_DIR OUT_DIR
# environment: NVCC (default nvcc), ARCH (default sm_90), ALIGN_SEQUENCES
#   (default 1048576), MEMCHECK (default 1: compute-sanitizer memcheck of the
#   first folder's benchmark over MEMCHECK_SEQUENCES, default ALIGN_SEQUENCES,
#   checked once; 40-160 s on an H100 or H200 for 2^20), NVCC_FLAGS (more nvcc flags, e.g.
#   -lineinfo for a profile by source line)
set -uo pipefail
usage="usage: scripts/gpu_bench_align_db.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
sequences="${ALIGN_SEQUENCES:-1048576}"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
failures=0
dirs=()
for d in "$gen"/q*/ "$gen"/l*/; do [[ -f "$d/kernels.h" ]] && dirs+=("${d%/}"); done
# shellcheck disable=SC2206  # NVCC_FLAGS is a list
flags=(-O3 -std=c++17 -arch="$arch" -I"$gen" ${NVCC_FLAGS:-})
# Every kernel object once, in parallel (one newer than its source is kept:
# a packed kernel takes minutes); then the check harnesses and the benchmarks.
for d in "${dirs[@]}"; do
  for k in "$d"/align_db_s*.cu "$d"/align_db_fallback.cu; do
    [[ "$k" == *_check.cu || ! -f "$k" ]] && continue
    [[ "${k%.cu}.o" -nt "$k" && -s "${k%.cu}.build.log" ]] && continue
    "$nvcc" "${flags[@]}" -Xptxas -v -I"$d" -c "$k" -o "${k%.cu}.o" >"${k%.cu}.build.log" 2>&1 &
  done
done
wait
for d in "${dirs[@]}"; do
  n="$(basename "$d")"
  for k in "$d"/align_db_s*_check.cu "$d"/align_db_fallback_check.cu; do
    [[ -f "$k" ]] || continue
    ("$nvcc" "${flags[@]}" -I"$d" "${k%_check.cu}.o" "$k" -o "${k%.cu}" >"${k%.cu}.build.log" 2>&1) &
  done
  objects=("$d"/align_db_s*[0-9].o)
  [[ -f "$d/align_db_fallback.o" ]] && objects+=("$d/align_db_fallback.o")
  ("$nvcc" "${flags[@]}" -I"$d" -I"$root/examples" "${objects[@]}" "$root/benchmarks/align_db_bench.cu" -o "$out/${n}_bench" \
     >"$out/$n.build.log" 2>&1) &
done
wait
echo "Q,sequences,residues,longest,pulse_ms,pulse_gcups,peer_ms,peer_gcups" >"$out/align_db.csv"
for d in "${dirs[@]}"; do
  n="$(basename "$d")"
  for k in "$d"/align_db_s*[0-9].cu "$d"/align_db_fallback.cu; do
    [[ -f "$k" ]] || continue
    echo "== $n $(basename "${k%.cu}"): $(grep -o 'Used [0-9]* registers' "${k%.cu}.build.log" | head -1), $(grep -o '[0-9]* bytes spill stores' "${k%.cu}.build.log" | head -1)"
    if [[ ! -x "${k%.cu}_check" ]]; then
      echo "FAIL: ${k%.cu}_check did not build"; cat "${k%.cu}_check.build.log"; failures=$((failures + 1)); continue
    fi
    "${k%.cu}_check" 3 | tail -1 || failures=$((failures + 1))
  done
  if [[ ! -x "$out/${n}_bench" ]]; then
    echo "FAIL $n: did not build"; cat "$out/$n.build.log"; failures=$((failures + 1)); continue
  fi
  # A folder of segment kernels runs every query length its file `queries` lists.
  queries=""
  [[ -f "$d/queries" ]] && queries="$(cat "$d/queries")"
  for q in ${queries:-default}; do
    log="$out/$n.log"
    args=("$sequences")
    [[ $q != default ]] && log="$out/${n}_q$q.log" && args+=("$q")
    "$out/${n}_bench" "${args[@]}" | tee "$log" || failures=$((failures + 1))
    csv="$(grep '^CSV,align_db' "$log")"
    IFS=, read -r _ _ cq cn cr cl pms pg ems eg check <<<"$csv"
    [[ "$check" == PASS ]] && echo "$cq,$cn,$cr,$cl,$pms,$pg,$ems,$eg" >>"$out/align_db.csv"
  done
done
if [[ "${MEMCHECK:-1}" != 0 && ${#dirs[@]} -gt 0 ]]; then
  # The whole database once through Pulse (ALIGN_DB_CHECK_ONLY: no timed
  # repetitions), its scores compared; the peer runs uninstrumented.
  n="$(basename "${dirs[0]}")"; [[ -d "$gen/q128" ]] && n=q128  # the shortest query: memcheck is slow
  memcheck_sequences="${MEMCHECK_SEQUENCES:-$sequences}"
  echo "== compute-sanitizer memcheck: ${n}_bench over $memcheck_sequences sequences"
  ALIGN_DB_CHECK_ONLY=1 compute-sanitizer --tool memcheck --error-exitcode 1 --kernel-name-exclude kns=align_one_thread_per_pair \
    "$out/${n}_bench" "$memcheck_sequences" 2>&1 | tail -4 || failures=$((failures + 1))
fi
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_align_db: $failures step(s) failed"
  exit 1
fi

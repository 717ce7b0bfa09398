#!/usr/bin/env bash
# Emits the alignment benchmark's Pulse kernels (spec align_sw_matrix of
# examples/align), one folder per query length, each holding
# align_sw_matrix.{cu,h} and its check harness: benchmarks/align_bench.cu is
# built against each folder (scripts/gpu_bench_align.sh).
#
# usage: benchmarks/generate_align.sh BUILD_DIR OUT_DIR
#   BUILD_DIR  a configured and built Pulse build tree
#   OUT_DIR    gets a folder per query length: q<Q>_s<S>
# environment: ALIGN_QUERIES (default "32 128 256"), ALIGN_SUBJECT (default 301),
#   ALIGN_FLAGS (generator flags for every kernel; default --unroll-steps=64: a
#   short query's fully unrolled steps spill)
set -euo pipefail
usage="usage: benchmarks/generate_align.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
s="${ALIGN_SUBJECT:-301}"
for q in ${ALIGN_QUERIES:-32 128 256}; do
  dir="$out/q${q}_s$s"
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # ALIGN_FLAGS is a list
  "$build/examples/align" -g align_sw_matrix --param "Q=$q" --param "S=$s" ${ALIGN_FLAGS---unroll-steps=64} --emit cuda -o "$dir" >"$dir/generate.log" 2>&1 ||
    { echo "FAIL $dir:"; cat "$dir/generate.log"; exit 1; }
done
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote $(find "$out" -name align_sw_matrix.cu | wc -l) alignment kernels to $out"

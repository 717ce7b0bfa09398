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
#   short query's fully unrolled steps spill), ALIGN_SPEC (default
#   align_sw_matrix; align_sw_blocked takes K, its residues per lane, from
#   ALIGN_RESIDUES_PER_LANE, default Q / 32), emitted under the name align_sw_matrix
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
  spec="${ALIGN_SPEC:-align_sw_matrix}"
  per_lane=()
  [[ "$spec" == align_sw_blocked ]] && per_lane=(--param "K=${ALIGN_RESIDUES_PER_LANE:-$(((q + 31) / 32))}")
  "$build/examples/align" -g "$spec" --param "Q=$q" --param "S=$s" "${per_lane[@]}" ${ALIGN_FLAGS---unroll-steps=64} --emit cuda \
    --name=align_sw_matrix -o "$dir" >"$dir/generate.log" 2>&1 ||
    { echo "FAIL $dir:"; cat "$dir/generate.log"; exit 1; }
done
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote $(find "$out" -name align_sw_matrix.cu | wc -l) alignment kernels to $out"

#!/usr/bin/env bash
# Emits the long-query benchmark's kernels (spec align_sw_segment of
# examples/align: one pass of the blocked Smith-Waterman over a segment of L
# query residues), one folder per segment length, l<L>_s<S>, each holding
# align_segment.{cu,h} and its check harness: benchmarks/align_long_bench.cu
# runs a query of several segments in passes (scripts/gpu_bench_align_long.sh).
#
# usage: benchmarks/generate_align_long.sh BUILD_DIR OUT_DIR
# environment: ALIGN_SEGMENTS (segment lengths, each "L:K:BLOCKS" with K its
#   residues per lane and BLOCKS the blocks an SM asked, 0 for none; default
#   "512:16:2 1024:32:0", the fastest settings of the ragged database),
#   ALIGN_SUBJECT (default 301)
set -euo pipefail
usage="usage: benchmarks/generate_align_long.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
s="${ALIGN_SUBJECT:-301}"
for segment in ${ALIGN_SEGMENTS:-512:16:2 1024:32:0}; do
  IFS=: read -r l k blocks <<<"$segment"
  dir="$out/l${l}_s$s"
  mkdir -p "$dir"
  occupancy=()
  [[ "$blocks" != 0 ]] && occupancy=(--min-blocks-per-sm="$blocks")
  "$build/examples/align" -g align_sw_segment --param "Q=$l" --param "K=$k" --param "S=$s" "${occupancy[@]}" --emit cuda \
    --name=align_segment -o "$dir" >"$dir/generate.log" 2>&1 || { echo "FAIL $dir:"; cat "$dir/generate.log"; exit 1; }
done
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote $(find "$out" -name align_segment.cu | wc -l) segment kernels to $out"

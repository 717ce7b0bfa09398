#!/usr/bin/env bash
# Emits the matrix-multiply benchmark's Pulse kernels (spec matmul_2d of
# examples/matmul), one folder per design and size, each holding matmul_2d.{cu,h}
# and its check harness: benchmarks/matmul_bench.cu is built against each folder
# (scripts/gpu_bench_matmul.sh).
#
# usage: benchmarks/generate_matmul.sh BUILD_DIR OUT_DIR
#   BUILD_DIR  a configured and built Pulse build tree
#   OUT_DIR    gets a folder per design: NAME_N (N = M = K, the size it is built for)
# environment: MATMUL_SIZES (default "4096 8192")
set -euo pipefail
usage="usage: benchmarks/generate_matmul.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
# NAME J I BROADCAST FLAGS: the output tile is J columns by I rows of one warp
# (tile: of a block of 8 warps, 4 x 8 outputs per thread, both operands staged in
# shared memory 16 steps at a time, each run's copy loaded during the run before;
# two blocks per SM, which spills only in the border copy).
designs=(
  "rowcast 128 8 1 --prefetch"       # a broadcast along the rows (t = k + i)
  "outer 128 8 2 --prefetch"         # both broadcast (t = k): columns interleaved over the lanes
  "outer 256 4 2 --prefetch"
  "tile 128 64 2 --param WARPS=1 --param SHARED=1 --pes-per-thread=8 --shared-steps=16 --double-buffer --min-blocks-per-sm=2 --unroll-steps=0"
)
for n in ${MATMUL_SIZES:-4096 8192}; do
  for entry in "${designs[@]}"; do
    read -r name j i broadcast flags <<<"$entry"
    dir="$out/${name}_${j}x${i}_$n"
    mkdir -p "$dir"
    # shellcheck disable=SC2086  # flags is a list
    "$build/examples/matmul" -g matmul_2d --param "J=$j" --param "I=$i" --param "K=$n" --param "JO=$((n / j))" \
      --param "BROADCAST=$broadcast" $flags --emit cuda -o "$dir" >"$dir/generate.log" 2>&1 ||
      { echo "FAIL $dir:"; cat "$dir/generate.log"; exit 1; }
  done
done
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote $(find "$out" -name matmul_2d.cu | wc -l) matmul kernels to $out"

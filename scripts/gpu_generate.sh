#!/usr/bin/env bash
# Emits the CUDA kernel, host header, C++ reference and check harness of every
# example into one directory (default build/gpu_sources), together with the
# runtime header, so that a machine with CUDA but without Halide or isl can
# build and run them (scripts/gpu_run.sh).
#
# usage: scripts/gpu_generate.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a configured and built Pulse build tree (default: build)
#   OUT_DIR    where to write the sources (default: BUILD_DIR/gpu_sources)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
out="${2:-$build/gpu_sources}"
mkdir -p "$out"
# The examples at their default sizes: every array has at most 32 PEs.
examples=(
  "conv1d conv1d_sbm" "conv1d conv1d_bsm" "conv1d conv1d_fsm" "conv1d conv1d_bfs" "conv1d conv1d_ffs"
  "conv1d conv1d_fbs" "conv1d conv1d_fbs_stride2" "conv2d conv2d_sbm" "conv2d conv2d_ssam" "matmul matmul"
  "matvec matvec" "fir fir_stride2"
)
for entry in "${examples[@]}"; do
  read -r program spec <<<"$entry"
  "$build/examples/$program" -g "$spec" --emit cuda -o "$out" >/dev/null
  echo "$spec" >>"$out/.list"
done
sort -u "$out/.list" -o "$out/examples.txt"
rm -f "$out/.list"
cp "$root/runtime/pulse_cuda.h" "$root/runtime/pulse_buffer.h" "$out/"
# The 1-D convolution benchmark's kernels (scripts/gpu_bench.sh): SBM and FBS
# with filters of 5 and 17 taps, each as wide as a warp allows (SBM has
# C + Q - 1 PEs, FBS has C).
for q in 5 17; do
  "$build/examples/conv1d" -g conv1d_sbm --param Q=$q --param C=$((33 - q)) --emit cuda -o "$out/bench/sbm_q$q" >/dev/null
  "$build/examples/conv1d" -g conv1d_fbs --param Q=$q --param C=32 --emit cuda -o "$out/bench/fbs_q$q" >/dev/null
done
echo "wrote $(wc -l <"$out/examples.txt") examples to $out"

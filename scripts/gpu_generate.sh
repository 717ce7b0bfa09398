#!/usr/bin/env bash
# Emits the CUDA kernel, host header, C++ reference and check harness of every
# example into one directory (default build/gpu_sources), together with the
# runtime header, so that a machine with CUDA but without Halide or isl can
# build and run them (scripts/gpu_run.sh), and the kernels of the 1-D
# convolution benchmark (scripts/gpu_bench.sh).
#
# usage: scripts/gpu_generate.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a configured and built Pulse build tree (default: build)
#   OUT_DIR    where to write the sources (default: BUILD_DIR/gpu_sources)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
out="${2:-$build/gpu_sources}"
mkdir -p "$out"
# The examples at their default sizes (every array has at most 32 PEs; the
# 2-D ones a small grid).
examples=(
  "conv1d conv1d_sbm" "conv1d conv1d_bsm" "conv1d conv1d_fsm" "conv1d conv1d_bfs" "conv1d conv1d_ffs"
  "conv1d conv1d_fbs" "conv1d conv1d_fbs_stride2" "conv2d conv2d_sbm" "conv2d conv2d_ssam" "matmul matmul"
  "matvec matvec" "fir fir_stride2" "stencil stencil2d_5pt" "stencil stencil2d_9pt" "stencil stencil2d_25pt"
  "stencil stencil2d_star2" "stencil stencil3d_7pt" "stencil stencil3d_27pt" "stencil jacobi2d"
  "stencil jacobi3d" "trisolve trisolve_f64" "factor lu_f64" "matmul matmul_2d" "conv2d conv2d_2d"
  "align align_sw" "align align_sw_i16" "align align_edit_distance"
)
for entry in "${examples[@]}"; do
  read -r program spec <<<"$entry"
  "$build/examples/$program" -g "$spec" --emit cuda -o "$out" >/dev/null
  echo "$spec" >>"$out/.list"
done
# Mappings beyond the defaults, each a kernel of its own name: arrays over the
# warps of a block (gpu_threads), inputs staged in shared memory or read
# through L1 (the cache placement), tiles of PEs per thread; a setting
# NAME=V is a spec parameter, one starting with -- a generator flag.
variants=(
  "conv2d conv2d_ssam conv2d_ssam_threads70 K=5 PE=70 THREADS=1"
  "conv2d conv2d_ssam conv2d_ssam_wshared K=7 WCACHE=2"
  "stencil stencil2d_5pt stencil2d_5pt_threads64 PE=64 THREADS=1"
  "stencil stencil2d_9pt stencil2d_9pt_shared CACHE=2"
  "stencil stencil2d_25pt stencil2d_25pt_l1 CACHE=1 F64=1"
  "stencil stencil2d_star2 stencil2d_star2_shared_threads CACHE=2 PE=80 THREADS=1"
  "stencil stencil3d_7pt stencil3d_7pt_threads64 PE=64 THREADS=1 F64=1"
  "stencil stencil3d_27pt stencil3d_27pt_shared CACHE=2 S=4"
  "stencil jacobi2d jacobi2d_f64_pe40 F64=1 T=3 TH=20 PE=40"
  "stencil jacobi3d jacobi3d_f64_pe40 F64=1 T=1 PE=40 TH=6 TZ=10"
  "matmul matmul_2d matmul_2d_warps WARPS=1 J=7 I=5 K=9"
  "matmul matmul_2d matmul_2d_blocks J=70 I=4 K=300 FP64=1"
  "conv2d conv2d_2d conv2d_2d_warps WARPS=1 R=5 K=4"
  "conv2d conv2d_2d conv2d_2d_tile WARPS=1 INPLACE=1 SHARED=1 K=5 C=70 R=9 --pes-per-thread=3 --unroll-steps=0"
  "matmul matmul_2d matmul_2d_tile WARPS=1 BROADCAST=2 SHARED=1 J=70 I=9 K=37 --pes-per-thread=3 --shared-steps=4 --double-buffer --unroll-steps=0"
  "align align_sw align_sw_q200 Q=200 S=301 B=1001 MATCH=5 MISMATCH=4"
  "align align_edit_distance align_edit_distance_q70 Q=70 S=123 B=517"
  "align align_sw_matrix align_sw_matrix_q1100 Q=1100 S=301 B=333"
  "align align_edit_distance align_edit_distance_q1030 Q=1030 S=77 B=129"
)
for entry in "${variants[@]}"; do
  read -r program spec name settings <<<"$entry"
  params=()
  for kv in $settings; do
    if [[ "$kv" == --* ]]; then params+=("$kv"); else params+=(--param "$kv"); fi
  done
  "$build/examples/$program" -g "$spec" "${params[@]}" --emit cuda --name="$name" -o "$out" >/dev/null
  echo "$name" >>"$out/.list"
done
sort -u "$out/.list" -o "$out/examples.txt"
rm -f "$out/.list"
cp "$root/runtime/pulse_cuda.h" "$root/runtime/pulse_buffer.h" "$out/"
# The 1-D convolution benchmark's kernels, conv1d_{sbm,fbs}_q{5,17}.{cu,h},
# beside the examples (scripts/gpu_bench.sh OUT_DIR RESULTS_DIR runs them).
CONV2D_KS="" "$root/benchmarks/generate_conv.sh" "$build" "$out" >/dev/null
echo "wrote $(wc -l <"$out/examples.txt") examples to $out"

#!/usr/bin/env bash
# Builds and runs the 1-D convolution benchmark (benchmarks/conv1d_bench.cu) on
# the kernels scripts/gpu_generate.sh wrote under SOURCES_DIR/bench: Pulse SBM
# and FBS against a plain CUDA kernel, each as a fraction of the copy floor.
#
# usage: scripts/gpu_bench.sh SOURCES_DIR [OUTPUTS]   (environment: NVCC, ARCH)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:?usage: gpu_bench.sh SOURCES_DIR [OUTPUTS]}"
outputs="${2:-33554432}"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
for dir in "$src"/bench/*_q*; do
  tag="$(basename "$dir")"            # e.g. sbm_q5
  design="${tag%_q*}"
  q="${tag#*_q}"
  kernel="conv1d_$design"
  "$nvcc" -O3 -std=c++17 -arch="$arch" -I"$root/runtime" -I"$dir" -DPULSE_KERNEL="$kernel" \
    -DPULSE_KERNEL_HEADER="\"$kernel.h\"" -DFILTER_Q="$q" "$root/benchmarks/conv1d_bench.cu" "$dir/$kernel.cu" \
    -o "$dir/bench"
  "$dir/bench" "$outputs"
done

#!/usr/bin/env bash
# Vectors on a GPU: builds and runs the check that
# `PULSE_VECTOR_CUDA_DIR=DIR build/test/test_kernel_vectors` wrote: a kernel of two
# array instances a warp, their int16 packed in one register (SIMD and DPX
# instructions), against the kernel executor's bits on inputs full of int16's edges.
#
# usage: scripts/gpu_kernel_vectors.sh DIR
set -uo pipefail
dir="${1:?usage: $0 DIR}"
runtime="$(cd "$(dirname "$0")/../runtime" && pwd)"
nvcc="${NVCC:-nvcc}"
(cd "$dir" && "$nvcc" -arch="${ARCH:-sm_90}" -O3 -I "$runtime" main.cu pairs.cu -o run > build.log 2>&1) || { echo "BUILD-FAIL $dir"; head -30 "$dir/build.log"; exit 1; }
(cd "$dir" && ./run)

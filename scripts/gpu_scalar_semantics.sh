#!/usr/bin/env bash
# The scalar semantics on a GPU: builds and runs the CUDA checks that
# `PULSE_SCALAR_CUDA_DIR=DIR build/test/test_scalar_semantics` wrote, each a batch of random
# expressions over every type on edge values, compared bit for bit with the interpreter
# (NaN equal to NaN). Built with -fmad=false: contraction into fused multiply-adds is the
# one difference the semantics allows a GPU (docs/language.md), and this checks the rest.
#
# usage: scripts/gpu_scalar_semantics.sh DIR
set -uo pipefail
dir="${1:?usage: $0 DIR}"
runtime="$(cd "$(dirname "$0")/../runtime" && pwd)"
failed=0
for d in "$dir"/batch*/; do
    (cd "$d" && nvcc -arch=sm_90 -O2 -fmad=false -I "$runtime" main.cu scalars.cu -o run > build.log 2>&1) || { echo "BUILD-FAIL $d"; cat "$d/build.log" | head -20; failed=1; continue; }
    (cd "$d" && ./run) || failed=1
done
exit $failed

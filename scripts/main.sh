#!/usr/bin/env bash
# The main job: installs what is missing, builds Pulse, and runs the 1-D
# convolution example (design SBM) end to end: the spec, the reference
# interpreter, the validator, the analysis report, the systolic simulator, the
# generated CUDA kernel (built and run against the reference when this machine
# has an NVIDIA GPU and nvcc) and the generated CM kernel on the CPU emulation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target conv1d
CONV1D="$BUILD_DIR/examples/conv1d"
OUT="$BUILD_DIR/main_job"
mkdir -p "$OUT"
echo "== the spec, lowered =="
"$CONV1D" -g sbm --print-ir
echo "== reference interpreter on random inputs =="
"$CONV1D" -g sbm --realize
echo "== the transform, proven with isl =="
"$CONV1D" -g sbm --check
echo "== the systolic design =="
"$CONV1D" -g sbm --report
echo "== systolic simulator against the reference =="
"$CONV1D" -g sbm --simulate
echo "== CUDA: kernel, host header, reference and check harness in $OUT =="
"$CONV1D" -g sbm --emit cuda -o "$OUT"
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -n "$NVCC" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    cp runtime/pulse_cuda.h runtime/pulse_buffer.h "$OUT/"
    "$NVCC" -O3 -std=c++17 -arch=sm_90 -I"$OUT" "$OUT/conv1d_sbm_check.cu" "$OUT/conv1d_sbm.cu" -o "$OUT/conv1d_sbm_check"
    "$OUT/conv1d_sbm_check"
else
    echo "no NVIDIA GPU here: the CUDA kernel was generated but not run (the simulator above checked the design)"
fi
echo "== CM: kernel and host code, run on the CPU emulation =="
"$CONV1D" -g sbm --emit cm-emu -o "$OUT"

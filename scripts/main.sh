#!/usr/bin/env bash
# The main job: installs what is missing, builds Pulse, and runs the 1-D
# convolution example (design SBM) end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target conv1d
CONV1D="$BUILD_DIR/examples/conv1d"
echo "== the spec, lowered =="
"$CONV1D" -g sbm --print-ir
echo "== reference interpreter on random inputs =="
"$CONV1D" -g sbm --realize

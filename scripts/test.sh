#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test that
# needs no GPU (GPU tests carry the ctest label `gpu`; see scripts/gpu_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"
# The randomized agreement test's case counts, shown in the log (ctest runs it again below).
"$BUILD_DIR/test/test_random_transforms" | grep "^random transforms:"
ctest --test-dir "$BUILD_DIR" --output-on-failure -LE gpu -j "$(nproc)"

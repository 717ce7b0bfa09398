#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test that
# needs no GPU (GPU tests carry the ctest label `gpu`; see scripts/gpu_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"
# The differential fuzzer at 7 times its ctest scale (over 10^4 random designs:
# validator vs brute force, simulator, kernel executor and a CM sample vs the
# reference), its summary in the log; ctest runs it again at its own scale below.
PULSE_RANDOM_SCALE=7 "$BUILD_DIR/test/test_random_transforms" | grep -E "^random transforms:|^  refused|test cases"
ctest --test-dir "$BUILD_DIR" --output-on-failure -LE gpu -j "$(nproc)"
# The same tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (PULSE_SANITIZE=0 leaves them out, e.g. for a quick local run).
if [[ "${PULSE_SANITIZE:-1}" != 0 ]]; then
  scripts/test_sanitized.sh
fi

#!/usr/bin/env bash
# The test command under AddressSanitizer and UndefinedBehaviorSanitizer: a
# separate build (build-asan, -DPULSE_SANITIZE=ON) and every test that needs no
# GPU; any sanitizer report fails the test that triggers it. Leak detection is
# off: the frontend's Func graphs hold each other through shared pointers and
# are released at exit only (a known gap, not a memory error).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build-asan}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPULSE_SANITIZE=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The install test (label install) checks the package's layout, not memory
# safety; it runs in the plain build of scripts/test.sh.
ctest --test-dir "$BUILD_DIR" --output-on-failure -LE "gpu|install" -j "$(nproc)"

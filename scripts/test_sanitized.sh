#!/usr/bin/env bash
# The test command under AddressSanitizer and UndefinedBehaviorSanitizer: a
# separate build (build-asan, -DPULSE_SANITIZE=ON: the compiler instrumented,
# every program linked with the sanitizers' runtimes) and every test that needs
# no GPU; any sanitizer report fails the test that triggers it. Leak detection is
# off: the frontend's Func graphs hold each other through shared pointers and
# are released at exit only (a known gap, not a memory error).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build-asan}"
# Release: the tests and examples, compiled plain, need no debug information;
# the instrumented library has its own -g (line numbers in the reports).
# The tests and examples compile as in the plain build: ccache gives back its objects.
source scripts/compiler_cache.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPULSE_SANITIZE=ON "${PULSE_COMPILER_CACHE[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Every test that needs no GPU, less those scripts/test_partition.sh leaves to
# the plain build of scripts/test.sh.
source scripts/test_partition.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure "${pulse_sanitized_ctest_filter[@]}" -j "$(nproc)"

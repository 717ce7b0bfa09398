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
# Left to the plain build of scripts/test.sh: the install test (label install)
# checks the package's layout; the tests labelled nvcc, the test_cuda case
# that compiles every printed kernel and the random samples built against the
# CM emulation spend their time compiling generated code (nvcc, g++), and
# exercise the compiler's memory no further than the tests that stay (every
# example's kernel printed for CUDA and CM and run on the kernel executor, the
# fuzzers on the kernel executor); so does the build of every example's CM
# emulation (the test that prints them stays);
# the tests labelled intel spend theirs in Intel's compiler (and the sanitized
# build has no opt plugin: opt-14 cannot load one linked with the sanitizers);
# the aligners'
# comparisons with CPU aligners (and the int16 overflow flag) run the align
# specs' kernels at queries of up to 261 residues, whose lowering every
# example's run at odd sizes takes at smaller ones; the benchmark generators
# (Jacobi's kernels and its search) print, at benchmark sizes, kernels the
# Jacobi tests lower and run at small ones; the examples' systems under random
# transforms on the kernel executor run the lowering and the executor that the
# random URE systems (the fuzzer, which stays) run on random transforms too;
# so, at odd sizes, do every example's kernel on the executor, the Jacobi
# kernels' bit comparison and the factorisations with their input read at its
# step (CACHE=1): their programs are examples' at full size, their lowering
# paths (wide and 2-D arrays, affine domains, arrays over warps) the fuzzer's
# draws, and the sanitized printing tests print every example's kernel; the
# reductions of every operator and type (and over the warps of a block) run
# small programs through the lowering the fuzzer's reduction outputs take, and
# the test that every access is guarded prints the examples' kernels again.
ctest --test-dir "$BUILD_DIR" --output-on-failure -LE "gpu|install|nvcc|intel" \
  -E "^cuda: every printed kernel compiles for sm_90|^cm: every example runs on the CM emulation|^a sample of accepted random (transforms|systems) runs on the CM emulation|^align_sw, align_sw_matrix|^align_sw_i16 flags|^align_sw_ragged|^bench_jacobi_kernels_generated$|^search_jacobi_generates$|^accepted random transforms run on the kernel executor|^every example runs on the kernel executor at odd sizes|^the Jacobi kernels compute the interpreter's bits|^lu, cholesky and trisolve with their input read at its step|^reduction outputs: every operator of every type|^reduction outputs on an array over the warps|^cuda: every access is guarded" \
  -j "$(nproc)"

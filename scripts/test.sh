#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test that
# needs no GPU (GPU tests carry the ctest label `gpu`; see scripts/gpu_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
source scripts/compiler_cache.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${PULSE_COMPILER_CACHE[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)"
# The differential fuzzer of random systems above its ctest scale, its summary
# in the log; ctest runs it again at its own scale below:
#  - random URE systems built through the language (1 to 3 loops, 1 to 4
#    recurrences, int and float types, reduction outputs, tables read at
#    input values) with random transforms: about 10^4
#    validator-vs-brute-force cases (one and two space rows); well-definedness
#    vs the interpreter; every accepted linear design simulated and run on the
#    kernel executor; a CM sample. A failure prints a shrunk spec and its seed
#    (PULSE_FUZZ_SEED=N starts the draw elsewhere).
# (The random transforms of the examples' systems run in ctest, at their own
# scale: most of their time goes to kernels of arrays wider than a warp.)
# It runs on one core, so it runs beside ctest (its log printed after); it also
# compiles its CM sample with Intel's compiler (the hidden [.intel] case, which
# ctest would run after drawing the systems again at its own scale).
fuzz_log="$BUILD_DIR/random_systems_6x.log"
PULSE_RANDOM_SCALE=6 "$BUILD_DIR/test/test_random_systems" "~[.],[.intel]" > "$fuzz_log" 2>&1 &
fuzz_pid=$!
# Every other test the sanitized run below leaves to this build
# (scripts/test_partition.sh), or, with PULSE_SANITIZE=0, every test; not the
# three cases of test_random_systems the run above makes at six times their
# scale from the same first seed (its ctest runs draw the first sixth of those
# systems and the same CM sample).
source scripts/test_partition.sh
fuzzed_above="^random URE systems: well-definedness|^a sample of accepted random systems runs on the CM emulation|^intel_random_systems_cm$"
if [[ "${PULSE_SANITIZE:-1}" != 0 ]]; then
  numbers="$(pulse_plain_test_numbers "$BUILD_DIR" "$fuzzed_above")"
  if [[ -z "$numbers" ]]; then
    echo "test: no tests found for the plain build (ctest -N printed no 'Test #N: name' lines?)" >&2
    exit 1
  fi
  plain_tests=(-I "0,0,0,$numbers")
else
  plain_tests=(-LE gpu -E "$fuzzed_above")
fi
ctest_status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure "${plain_tests[@]}" -j "$(nproc)" || ctest_status=$?
fuzz_status=0
wait "$fuzz_pid" || fuzz_status=$?
echo "== PULSE_RANDOM_SCALE=6 test_random_systems (exit status $fuzz_status) =="
cat "$fuzz_log"
if [[ $ctest_status != 0 || $fuzz_status != 0 ]]; then
  echo "test: failed (ctest exit status $ctest_status, random systems at scale 6 exit status $fuzz_status)" >&2
  exit 1
fi
# The other tests, with the compiler built with AddressSanitizer and
# UndefinedBehaviorSanitizer (PULSE_SANITIZE=0 runs every test above instead,
# e.g. for a quick local run).
if [[ "${PULSE_SANITIZE:-1}" != 0 ]]; then
  scripts/test_sanitized.sh
fi

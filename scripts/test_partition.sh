# Sourced by scripts/test.sh and scripts/test_sanitized.sh: which build runs
# which test. The test command builds twice, plain and with the compiler
# instrumented (AddressSanitizer, UndefinedBehaviorSanitizer), and runs each
# test once: in the sanitized build, unless it is named here, then in the
# plain one. A test runs plain when the sanitizers would add nothing to it:
#  - labels install, nvcc and intel: the installed package's layout, and
#    generated code compiled by nvcc or Intel's compiler (the sanitized build
#    has no opt plugin: opt-14 cannot load one linked with the sanitizers);
#  - the tests below spend their time compiling generated code (nvcc, g++ for
#    the CM emulation) or running, at large sizes, programs whose lowering the
#    sanitized tests take at small ones:
#    - every printed kernel through nvcc, every example's CM emulation, the
#      random samples built against the CM emulation;
#    - the aligners' comparisons with CPU aligners (and the int16 overflow
#      flag), at queries of up to 261 residues;
#    - the benchmark generators (Jacobi's kernels and its search), at
#      benchmark sizes;
#    - the examples' systems under random transforms, every example's kernel at
#      odd sizes on the executor, the Jacobi kernels' bit comparison, the
#      factorisations with their input read at its step (CACHE=1): examples'
#      programs at full size, their lowering paths (wide and 2-D arrays, affine
#      domains, arrays over warps) the sanitized fuzzer's draws, and the
#      sanitized printing tests print every example's kernel;
#    - the reductions of every operator and type (and over the warps of a
#      block): small programs through the lowering the fuzzer's reduction
#      outputs take; the test that every access is guarded prints the
#      examples' kernels again.
# PULSE_SANITIZE=0 scripts/test.sh runs every test plain.
PULSE_PLAIN_LABELS="install|nvcc|intel"
PULSE_PLAIN_TESTS="^cuda: every printed kernel compiles for sm_90|^cm: every example runs on the CM emulation|^a sample of accepted random (transforms|systems) runs on the CM emulation|^align_sw, align_sw_matrix|^align_sw_i16 flags|^align_sw_ragged|^bench_jacobi_kernels_generated$|^search_jacobi_generates$|^accepted random transforms run on the kernel executor|^every example runs on the kernel executor at odd sizes|^the Jacobi kernels compute the interpreter's bits|^lu, cholesky and trisolve with their input read at its step|^reduction outputs: every operator of every type|^reduction outputs on an array over the warps|^cuda: every access is guarded"

# pulse_sanitized_ctest_filter: ctest's arguments that pick the sanitized
# build's tests (every test that needs no GPU, less those above).
pulse_sanitized_ctest_filter=(-LE "gpu|$PULSE_PLAIN_LABELS" -E "$PULSE_PLAIN_TESTS")

# pulse_plain_test_numbers BUILD_DIR [EXCLUDE_REGEX]: the numbers of the plain
# build's tests (those needing no GPU that the sanitized build leaves, less
# those EXCLUDE_REGEX names), comma-separated, for `ctest -I 0,0,0,LIST` alone:
# ctest numbers the tests a filter leaves anew, so -I takes the numbers of the
# whole list, matched here by name.
pulse_plain_test_numbers() {
  local names='s/^ *Test *#[0-9]*: //p' exclude=("${@:2}")
  [[ ${#exclude[@]} -gt 0 ]] && exclude=(-E "${exclude[0]}")
  ctest --test-dir "$1" -N | sed -n 's/^ *Test *#\([0-9]*\): /\1\t/p' |
    awk -F'\t' 'FILENAME == "/dev/fd/3" { plain[$0] = 1; next } ($2 in plain) { print $1 }' \
      /dev/fd/3 - 3< <(comm -23 <(ctest --test-dir "$1" -N -LE gpu "${exclude[@]}" | sed -n "$names" | sort) \
                              <(ctest --test-dir "$1" -N "${pulse_sanitized_ctest_filter[@]}" | sed -n "$names" | sort)) |
    paste -sd, -
}

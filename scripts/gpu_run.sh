#!/usr/bin/env bash
# Builds and runs the check harnesses that scripts/gpu_generate.sh wrote, on a
# machine with CUDA (nvcc and a GPU; Halide and isl are not needed). Prints one
# line per example (the harness's PASS/FAIL line, plus the ptxas resource line)
# and exits nonzero if any example fails to build, spills, or fails its check.
#
# usage: scripts/gpu_run.sh SOURCES_DIR [LOG_DIR] [-- HARNESS_FLAGS...]
#   SOURCES_DIR  the output of gpu_generate.sh
#   LOG_DIR      where build logs and binaries go (default SOURCES_DIR/run)
#   environment: NVCC (default nvcc), ARCH (default sm_90)
set -uo pipefail
src="${1:?usage: gpu_run.sh SOURCES_DIR [LOG_DIR] [-- HARNESS_FLAGS...]}"
shift
logs="$src/run"
if [[ $# -gt 0 && "$1" != "--" ]]; then logs="$1"; shift; fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
mkdir -p "$logs"
failures=0
while read -r name; do
  [[ -z "$name" ]] && continue
  build_log="$logs/$name.build.log"
  if ! "$nvcc" -O3 -std=c++17 -arch="$arch" -Xptxas -v -I"$src" "$src/${name}_check.cu" "$src/$name.cu" \
      -o "$logs/${name}_check" >"$build_log" 2>&1; then
    echo "FAIL $name: nvcc failed (see $build_log)"
    failures=$((failures + 1))
    continue
  fi
  # The kernel's resource line: registers, and proof that nothing went to local memory.
  resources="$(grep -A2 "Function properties for .*${name}_kernel" "$build_log" | tr -s ' \n' ' ')"
  if ! grep -q "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" <<<"$resources"; then
    echo "FAIL $name: the kernel uses local memory: $resources"
    failures=$((failures + 1))
  fi
  if ! "$logs/${name}_check" "$@" >"$logs/$name.run.log" 2>&1; then
    failures=$((failures + 1))
  fi
  regs="$(grep -o "Used [0-9]* registers" "$build_log" | head -1)"
  echo "$(head -1 "$logs/$name.run.log") [$regs]"
  sed -n '2,$p' "$logs/$name.run.log"
done <"$src/examples.txt"
if [[ $failures -ne 0 ]]; then
  echo "$failures example(s) failed"
  exit 1
fi
echo "all examples passed"

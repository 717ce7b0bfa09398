#!/usr/bin/env bash
# Builds and runs every generated check harness in a folder (NAME_check.cu from
# `--emit cuda`) on a GPU: each at the spec's sizes and at a GPU-filling batch,
# full and cropped outputs, NaN-poisoned; then compute-sanitizer memcheck on
# the first two, and memcheck and racecheck on every kernel that uses shared
# memory. usage: scripts/gpu_check_all.sh GENERATED_DIR [INSTANCES]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "${1:?usage: gpu_check_all.sh GENERATED_DIR [INSTANCES]}" && pwd)"
big="${2:-4096}"
nvcc="${NVCC:-nvcc}"
status=0
for check in "$dir"/*_check.cu; do
  name="$(basename "$check" _check.cu)"
  "$nvcc" -O3 -std=c++17 -arch="${ARCH:-sm_90}" -I"$root/runtime" -I"$dir" "$dir/$name.cu" "$check" -o "$dir/$name.check" \
    > "$dir/$name.build.log" 2>&1 &
done
wait
checked=0
for check in "$dir"/*_check.cu; do
  name="$(basename "$check" _check.cu)"
  if [ ! -x "$dir/$name.check" ]; then echo "$name: BUILD FAIL"; cat "$dir/$name.build.log"; status=1; continue; fi
  "$dir/$name.check" || status=1
  "$dir/$name.check" "$big" || status=1
  if [ "$checked" -lt 2 ] && command -v compute-sanitizer > /dev/null; then
    compute-sanitizer --tool memcheck --error-exitcode 3 "$dir/$name.check" 2>&1 | tail -2 || status=1
  fi
  if grep -q "__shared__" "$dir/$name.cu" && command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
      echo "$name: compute-sanitizer $tool"
      compute-sanitizer --tool "$tool" --error-exitcode 3 "$dir/$name.check" 2>&1 | tail -2 || status=1
    done
  fi
  checked=$((checked + 1))
done
exit "$status"

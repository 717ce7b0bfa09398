#!/usr/bin/env bash
# Writes what scripts/gpu_soundness.sh runs on a GPU machine, from a built tree:
#   DIR/designs  COUNT accepted random designs (test/random_designs)
#   DIR/scalars  the scalar-semantics batches (test_scalar_semantics, PULSE_SCALAR_CUDA_DIR)
#   DIR/specs    every regression spec of test/specs/SoundnessSpecs.cpp (and each
#                transform of guarded_lane_copy), emitted with --emit cuda
#
# usage: scripts/gpu_soundness_generate.sh [BUILD_DIR (build)] [DIR (gen/gpu)] [COUNT (250)]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
dir="${2:-$root/gen/gpu}"
count="${3:-250}"
rm -rf "$dir/designs" "$dir/scalars" "$dir/specs"
mkdir -p "$dir/specs"
"$build/test/random_designs" "$count" "$dir/designs"
PULSE_SCALAR_CUDA_DIR="$dir/scalars" "$build/test/test_scalar_semantics" >/dev/null
specs="$("$build/test/soundness_specs" --list | awk '{print $1}')"
# Specs the compiler must refuse (ctest checks the message): no CUDA to run.
refused="output_at_one_instance"
for spec in $specs; do
  if [[ " $refused " == *" $spec "* ]]; then
    if "$build/test/soundness_specs" -g "$spec" --emit cuda -o "$dir/specs/$spec" >/dev/null 2>&1; then
      echo "$spec: expected a refusal, but it compiled" >&2; exit 1
    fi
    rm -rf "$dir/specs/$spec"
  elif [ "$spec" = guarded_lane_copy ]; then
    for m in 0 1 2 3; do
      "$build/test/soundness_specs" -g "$spec" --param M=$m --emit cuda --name="${spec}_m$m" -o "$dir/specs/${spec}_m$m" >/dev/null
    done
  else
    "$build/test/soundness_specs" -g "$spec" --emit cuda -o "$dir/specs/$spec" >/dev/null
  fi
done
cp "$root/runtime/pulse_cuda.h" "$root/runtime/pulse_buffer.h" "$dir/"
echo "wrote $(ls "$dir/specs" | wc -l) regression specs, $(ls -d "$dir"/designs/design*/ | wc -l) designs and the scalar batches to $dir"

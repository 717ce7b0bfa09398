#!/usr/bin/env bash
# The Intel resource table of docs/backends.md ("Intel resources"): every
# example spec's CM and OpenCL kernels compiled by Intel's compiler for kbl,
# tgllp, dg2 and pvc (test_intel, which also checks them), with Pulse's CM
# register plan of each; prints the markdown table.
#
# usage: scripts/intel_resources.sh [BUILD_DIR (build)]
set -euo pipefail
build="${1:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PULSE_INTEL_ALL_DEVICES=1 PULSE_INTEL_TABLE="$work/table.tsv" "$build/test/test_intel" "intel: every spec*" > "$work/test.log" ||
  { cat "$work/test.log"; exit 1; }
for program in conv1d conv2d fir matmul matvec stencil; do
  for spec in $("$build/examples/$program" --list | awk '{print $1}'); do
    if "$build/examples/$program" -g "$spec" --emit cm -o "$work/$spec" > /dev/null 2>&1; then
      echo "$spec $(grep -o 'about [0-9]* used' "$work/$spec/${spec}_genx.cpp" | grep -o '[0-9]*')"
    fi
  done
done > "$work/plans.txt"
"$(dirname "$0")/intel_resources.py" "$work/table.tsv" "$work/plans.txt"

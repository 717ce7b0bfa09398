#!/usr/bin/env bash
# Emits every spec of every example program (and the soundness specs) with
# --emit cuda and --emit cm into DIR/PROGRAM/SPEC/{cuda,cm}, so that two
# compilers can be compared file by file: `diff -r BEFORE AFTER` after a
# change that must not alter generated code. A spec a backend refuses leaves
# its message in DIR/PROGRAM/SPEC/BACKEND.refused.
#
# usage: scripts/emit_all.sh [BUILD_DIR (build)] DIR
set -uo pipefail
build="${1:?usage: $0 BUILD_DIR DIR}"
dir="${2:?usage: $0 BUILD_DIR DIR}"
programs=("$build"/examples/conv1d "$build"/examples/conv2d "$build"/examples/fir "$build"/examples/matmul
          "$build"/examples/matvec "$build"/examples/stencil "$build"/test/soundness_specs)
for program in "${programs[@]}"; do
  p="$(basename "$program")"
  for spec in $("$program" --list | awk '{print $1}'); do
    for backend in cuda cm; do
      out="$dir/$p/$spec/$backend"
      mkdir -p "$out"
      if ! "$program" -g "$spec" --emit "$backend" -o "$out" > /dev/null 2> "$out.refused"; then
        rmdir "$out" 2>/dev/null
      else
        rm -f "$out.refused"
      fi
    done
  done
done
echo "emit_all: $(find "$dir" -type f ! -name '*.refused' | wc -l) files, $(find "$dir" -name '*.refused' | wc -l) refusals under $dir"

#!/usr/bin/env bash
# Installs Pulse from a build directory into a fresh prefix, moves the prefix,
# hides the source folders (where it may), and uses the prefix as a user would:
# builds the README's tour spec and docs/tutorial.md's spec out of tree with
# find_package(Pulse) and pulse_add_spec_program, runs their generator
# (--params, --check, --simulate, --execute-kernel, --emit cuda, --emit cm-emu),
# and runs the installed conv1d. With NVCC, also builds examples/cuda_project,
# the pulse_add_kernel libraries and the tutorial's program, and checks that
# they compile for sm_90.
#
# usage: scripts/check_install.sh BUILD_DIR WORK_DIR [NVCC]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
work="$2"
nvcc="${3:-}"
rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
step() { echo "== $*"; }

step "install into a prefix, then move the prefix"
cmake --install "$build" --prefix "$work/staged" > "$work/install.log"
mv "$work/staged" "$work/prefix"
prefix="$work/prefix"
for f in include/pulse/pulse.h include/pulse/Error.h include/pulse/Types.h include/pulse/pulse_cuda.h \
         include/pulse/pulse_buffer.h include/pulse/cm_emu/cm/cm.h lib/libpulse.a lib/libpulse_generator_main.a \
         lib/cmake/Pulse/PulseConfig.cmake lib/cmake/Pulse/PulseSpecProgram.cmake lib/cmake/Pulse/PulseKernel.cmake bin/conv1d \
         bin/pulse-import share/doc/pulse/tutorial.md share/doc/pulse/exploration.md share/doc/pulse/import.md \
         share/pulse/scripts/explore_plot.py; do
  [ -e "$prefix/$f" ] || { echo "FAIL: the install lacks $f"; exit 1; }
done
# Nothing installed may lean on the source tree: no text file names it, and no
# program carries a path into its runtime/ folder (the CM emulation once was).
if grep -rlI -- "$src" "$prefix"; then echo "FAIL: the installed files above name the source tree $src"; exit 1; fi
if grep -rla -- "$src/runtime" "$prefix"; then echo "FAIL: the installed files above carry a path into $src/runtime"; exit 1; fi

# Where the kernel allows it (unshare, as root), everything from here runs with
# the source folders hidden under empty mounts, as if the clone were gone;
# elsewhere the path checks above stand in for it, and a line says so.
hidden=()
for d in "$src"/*/; do
  d="${d%/}"
  case "$build/" in "$d"/*) continue ;; esac
  case "$work/" in "$d"/*) continue ;; esac
  hidden+=("$d")
done
if unshare -m sh -c 'mount -t tmpfs none "$1"' sh "${hidden[0]}" 2> /dev/null; then
  echo "source folders hidden: ${hidden[*]}"
  # shellcheck disable=SC2016
  run() { unshare -m sh -c 'for d in $PULSE_HIDDEN; do mount -t tmpfs none "$d"; done; exec "$@"' sh "$@"; }
  export PULSE_HIDDEN="${hidden[*]}"
else
  echo "note: cannot hide the source folders here (unshare -m not permitted); the path checks above stand in"
  run() { "$@"; }
fi

step "build the README's tour spec out of tree"
project="$work/project"
mkdir -p "$project"
cp "$src/test/out_of_tree/CMakeLists.txt" "$src/test/out_of_tree/runtime_includes.cpp" "$project/"
# The first block of a language (default cpp) after a heading of a page,
# exactly as printed: the README's tour, the tutorial's spec and program.
block_after() {
  awk -v heading="$2" -v fence='```'"${3:-cpp}" 'index($0, heading) == 1 {on = 1} on && $0 == fence {code = 1; next} code && /^```$/ {exit} code {print}' "$1"
}
block_after "$src/README.md" "## A short tour" > "$project/tour.cpp"
block_after "$src/docs/tutorial.md" "## 2. Write the spec" > "$project/box.cpp"
grep -q 'PULSE_REGISTER_SPEC("conv1d_sbm"' "$project/tour.cpp" || { echo "FAIL: no spec found in the README's tour"; exit 1; }
grep -q 'PULSE_REGISTER_SPEC("box_sum"' "$project/box.cpp" || { echo "FAIL: no box_sum spec found in docs/tutorial.md"; exit 1; }
cuda_args=()
[ -n "$nvcc" ] && cuda_args=(-DCMAKE_CUDA_COMPILER="$nvcc")
run cmake -S "$project" -B "$project/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  "${cuda_args[@]}" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
run cmake --build "$project/build" --target tour runtime_includes tour_cm > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
grep -q "_GENX_MAIN_" "$project/build/tour_cm.pulse/conv1d_sbm_cm_genx.cpp" ||
  { echo "FAIL: pulse_add_cm_kernel wrote no CM kernel"; exit 1; }
echo "tour_cm: conv1d_sbm_cm_genx.cpp, conv1d_sbm_cm_host.cpp"
run "$project/build/runtime_includes" || { echo "FAIL: runtime_includes"; exit 1; }

step "run the tour's generator, from a directory outside both trees"
tour="$project/build/tour"
cd "$work"
run "$tour" --list
run "$tour" -g conv1d_sbm --params
run "$tour" -g conv1d_sbm --check
run "$tour" -g conv1d_sbm --simulate
run "$tour" -g conv1d_sbm --emit cuda -o "$work/tour_out"
run "$tour" -g conv1d_sbm --emit cm-emu -o "$work/tour_out" | tee "$work/tour_cm.log"
grep -q ": PASS" "$work/tour_cm.log" || { echo "FAIL: the tour's cm-emu run did not pass"; exit 1; }
step "the tutorial's spec"
run "$tour" -g box_sum --params
run "$tour" -g box_sum --check
run "$tour" -g box_sum --simulate | tee "$work/box.log"
run "$tour" -g box_sum --execute-kernel | tee -a "$work/box.log"
run "$tour" -g box_sum --emit cm-emu -o "$work/box_out" | tee -a "$work/box.log"
[ "$(grep -c ": PASS" "$work/box.log")" = 3 ] || { echo "FAIL: the tutorial's spec did not pass all three checks"; exit 1; }

step "the installed pulse-import, and the explorer naming the installed plot script"
run "$prefix/bin/pulse-import" --version
run "$prefix/bin/conv1d" -g sbm --explore --range -1:1 -o "$work/explore" | tee "$work/explore.log"
grep -q "plots: $prefix/share/pulse/scripts/explore_plot.py" "$work/explore.log" ||
  { echo "FAIL: the installed explorer does not name the installed explore_plot.py"; exit 1; }

step "docs/import.md as printed: its C function through the installed pulse-import, built as a generator"
imported="$work/imported"
mkdir -p "$imported"
block_after "$src/docs/import.md" "## An example" c > "$imported/conv1d.c"
grep -q "void conv1d(int C, int Q" "$imported/conv1d.c" || { echo "FAIL: no C function found in docs/import.md"; exit 1; }
(cd "$imported" && run "$prefix/bin/pulse-import" conv1d.c --function conv1d --param C=64 --param Q=5 -o conv1d_spec.cpp) ||
  { echo "FAIL: the installed pulse-import refused docs/import.md's example"; exit 1; }
grep -q 'Acc.space_time_transform({q}, {s, t}, {1, /\*\*/ 1});' "$imported/conv1d_spec.cpp" ||
  { echo "FAIL: the imported spec differs from docs/import.md's"; exit 1; }
printf '%s\n' 'cmake_minimum_required(VERSION 3.25)' 'project(Imported LANGUAGES CXX)' 'find_package(Pulse 0.1 REQUIRED)' \
  'pulse_add_spec_program(imported SOURCES conv1d_spec.cpp)' > "$imported/CMakeLists.txt"
run cmake -S "$imported" -B "$imported/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > "$work/imported_configure.log" 2>&1 ||
  { cat "$work/imported_configure.log"; exit 1; }
run cmake --build "$imported/build" > "$work/imported_build.log" 2>&1 || { cat "$work/imported_build.log"; exit 1; }
run "$imported/build/imported" -g conv1d --check
run "$imported/build/imported" -g conv1d --simulate | tee "$work/imported.log"
run "$imported/build/imported" -g conv1d --execute-kernel | tee -a "$work/imported.log"
run "$imported/build/imported" -g conv1d --emit cuda -o "$imported/out"
[ "$(grep -c ": PASS" "$work/imported.log")" = 2 ] || { echo "FAIL: the imported spec did not pass"; exit 1; }

step "the installed conv1d: --check, --simulate, the same kernel as the tour, --emit cm-emu"
run "$prefix/bin/conv1d" -g sbm --check
run "$prefix/bin/conv1d" -g sbm --simulate
run "$prefix/bin/conv1d" -g sbm --emit cuda -o "$work/conv1d_out"
cmp "$work/tour_out/conv1d_sbm.cu" "$work/conv1d_out/conv1d_sbm.cu" ||
  { echo "FAIL: the README's tour spec and examples/conv1d's conv1d_sbm give different kernels"; exit 1; }
run "$prefix/bin/conv1d" -g sbm --emit cm-emu -o "$work/conv1d_out" | tee "$work/conv1d_cm.log"
grep -q ": PASS" "$work/conv1d_cm.log" || { echo "FAIL: the installed conv1d's cm-emu run did not pass"; exit 1; }

if [ -n "$nvcc" ]; then
  # Compile lines of a target: sm_90 and no other architecture.
  check_arch() {
    local dir="$1" target="$2" lines
    lines="$(ninja -C "$dir" -t commands "$target" | grep -- "$nvcc" || true)"
    [ -n "$lines" ] || { echo "FAIL: no nvcc command builds $target"; exit 1; }
    echo "$lines" | grep -q "sm_90" || { echo "FAIL: $target is not compiled for sm_90:"; echo "$lines"; exit 1; }
    if echo "$lines" | grep -E -q "(sm|compute)_([0-8][0-9])\b"; then echo "FAIL: $target is compiled for another architecture:"; echo "$lines"; exit 1; fi
    echo "$target: compiled for sm_90"
  }
  step "the tour's pulse_add_kernel library (nvcc, no GPU needed)"
  run cmake --build "$project/build" --target tour_kernel tour_kernel_fbs > "$work/kernel.log" 2>&1 || { cat "$work/kernel.log"; exit 1; }
  check_arch "$project/build" tour_kernel
  # KERNEL_NAME and OPTIONS (--range -2:2 --design 440): the explored design, under its own name.
  grep -q "cudaError_t conv1d_fbs_explored(pulse_buffer x, pulse_buffer w, pulse_buffer Out, cudaStream_t stream);" \
    "$project/build/tour_kernel_fbs.pulse/conv1d_fbs_explored.h" || { echo "FAIL: KERNEL_NAME and OPTIONS did not reach the generator"; exit 1; }
  echo "tour_kernel_fbs: conv1d_fbs_explored, design 440"
  step "examples/cuda_project against the install"
  cp -r "$src/examples/cuda_project" "$work/cuda_project"
  run cmake -S "$work/cuda_project" -B "$work/cuda_project/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_COMPILER="$nvcc" > "$work/cuda_configure.log" 2>&1 || { cat "$work/cuda_configure.log"; exit 1; }
  run cmake --build "$work/cuda_project/build" > "$work/cuda_build.log" 2>&1 || { cat "$work/cuda_build.log"; exit 1; }
  check_arch "$work/cuda_project/build" conv1d_kernel
  [ -x "$work/cuda_project/build/conv1d_app" ] || { echo "FAIL: conv1d_app was not built"; exit 1; }
fi
# docs/tutorial.md's project in the order it is written: the spec (step 2) and
# the CMakeLists (step 3), configured and the generator built before the
# program exists; then step 6's lines appended and its program added, and
# everything built (with NVCC, the kernel library and the program).
step "the tutorial's project, step by step, exactly as printed"
box="$work/box"
mkdir -p "$box"
block_after "$src/docs/tutorial.md" "## 2. Write the spec" > "$box/box.cpp"
block_after "$src/docs/tutorial.md" "## 3. The project" cmake > "$box/CMakeLists.txt"
grep -q 'pulse_add_kernel(box_kernel' "$box/CMakeLists.txt" || { echo "FAIL: no CMakeLists found in docs/tutorial.md step 3"; exit 1; }
run cmake -S "$box" -B "$box/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "${cuda_args[@]}" > "$work/box_configure.log" 2>&1 ||
  { echo "FAIL: step 3 of the tutorial does not configure:"; cat "$work/box_configure.log"; exit 1; }
run cmake --build "$box/build" --target box > "$work/box_build.log" 2>&1 || { cat "$work/box_build.log"; exit 1; }
run "$box/build/box" --check
block_after "$src/docs/tutorial.md" "## 6. Use the kernel" cmake >> "$box/CMakeLists.txt"
block_after "$src/docs/tutorial.md" "## 6. Use the kernel" > "$box/main.cu"
grep -q 'add_executable(box_app main.cu)' "$box/CMakeLists.txt" || { echo "FAIL: step 6 of docs/tutorial.md adds no program"; exit 1; }
grep -q 'box_sum_Out_elements' "$box/main.cu" || { echo "FAIL: no program found in docs/tutorial.md step 6"; exit 1; }
run cmake --build "$box/build" > "$work/box_app.log" 2>&1 || { echo "FAIL: step 6 of the tutorial does not build:"; cat "$work/box_app.log"; exit 1; }
if [ -n "$nvcc" ]; then
  [ -x "$box/build/box_app" ] || { echo "FAIL: the tutorial's box_app was not built"; exit 1; }
  check_arch "$box/build" box_kernel
fi
echo "out-of-tree: PASS"

# shellcheck shell=bash disable=SC2034,SC2154  # sets variables its callers read; reads out and gen
# Shared by the GPU benchmark scripts (scripts/gpu_bench.sh,
# scripts/gpu_bench_stencil.sh); sourced, not run. Before sourcing set `out`
# (the output folder) and `gen` (the generated kernels); it sets nvcc, arch,
# flags, includes, build ($out/build), failures, the CUDA library folders, and
# the functions below.
# environment: NVCC (default nvcc), ARCH (default sm_90).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$out/build"
mkdir -p "$build"
nvcc="${NVCC:-nvcc}"
arch="${ARCH:-sm_90}"
flags=(-O3 -std=c++17 "-arch=$arch" -lineinfo)
includes=("-I$root/runtime" "-I$gen")
cuda_home="$(cd "$(dirname "$(command -v "$nvcc")")/.." && pwd)"
cuda_includes=("$cuda_home/include" "$cuda_home"/targets/*/include)
cuda_libs=("$cuda_home/lib64" "$cuda_home/lib" "$cuda_home"/targets/*/lib)
system_libs=(/usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib)
failures=0

# The first directory among the rest that holds $1, or nothing.
find_in() {
  local file="$1" dir
  shift
  for dir in "$@"; do
    [[ -n "$dir" && -e "$dir/$file" ]] && { echo "$dir"; return 0; }
  done
  return 1
}

# NPP's filtering functions: on success adds its include folder to `includes`,
# sets npp_libs (the link flags) and returns 0.
find_npp() {
  local npp_inc npp_lib
  if npp_inc="$(find_in nppi_filtering_functions.h "${cuda_includes[@]}" /usr/include)" &&
     npp_lib="$(find_in libnppif.so "${cuda_libs[@]}" "${system_libs[@]}")"; then
    [[ "$npp_inc" == /usr/include ]] || includes+=("-I$npp_inc")  # never reorder the system directory
    npp_libs=("-L$npp_lib" "-Xlinker=-rpath=$npp_lib" -lnppif -lnppc)
    echo "NPP: $npp_inc, $npp_lib"
    return 0
  fi
  echo "NPP: not found, left out"
  return 1
}

# ---- build: every translation unit at once (at most JOBS), then link -------
pids=() names=()
declare -A built sources_of
compile() {  # name source [flags]: object and log under $build
  local name="$1" source="$2"
  sources_of[$name]="$source"
  shift 2
  while [[ -n "${JOBS:-}" ]] && (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  "$nvcc" "${flags[@]}" "${includes[@]}" -Xptxas -v "$@" -c "$source" -o "$build/$name.o" >"$build/$name.log" 2>&1 &
  pids+=($!) names+=("$name")
}
# Waits for every compile; counts and reports the ones that failed.
wait_compiles() {
  local i
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      built[${names[$i]}]=1
    else
      echo "FAIL build ${names[$i]} (see $build/${names[$i]}.log):"
      grep -m5 -i "error" "$build/${names[$i]}.log" | sed 's/^/  /'
      failures=$((failures + 1))
    fi
  done
  pids=() names=()
}
# The named kernels' ptxas lines: registers, and whether anything spilled.
report_resources() {
  local n regs spill
  for n in "$@"; do
    [[ -n "${built[$n]:-}" ]] || continue
    regs="$(grep -o "Used [0-9]* registers" "$build/$n.log" | head -1)"
    spill="$(grep -o "[0-9]* bytes spill stores" "$build/$n.log" | sort -rn | head -1)"
    # A kernel generated with --min-blocks-per-sm (tag _mbN), or whose array
    # is a block of 512 threads or more (65536 / threads registers each at
    # most), has its registers capped by the mapping's choice: its spills are
    # that choice's, marked so.
    if [[ "$n" =~ _mb[0-9]+(_|$) ]] || grep -Eq "__launch_bounds__\((51[2-9]|5[2-9][0-9]|[6-9][0-9]{2}|10[0-2][0-9])[,)]" "${sources_of[$n]:-/dev/null}"; then
      echo "  $n: ${regs:-?}, ${spill:-? spill stores} under the register cap"
    else
      echo "  $n: ${regs:-?}, ${spill:-? spill stores}"
    fi
  done
}
link() {  # bench, then its kernels' names, then -- and libraries
  local bench="$1" objects=() n
  shift
  while [[ $# -gt 0 && "$1" != "--" ]]; do objects+=("$build/$1.o"); shift; done
  shift
  for n in "$bench" "${objects[@]+"${objects[@]}"}"; do
    n="$(basename "$n" .o)"
    [[ -n "${built[$n]:-}" ]] || { echo "$bench not linked: $n did not build"; return 1; }
  done
  "$nvcc" "${flags[@]}" "$build/$bench.o" "${objects[@]+"${objects[@]}"}" "$@" -o "$out/$bench" >"$build/$bench.link.log" 2>&1 || {
    echo "FAIL link $bench (see $build/$bench.link.log):"
    sed 's/^/  /' "$build/$bench.link.log" | head -10
    return 1
  }
}
# Runs a built bench with its arguments, its output teed to $out/LOG.
run_logged() {  # log bench args...
  local log="$1"
  shift
  "$@" 2>&1 | tee "$out/$log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failures=$((failures + 1))
}
# Draws plots from logs with a plotting script, where matplotlib is importable.
plot() {  # script logs...
  local script="$1"
  shift
  if python3 -c "import matplotlib" 2>/dev/null; then
    python3 "$script" "$@" -o "$out" || failures=$((failures + 1))
  else
    echo "matplotlib not importable: no plots ($script $* -o $out draws them)"
  fi
}

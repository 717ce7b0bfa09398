#!/usr/bin/env bash
# Builds and runs the single-sweep 2-D and 3-D stencil benchmark on a machine
# with CUDA and a GPU: benchmarks/stencil_bench.cu (Pulse against a plain kernel
# and, for the 2-D fp32 stencils, NPP), each row as a fraction of the
# copy-bandwidth floor measured in the same run. Logs go to OUT_DIR
# (stencil2d.log, with the 3-D rows too; build/*.log) and, where matplotlib is
# importable, benchmarks/plot_stencil.py draws the fractions there
# (stencil2d_fraction.png, stencil3d_fraction.png).
#
# usage: scripts/gpu_bench_stencil.sh GENERATED_DIR OUT_DIR
#   GENERATED_DIR  the kernels benchmarks/generate_stencil.sh wrote:
#                  stencil{2d,3d}_{shape}_{type}.{h,cu} and variants
#                  stencil{2d,3d}_{shape}_{type}_{tag}.{h,cu}; the stencils
#                  without a Pulse kernel there run their peers only
#   OUT_DIR        binaries, logs and plots
# environment: NVCC (default nvcc), ARCH (default sm_90), STENCIL_SIZE
#   (default "8192 8192"), STENCIL3D_SIZE (default "512 512 512": W H D),
#   STENCILS (the stencils to run, e.g. "5pt 9pt_f32 3d7pt", or "3d" for the
#   3-D ones; default all), BUILD_ONLY=1 to stop after building, JOBS (nvcc
#   runs at once, default all).
set -uo pipefail
usage="usage: scripts/gpu_bench_stencil.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
# shellcheck source=scripts/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"

# ---- which generated kernels exist (header and source both) ----------------
stencils=() variants=() stencils3d=() variants3d=() sources=()
for f in "$gen"/stencil2d_*.cu "$gen"/stencil3d_*.cu; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f" .cu)"
  [[ -f "$gen/$name.h" ]] || continue
  if [[ "$name" =~ ^stencil2d_([A-Za-z0-9]+)_(f32|f64)$ ]]; then
    stencils+=("X(${BASH_REMATCH[1]}, ${BASH_REMATCH[2]})")
  elif [[ "$name" =~ ^stencil2d_([A-Za-z0-9]+)_(f32|f64)_([A-Za-z0-9]+)$ ]]; then
    variants+=("V(${BASH_REMATCH[1]}, ${BASH_REMATCH[2]}, ${BASH_REMATCH[3]})")
  elif [[ "$name" =~ ^stencil3d_([A-Za-z0-9]+)_(f32|f64)$ ]]; then
    stencils3d+=("X(${BASH_REMATCH[1]}, ${BASH_REMATCH[2]})")
  elif [[ "$name" =~ ^stencil3d_([A-Za-z0-9]+)_(f32|f64)_([A-Za-z0-9]+)$ ]]; then
    variants3d+=("V(${BASH_REMATCH[1]}, ${BASH_REMATCH[2]}, ${BASH_REMATCH[3]})")
  else
    continue  # a check harness or something else
  fi
  sources+=("$name")
done
defs=()
if [[ ${#sources[@]} -gt 0 ]]; then
  # nvcc splits -D values at commas: the lists go in a header.
  {
    echo "#define PULSE_STENCILS ${stencils[*]+"${stencils[*]}"}"
    echo "#define PULSE_VARIANTS ${variants[*]+"${variants[*]}"}"
    echo "#define PULSE_STENCILS3D ${stencils3d[*]+"${stencils3d[*]}"}"
    echo "#define PULSE_VARIANTS3D ${variants3d[*]+"${variants3d[*]}"}"
  } >"$build/pulse_stencils.h"
  defs+=(-DWITH_PULSE -include "$build/pulse_stencils.h")
  for n in "${sources[@]}"; do defs+=(-include "$n.h"); done
fi
echo "nvcc: $("$nvcc" --version | tail -1), -arch=$arch"
echo "generated stencil kernels in $gen: ${sources[*]:-(none: peers only)}"

libs=()
if find_npp; then
  libs+=("${npp_libs[@]}")
else
  defs+=(-DPULSE_BENCH_NO_NPP)
fi

# ---- build -------------------------------------------------------------------
for n in "${sources[@]+"${sources[@]}"}"; do compile "$n" "$gen/$n.cu"; done
compile stencil_bench "$root/benchmarks/stencil_bench.cu" "${defs[@]+"${defs[@]}"}"
wait_compiles
report_resources "${sources[@]+"${sources[@]}"}"
ok=0
link stencil_bench "${sources[@]+"${sources[@]}"}" -- "${libs[@]+"${libs[@]}"}" && ok=1 || failures=$((failures + 1))
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
  ((ok)) && echo "built $out/stencil_bench"
  exit $((failures != 0))
fi

# ---- run ---------------------------------------------------------------------
if ((ok)); then
  # shellcheck disable=SC2086  # STENCIL_SIZE is "W H", STENCIL3D_SIZE "W H D", STENCILS words
  run_logged stencil2d.log "$out/stencil_bench" --size3d ${STENCIL3D_SIZE:-512 512 512} ${STENCIL_SIZE:-8192 8192} ${STENCILS:-}
  plot "$root/benchmarks/plot_stencil.py" "$out/stencil2d.log"
fi
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_stencil: $failures step(s) failed"
  exit 1
fi

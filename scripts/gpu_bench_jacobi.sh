#!/usr/bin/env bash
# Builds and runs the iterative Jacobi benchmark on a machine with CUDA and a
# GPU: benchmarks/jacobi_bench.cu (Pulse's temporal-blocked jacobi2d and
# jacobi3d kernels against a plain kernel launched once per step), each row as
# cell updates per second and a multiple of the single-sweep roofline measured
# in the same run. Logs go to OUT_DIR (jacobi.log; build/*.log) and, where
# matplotlib is importable, benchmarks/plot_jacobi.py draws
# jacobi2d_roofline.png and jacobi3d_roofline.png there.
#
# usage: scripts/gpu_bench_jacobi.sh GENERATED_DIR OUT_DIR
#   GENERATED_DIR  what benchmarks/generate_jacobi.sh wrote (jacobi*d_*.{h,cu}
#                  and pulse_jacobi.h); without it the plain kernel runs alone
#   OUT_DIR        binaries, logs and plots
# environment: NVCC (default nvcc), ARCH (default sm_90), JACOBI_ARGS (the
#   benchmark's arguments, default none: 8192^2 and 512^3, 120 steps; e.g.
#   "--size3d 256 256 256 48 3d"), BUILD_ONLY=1 to stop after building, JOBS.
set -uo pipefail
usage="usage: scripts/gpu_bench_jacobi.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
# shellcheck source=scripts/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"

sources=()
for f in "$gen"/jacobi[23]d_*.cu; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f" .cu)"
  [[ "$name" == *_check ]] && continue
  [[ -f "$gen/$name.h" ]] && sources+=("$name")
done
defs=()
if [[ ${#sources[@]} -gt 0 && -f "$gen/pulse_jacobi.h" ]]; then
  defs+=(-DWITH_PULSE -include "$gen/pulse_jacobi.h")
fi
echo "nvcc: $("$nvcc" --version | tail -1), -arch=$arch"
echo "generated jacobi kernels in $gen: ${sources[*]:-(none: the plain kernel only)}"

for n in "${sources[@]+"${sources[@]}"}"; do compile "$n" "$gen/$n.cu"; done
compile jacobi_bench "$root/benchmarks/jacobi_bench.cu" "${defs[@]+"${defs[@]}"}"
wait_compiles
report_resources "${sources[@]+"${sources[@]}"}"
ok=0
link jacobi_bench "${sources[@]+"${sources[@]}"}" -- && ok=1 || failures=$((failures + 1))
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
  ((ok)) && echo "built $out/jacobi_bench"
  exit $((failures != 0))
fi
if ((ok)); then
  # shellcheck disable=SC2086  # JACOBI_ARGS is a list of arguments
  run_logged jacobi.log "$out/jacobi_bench" ${JACOBI_ARGS:-}
  plot "$root/benchmarks/plot_jacobi.py" "$out/jacobi.log"
fi
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench_jacobi: $failures step(s) failed"
  exit 1
fi

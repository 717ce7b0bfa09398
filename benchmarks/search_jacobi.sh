#!/usr/bin/env bash
# Generates the candidates of a search over the Jacobi mappings: for 2-D, the
# wavefront tiles (WAVE=1, rolled and prefetched) over every T, TH and PE given,
# for the star and, with SEARCH_BOX=1, the 9-point box; for 3-D, the register
# tiles over every T, TH, TZ and register cap given, and the PLANE tiles (the
# tile's plane over a block, U in shared memory; rolled and prefetched) over
# every T, PE x TH and planes written Z (TZ = Z + 2T, so that Z divides the
# grid), for the star and, with SEARCH3D_BOX=1, the 27-point box. Then, on the GPU machine:
#   scripts/gpu_bench_jacobi.sh OUT_DIR RESULTS                 # every candidate, checked and timed
#   benchmarks/best_jacobi.py RESULTS/jacobi.log --write benchmarks/jacobi_best_mappings.txt
# and benchmarks/generate_jacobi.sh (the benchmark's kernels) takes the winners
# from that file.
#
# usage: benchmarks/search_jacobi.sh BUILD_DIR OUT_DIR
# environment (lists; defaults in brackets):
#   SEARCH_T [4 6 8]  SEARCH_TH [64 128]  SEARCH_PE [32 64]  SEARCH_BOX [0]
#   SEARCH3D_T [2]  SEARCH3D_TH [6 8]  SEARCH3D_TZ [48 64]  SEARCH3D_MB [2 3]
#   SEARCH3D_PLANE_T [2 3]  SEARCH3D_PLANE_TILE [32x32 32x16] (PE x TH)  SEARCH3D_PLANE_Z [64 128]
#   SEARCH3D_BOX [0]
#   JACOBI_TYPES [f32 f64]; SEARCH_2D=0 or SEARCH_3D=0 leaves that part out.
set -euo pipefail
usage="usage: benchmarks/search_jacobi.sh BUILD_DIR OUT_DIR"
build="${1:?$usage}"
out="${2:?$usage}"
m2=()
if [[ "${SEARCH_2D:-1}" != 0 ]]; then
  boxes="" && [[ "${SEARCH_BOX:-0}" == 1 ]] && boxes="BOX=1,"
  for box in "" $boxes; do
    for t in ${SEARCH_T:-4 6 8}; do
      for th in ${SEARCH_TH:-64 128}; do
        for pe in ${SEARCH_PE:-32 64}; do
          m2+=("${box}WAVE=1,T=$t,PE=$pe,TH=$th,--unroll-steps=0,--prefetch")
        done
      done
    done
  done
fi
m3=()
if [[ "${SEARCH_3D:-1}" != 0 ]]; then
  boxes="" && [[ "${SEARCH3D_BOX:-0}" == 1 ]] && boxes="BOX=1,"
  for box in "" $boxes; do
    for t in ${SEARCH3D_T:-2}; do
      for th in ${SEARCH3D_TH:-6 8}; do
        for tz in ${SEARCH3D_TZ:-48 64}; do
          for mb in ${SEARCH3D_MB:-2 3}; do
            m3+=("${box}T=$t,TH=$th,TZ=$tz,--min-blocks-per-sm=$mb" "${box}T=$t,TH=$th,TZ=$tz,--min-blocks-per-sm=$mb,--prefetch")
          done
        done
      done
    done
    for t in ${SEARCH3D_PLANE_T-2 3}; do
      for tile in ${SEARCH3D_PLANE_TILE:-32x32 32x16}; do
        for z in ${SEARCH3D_PLANE_Z:-64 128}; do
          m3+=("${box}PLANE=1,T=$t,PE=${tile%x*},TH=${tile#*x},TZ=$((z + 2 * t)),--prefetch,--unroll-steps=0")
        done
      done
    done
  done
fi
echo "search_jacobi: ${#m2[@]} 2-D and ${#m3[@]} 3-D mappings per type"
JACOBI_MAPPINGS="${m2[*]:-}" JACOBI3D_MAPPINGS="${m3[*]:-}" "$(dirname "$0")/generate_jacobi.sh" "$build" "$out"

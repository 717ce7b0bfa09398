#!/usr/bin/env bash
# Emits the iterative Jacobi benchmark's Pulse kernels (specs jacobi2d and
# jacobi3d of examples/stencil) into one folder, one per mapping and type,
# named jacobi{2,3}d_{f32,f64}_{mapping} (e.g. jacobi2d_f32_t4_th32), and the
# header pulse_jacobi.h that benchmarks/jacobi_bench.cu includes to run them
# all (scripts/gpu_bench_jacobi.sh).
#
# usage: benchmarks/generate_jacobi.sh BUILD_DIR OUT_DIR
# environment:
#   JACOBI_MAPPINGS  the mappings, each "SETTING,SETTING..." of the spec's
#                    parameters T (steps per launch), TH (tile rows), PE (tile
#                    columns), WAVE=1 (the steps as a wavefront down the tile),
#                    BOX=1 (the 9-point box: the benchmark's jacobi2d9 problem),
#                    GRID=1 (the device-wide variant: every tile resident, a grid
#                    barrier per step; entries JG, which run where the grid fits),
#                    or a generator flag as for jacobi3d; default: the row sweeps
#                    "T=4,TH=24 T=4,TH=24,PE=64 T=8,TH=48" and the line "2 ..." of
#                    benchmarks/jacobi_best_mappings.txt (what the last search
#                    found fastest: benchmarks/search_jacobi.sh); "" for none
#   JACOBI3D_MAPPINGS  jacobi3d's, of T, TH, TZ (tile planes), PE, PLANE=1 (the
#                    tile's plane over a block, U in shared memory), BOX=1 (the
#                    27-point box: the benchmark's jacobi3d27 problem), or a generator
#                    flag (--unroll-steps=N: tag uN; --min-blocks-per-sm=N: mbN;
#                    --max-shared-bytes=N: smN;
#                    --prefetch: pf); default "T=2,TH=8,TZ=48 T=2,TH=8,TZ=132" and
#                    the line "3 ..." of benchmarks/jacobi_best_mappings.txt
#   JACOBI_TYPES     types (default "f32 f64")
# A mapping that ends in @f32 or @f64 is generated for that type only (a
# register cap one type fits and the other would spill under).
set -euo pipefail
usage="usage: benchmarks/generate_jacobi.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
[[ -x "$build/examples/stencil" ]] || { echo "no $build/examples/stencil: build the stencil example first"; exit 1; }
header="$out/pulse_jacobi.h"
# The mappings on line "DIMS ..." of the search's result file (none if absent).
best_mappings() {
  local file
  file="$(dirname "$0")/jacobi_best_mappings.txt"
  [[ -f "$file" ]] && awk -v d="$1" '$1 == d { $1 = ""; print }' "$file"
  return 0
}
entries=()
includes=()
for type in ${JACOBI_TYPES:-f32 f64}; do
  case "$type" in
    f32) f64=0 ;;
    f64) f64=1 ;;
    *) echo "unknown type $type (f32 or f64)"; exit 2 ;;
  esac
  for dims in 2 3; do
    if [[ $dims == 2 ]]; then mappings="${JACOBI_MAPPINGS-T=4,TH=24 T=4,TH=24,PE=64 T=8,TH=48 $(best_mappings 2)}"
    else mappings="${JACOBI3D_MAPPINGS-T=2,TH=8,TZ=48 T=2,TH=8,TZ=132 $(best_mappings 3)}"; fi
    mappings="$(tr ' ' '\n' <<<"$mappings" | awk 'NF && !seen[$0]++' | tr '\n' ' ')"
    for mapping in $mappings; do
      if [[ "$mapping" == *@* ]]; then
        [[ "${mapping##*@}" == "$type" ]] || continue
        mapping="${mapping%@*}"
      fi
      tag="$(tr 'A-Z' 'a-z' <<<"$mapping" | sed 's/--unroll-steps=/u/; s/--min-blocks-per-sm=/mb/; s/--max-shared-bytes=/sm/; s/--prefetch/pf/' | tr -d '=' | tr ',' '_')"
      name="jacobi${dims}d_${type}_$tag"
      steps="$(grep -o 'T=[0-9]*' <<<"$mapping" | head -1 | cut -d= -f2)"
      params=(--param "F64=$f64")
      for kv in $(tr ',' ' ' <<<"$mapping"); do
        if [[ "$kv" == --* ]]; then params+=("$kv"); else params+=(--param "$kv"); fi
      done
      "$build/examples/stencil" -g "jacobi${dims}d" "${params[@]}" --emit cuda --name="$name" -o "$out" > "$out/$name.log" 2>&1 ||
        { echo "FAIL $name:"; cat "$out/$name.log"; exit 1; }
      if [[ $dims == 2 && "$mapping" == *GRID=1* ]]; then
        entries+=("JG($type, ${steps:-16}, $([[ "$mapping" == *BOX=1* ]] && echo 9 || echo 5), $name)")
      elif [[ $dims == 2 && "$mapping" == *BOX=1* ]]; then
        entries+=("JB($type, ${steps:-4}, $name)")
      elif [[ $dims == 3 && "$mapping" == *BOX=1* ]]; then
        entries+=("JB3($type, ${steps:-2}, $name)")
      else
        entries+=("J($dims, $type, ${steps:-$((dims == 2 ? 4 : 2))}, $name)")
      fi
      includes+=("#include \"$name.h\"")
    done
  done
done
{
  echo "// The Pulse kernels of jacobi_bench.cu (written by benchmarks/generate_jacobi.sh)."
  printf '%s\n' "${includes[@]}"
  echo "#define PULSE_JACOBI ${entries[*]}"
} > "$header"
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote ${#entries[@]} jacobi kernels and $header to $out"

#!/usr/bin/env bash
# Emits the single-sweep stencil benchmark's Pulse kernels into one folder,
# named as scripts/gpu_bench_stencil.sh expects: stencil2d_{shape}_{type} and
# stencil3d_{shape}_{type} (the chosen mapping of that stencil, from the specs
# of examples/stencil) and stencil2d_{shape}_{type}_{tag},
# stencil3d_{shape}_{type}_{tag} (other mappings, rows of their own), for the
# 2-D shapes 5pt, 9pt, 25pt, star2, the 3-D shapes 7pt, 27pt, and the types
# f32, f64.
#
# usage: benchmarks/generate_stencil.sh BUILD_DIR OUT_DIR
# environment:
#   STENCIL_SHAPES      2-D shapes (default "5pt 9pt 25pt star2"; empty: none)
#   STENCIL3D_SHAPES    3-D shapes (default "7pt 27pt"; empty: none)
#   STENCIL_TYPES       types (default "f32 f64")
#   STENCIL_MAPPING     the chosen 2-D mapping, --param settings for every shape
#                       (default: the spec's defaults, PE=32 RT=8 S=1)
#   STENCIL3D_MAPPING   the chosen 3-D mapping for every shape (default: per
#                       shape, chosen_mapping_3d below over the spec's defaults,
#                       PE=32 S=32 and RT=8 in fp32, RT=4 in fp64)
#   STENCIL_VARIANTS    extra 2-D mappings, "tag:SETTING,SETTING ..." (default
#                       none), each SETTING a spec parameter NAME=V (PE, RT, S)
#                       or a generator flag, applied over the chosen mapping
#                       (e.g. "rt16:RT=16 s4:RT=16,S=4 pe64:PE=64")
#   STENCIL3D_VARIANTS  extra 3-D mappings, likewise (PE, RT, S: S planes per
#                       warp, S=1 the planes a grid loop); "study" is the set
#                       docs/benchmarks.md compares:
#                       "rt4:RT=4 rt8:RT=8 s1:S=1,RT=8 s16:S=16 s64:S=64 pe64:PE=64,RT=4"
#   JOBS                generators run at once (default: the number of cores)
set -euo pipefail
usage="usage: benchmarks/generate_stencil.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
jobs="${JOBS:-$(nproc)}"
[[ -x "$build/examples/stencil" ]] || { echo "no $build/examples/stencil: build the stencil example first"; exit 1; }

commands=()
emit() {  # spec, kernel name, then settings: NAME=VALUE parameters or generator flags
  local spec="$1" name="$2" args=() kv
  shift 2
  for kv in "$@"; do
    if [[ "$kv" == --* ]]; then args+=("$kv"); else args+=(--param "$kv"); fi
  done
  commands+=("'$build/examples/stencil' -g $spec ${args[*]} --emit cuda --name=$name -o '$out' > '$out/$name.log' 2>&1 || { echo 'FAIL $name:'; cat '$out/$name.log'; exit 1; }")
}
# The 3-D mapping measured best per shape (docs/benchmarks.md, H100,
# 2026-11-21): the 7-point star reads few rows per plane and is best with
# its planes a grid loop (S = 1, RT = 8); the 27-point box keeps the spec's
# plane walk (S = 32; RT 8 in fp32, 4 in fp64).
chosen_mapping_3d() {
  if [[ "$1" == 7pt ]]; then echo "S=1 RT=8"; fi
}
# Every shape of one dimensionality: dims (2d, 3d), shapes, chosen mapping, variants.
emit_all() {
  local dims="$1" shapes="$2" mapping_words="$3" variants="$4" shape type f64 name variant
  # shellcheck disable=SC2206  # the mapping is NAME=VALUE words
  local mapping=($mapping_words)
  for shape in $shapes; do
    # shellcheck disable=SC2207
    [[ "$dims" == 3d && -z "${STENCIL3D_MAPPING:-}" ]] && mapping=($(chosen_mapping_3d "$shape"))
    for type in ${STENCIL_TYPES:-f32 f64}; do
      case "$type" in
        f32) f64=0 ;;
        f64) f64=1 ;;
        *) echo "unknown type $type (f32 or f64)"; exit 2 ;;
      esac
      name="stencil${dims}_${shape}_$type"
      emit "stencil${dims}_$shape" "$name" "F64=$f64" "${mapping[@]+"${mapping[@]}"}"
      for variant in $variants; do
        # shellcheck disable=SC2046  # the settings are words
        emit "stencil${dims}_$shape" "${name}_${variant%%:*}" "F64=$f64" "${mapping[@]+"${mapping[@]}"}" $(tr ',' ' ' <<<"${variant#*:}")
      done
    done
  done
}
variants3d="${STENCIL3D_VARIANTS:-}"
[[ "$variants3d" == study ]] && variants3d="rt4:RT=4 rt8:RT=8 s1:S=1,RT=8 s16:S=16 s64:S=64 pe64:PE=64,RT=4"
emit_all 2d "${STENCIL_SHAPES-5pt 9pt 25pt star2}" "${STENCIL_MAPPING:-}" "${STENCIL_VARIANTS:-}"
emit_all 3d "${STENCIL3D_SHAPES-7pt 27pt}" "${STENCIL3D_MAPPING:-}" "$variants3d"

[[ ${#commands[@]} -eq 0 ]] || printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -n 1 bash -c
rm -f "$out"/stencil2d_*.log "$out"/stencil3d_*.log
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
shopt -s nullglob
n=0
for f in "$out"/stencil2d_*.cu "$out"/stencil3d_*.cu; do [[ "$f" == *_check.cu ]] || n=$((n + 1)); done
echo "wrote $n stencil kernels to $out"

#!/usr/bin/env bash
# Emits the single-sweep 2-D stencil benchmark's Pulse kernels into one folder,
# named as scripts/gpu_bench_stencil.sh expects: stencil2d_{shape}_{type}
# (the chosen mapping of that stencil, from the specs of examples/stencil) and
# stencil2d_{shape}_{type}_{tag} (other mappings, rows of their own), for the
# shapes 5pt, 9pt, 25pt, star2 and the types f32, f64.
#
# usage: benchmarks/generate_stencil.sh BUILD_DIR OUT_DIR
# environment:
#   STENCIL_SHAPES    shapes (default "5pt 9pt 25pt star2")
#   STENCIL_TYPES     types (default "f32 f64")
#   STENCIL_MAPPING   the chosen mapping, --param settings for every shape
#                     (default: the spec's defaults, PE=32 RT=8 S=1)
#   STENCIL_VARIANTS  extra mappings, "tag:SETTING,SETTING ..." (default none),
#                     each SETTING a spec parameter NAME=V (PE, RT, S) or a
#                     generator flag, applied over the chosen mapping
#                     (e.g. "rt16:RT=16 s4:RT=16,S=4 pe64:PE=64")
#   JOBS              generators run at once (default: the number of cores)
set -euo pipefail
usage="usage: benchmarks/generate_stencil.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
jobs="${JOBS:-$(nproc)}"
[[ -x "$build/examples/stencil" ]] || { echo "no $build/examples/stencil: build the stencil example first"; exit 1; }

commands=()
emit() {  # shape, kernel name, then settings: NAME=VALUE parameters or generator flags
  local shape="$1" name="$2" args=() kv
  shift 2
  for kv in "$@"; do
    if [[ "$kv" == --* ]]; then args+=("$kv"); else args+=(--param "$kv"); fi
  done
  commands+=("'$build/examples/stencil' -g stencil2d_$shape ${args[*]} --emit cuda --name=$name -o '$out' > '$out/$name.log' 2>&1 || { echo 'FAIL $name:'; cat '$out/$name.log'; exit 1; }")
}
# shellcheck disable=SC2206  # the mapping is NAME=VALUE words
mapping=(${STENCIL_MAPPING:-})
for shape in ${STENCIL_SHAPES:-5pt 9pt 25pt star2}; do
  for type in ${STENCIL_TYPES:-f32 f64}; do
    case "$type" in
      f32) f64=0 ;;
      f64) f64=1 ;;
      *) echo "unknown type $type (f32 or f64)"; exit 2 ;;
    esac
    name="stencil2d_${shape}_$type"
    emit "$shape" "$name" "F64=$f64" "${mapping[@]+"${mapping[@]}"}"
    for variant in ${STENCIL_VARIANTS:-}; do
      # shellcheck disable=SC2046  # the settings are words
      emit "$shape" "${name}_${variant%%:*}" "F64=$f64" "${mapping[@]+"${mapping[@]}"}" $(tr ',' ' ' <<<"${variant#*:}")
    done
  done
done

[[ ${#commands[@]} -eq 0 ]] || printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -n 1 bash -c
rm -f "$out"/stencil2d_*.log
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
shopt -s nullglob
n=0
for f in "$out"/stencil2d_*.cu; do [[ "$f" == *_check.cu ]] || n=$((n + 1)); done
echo "wrote $n stencil kernels to $out"

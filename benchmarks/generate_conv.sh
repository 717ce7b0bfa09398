#!/usr/bin/env bash
# Emits the convolution benchmark's Pulse kernels into one folder, named as
# scripts/gpu_bench.sh expects: conv2d_k{K} (the mapping chosen for K, from
# the conv2d_ssam spec), conv2d_k{K}_{tag} (other mappings of that K, rows
# of their own), and conv1d_{design}_q{Q}.
#
# usage: benchmarks/generate_conv.sh BUILD_DIR OUT_DIR
# environment:
#   CONV2D_KS        filter sizes (default "3 5 7 9 11 13 15")
#   CONV2D_MAPPING   the chosen mapping, --param settings per K: a function
#                    of K below; override with "PE=64 RT=8" for every K
#   CONV2D_VARIANTS  extra mappings, "tag:SETTING,SETTING ..." (default none),
#                    each SETTING a spec parameter NAME=V or a generator flag,
#                    applied over the chosen mapping
#                    (e.g. "pe32:PE=32 roll:PE=64,--unroll-steps=0")
#   JOBS             generators run at once (default: the number of cores)
set -euo pipefail
usage="usage: benchmarks/generate_conv.sh BUILD_DIR OUT_DIR"
build="$(cd "${1:?$usage}" && pwd)"
mkdir -p "${2:?$usage}"
out="$(cd "$2" && pwd)"
jobs="${JOBS:-$(nproc)}"

# The mapping measured best for K (docs/benchmarks.md): the array width PE
# (PE - K + 1 output columns per warp, PE / 32 PEs per lane) and the rows per
# warp RT.
chosen_mapping() {
  local k="$1"
  if [[ -n "${CONV2D_MAPPING:-}" ]]; then echo "$CONV2D_MAPPING"; return; fi
  # H200, 2026-11-21 (docs/benchmarks.md): narrow arrays with long row
  # windows while the filter is small, wider arrays (fewer idle halo lanes)
  # as it grows.
  if ((k <= 7)); then echo "PE=32 RT=16"
  elif ((k <= 11)); then echo "PE=64 RT=8"
  else echo "PE=96 RT=6"; fi
}

commands=()
emit_conv2d() {  # name, then NAME=VALUE settings
  local name="$1" args=() kv
  shift
  for kv in "$@"; do
    if [[ "$kv" == --* ]]; then args+=("$kv"); else args+=(--param "$kv"); fi
  done
  commands+=("'$build/examples/conv2d' -g conv2d_ssam ${args[*]} --emit cuda --name=$name -o '$out' > '$out/$name.log' 2>&1 || { echo 'FAIL $name:'; cat '$out/$name.log'; exit 1; }")
}
for k in ${CONV2D_KS:-3 5 7 9 11 13 15}; do
  # shellcheck disable=SC2046  # the mapping is NAME=VALUE words
  emit_conv2d "conv2d_k$k" "K=$k" $(chosen_mapping "$k")
  for variant in ${CONV2D_VARIANTS:-}; do
    tag="${variant%%:*}"
    settings="${variant#*:}"
    # shellcheck disable=SC2046
    emit_conv2d "conv2d_k${k}_$tag" "K=$k" $(chosen_mapping "$k") $(tr ',' ' ' <<<"$settings")
  done
done
printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -n 1 bash -c
rm -f "$out"/conv2d_k*.log
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
echo "wrote $(ls "$out"/conv2d_k*.cu | wc -l) conv2d kernels to $out"

#!/usr/bin/env bash
# Emits the convolution benchmark's Pulse kernels into one folder, named as
# scripts/gpu_bench.sh expects: conv2d_k{K} (the mapping chosen for K, from
# the conv2d_ssam spec), conv2d_k{K}_{tag} (other mappings of that K, rows
# of their own), and conv1d_{design}_q{Q} (designs SBM and FBS of the conv1d
# specs, whose output is the flat signal Out(b * C + c) conv1d_bench.cu passes).
#
# usage: benchmarks/generate_conv.sh BUILD_DIR OUT_DIR
# environment:
#   CONV2D_KS        filter sizes (default "3 5 7 9 11 13 15"; empty: no conv2d kernels)
#   CONV2D_MAPPING   the chosen mapping, --param settings per K: a function
#                    of K below; override with "PE=64 RT=8" for every K
#   CONV2D_VARIANTS  extra mappings, "tag:SETTING,SETTING ..." (default none),
#                    each SETTING a spec parameter NAME=V or a generator flag,
#                    applied over the chosen mapping
#                    (e.g. "pe32:PE=32 roll:PE=64,--unroll-steps=0")
#   CONV1D_QS        filter lengths of the conv1d kernels (default "5 17"; empty: none)
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
emit() {  # program, spec, kernel name, then settings: NAME=VALUE parameters or generator flags
  local program="$1" spec="$2" name="$3" args=() kv
  shift 3
  for kv in "$@"; do
    if [[ "$kv" == --* ]]; then args+=("$kv"); else args+=(--param "$kv"); fi
  done
  commands+=("'$build/examples/$program' -g $spec ${args[*]} --emit cuda --name=$name -o '$out' > '$out/$name.log' 2>&1 || { echo 'FAIL $name:'; cat '$out/$name.log'; exit 1; }")
}
emit_conv2d() { emit conv2d conv2d_ssam "$@"; }
for k in ${CONV2D_KS-3 5 7 9 11 13 15}; do
  # shellcheck disable=SC2046  # the mapping is NAME=VALUE words
  emit_conv2d "conv2d_k$k" "K=$k" $(chosen_mapping "$k")
  for variant in ${CONV2D_VARIANTS:-}; do
    tag="${variant%%:*}"
    settings="${variant#*:}"
    # shellcheck disable=SC2046
    emit_conv2d "conv2d_k${k}_$tag" "K=$k" $(chosen_mapping "$k") $(tr ',' ' ' <<<"$settings")
  done
done

# 1-D convolution: SBM and FBS, each as wide as a warp allows (SBM has C + Q - 1
# PEs, so C = 33 - Q; FBS has C PEs, so C = 32).
for q in ${CONV1D_QS-5 17}; do
  emit conv1d conv1d_sbm "conv1d_sbm_q$q" "Q=$q" "C=$((33 - q))"
  emit conv1d conv1d_fbs "conv1d_fbs_q$q" "Q=$q" C=32
done

[[ ${#commands[@]} -eq 0 ]] || printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -n 1 bash -c
rm -f "$out"/conv2d_k*.log "$out"/conv1d_*_q*.log
cp "$(dirname "$0")/../runtime/pulse_cuda.h" "$(dirname "$0")/../runtime/pulse_buffer.h" "$out/"
shopt -s nullglob
kernels() {  # the kernel sources among the files named (not the check harnesses)
  local n=0 f
  for f in "$@"; do [[ "$f" == *_check.cu ]] || n=$((n + 1)); done
  echo "$n"
}
echo "wrote $(kernels "$out"/conv2d_k*.cu) conv2d and $(kernels "$out"/conv1d_*_q*.cu) conv1d kernels to $out"

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
#                    (e.g. "pe32:PE=32 roll:PE=64,--unroll-steps=0"); a
#                    variant whose settings name another spec of the conv2d
#                    program (spec=NAME) gets only its own settings
#   CONV2D_STUDY     "tiles": adds the tile-per-thread designs of conv2d_2d
#                    (docs/benchmarks.md, "conv2d as a tile of outputs per
#                    thread") to CONV2D_VARIANTS: t{C}x{R} a thread's C
#                    consecutive columns of R rows (a filter row per block of
#                    steps), o{C}x{R} the same with a filter column per block
#   CONV1D_QS        filter lengths of the conv1d kernels (default "5 17"; empty: none)
#   CONV1D_VARIANTS  extra mappings of the eight-PEs-per-lane conv1d kernels,
#                    "tag:NAME=V,NAME=V ..." (e.g. "t4:T=4 s4:S=4": four arrays
#                    per warp, unrolled or in sequence), as conv1d_{sbm8,fbs8}{tag}_q{Q}
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

# The tile-per-thread study: conv2d_2d with the image read in place, a
# block of 8 warps, the block's box of the image staged in shared memory once,
# the time loop rolled over blocks of K steps, two blocks an SM.
if [[ "${CONV2D_STUDY:-}" == tiles ]]; then
  tile="spec=conv2d_2d,WARPS=1,INPLACE=1,SHARED=1,--unroll-steps=0,--max-shared-bytes=110000,--min-blocks-per-sm=2"
  CONV2D_VARIANTS="${CONV2D_VARIANTS:-} t4x8:$tile,C=128,R=64,--pes-per-thread=8 t8x4:$tile,C=256,R=32,--pes-per-thread=4
    t16x2:$tile,C=512,R=16,--pes-per-thread=2 o1x16:$tile,ORDER=1,C=32,R=128,--pes-per-thread=16
    o1x32:$tile,ORDER=1,C=32,R=256,--pes-per-thread=32 o2x16:$tile,ORDER=1,C=64,R=128,--pes-per-thread=16"
fi
case "${CONV2D_STUDY:-tiles}" in tiles) ;; *) echo "CONV2D_STUDY=$CONV2D_STUDY: the study known is tiles" >&2; exit 2 ;; esac

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
    if [[ ",$settings," =~ ,spec=([A-Za-z0-9_]+), ]]; then
      spec="${BASH_REMATCH[1]}"
      # shellcheck disable=SC2046
      emit conv2d "$spec" "conv2d_k${k}_$tag" "K=$k" $(tr ',' ' ' <<<"$settings" | tr ' ' '\n' | grep -v '^spec=')
    else
      # shellcheck disable=SC2046
      emit_conv2d "conv2d_k${k}_$tag" "K=$k" $(chosen_mapping "$k") $(tr ',' ' ' <<<"$settings")
    fi
  done
done

# The arrays per warp of the eight-PEs-per-lane FBS kernel, measured best
# for Q (docs/benchmarks.md, H100, 2026-11-21): at Q = 5 a warp has too little
# work for its setup unless it runs two arrays side by side (T) and walks
# eight such pairs (S); at Q = 17 it walks four.
# At Q = 5 the kernel runs 1.8x faster with dimension 0 indexed by its stride
# (105 registers) than dense (64; docs/benchmarks.md, "The stride of
# dimension 0 as a choice", H200, 2026-11-27).
conv1d_mapping() {
  if (($1 <= 8)); then echo "T=2 S=8 --strided-first-dimension"; else echo "S=4"; fi
}

# 1-D convolution: SBM and FBS, each one PE per lane (SBM has C + Q - 1 PEs,
# so C = 33 - Q; FBS has C PEs, so C = 32) and eight PEs per lane (sbm8,
# fbs8: 256 PEs, the lane's neighbouring PEs in its registers; fbs8 in the
# mapping above).
for q in ${CONV1D_QS-5 17}; do
  emit conv1d conv1d_sbm "conv1d_sbm_q$q" "Q=$q" "C=$((33 - q))"
  emit conv1d conv1d_fbs "conv1d_fbs_q$q" "Q=$q" C=32
  emit conv1d conv1d_sbm "conv1d_sbm8_q$q" "Q=$q" "C=$((257 - q))"
  # shellcheck disable=SC2046
  emit conv1d conv1d_fbs "conv1d_fbs8_q$q" "Q=$q" C=256 $(conv1d_mapping "$q")
  for variant in ${CONV1D_VARIANTS:-}; do
    tag="${variant%%:*}"
    # shellcheck disable=SC2046
    emit conv1d conv1d_sbm "conv1d_sbm8${tag}_q$q" "Q=$q" "C=$((257 - q))" $(tr ',' ' ' <<<"${variant#*:}")
    # shellcheck disable=SC2046
    emit conv1d conv1d_fbs "conv1d_fbs8${tag}_q$q" "Q=$q" C=256 $(tr ',' ' ' <<<"${variant#*:}")
  done
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

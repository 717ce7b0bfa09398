#!/usr/bin/env bash
# Builds and runs the convolution benchmarks on a machine with CUDA and a GPU:
# benchmarks/conv2d_bench.cu (Pulse against a plain kernel, NPP, cuDNN and
# cuFFT) and benchmarks/conv1d_bench.cu (Pulse SBM/FBS against a plain
# kernel), each row as a fraction of the floors measured in the same run.
# Logs go to OUT_DIR (conv2d.log, conv1d.log, build/*.log) and, where
# matplotlib is importable, benchmarks/plot_conv.py draws the fractions there.
#
# usage: scripts/gpu_bench.sh GENERATED_DIR OUT_DIR
#   GENERATED_DIR  the generated kernels: conv2d_k{K}.{h,cu} (and variants
#                  conv2d_k{K}_{tag}.{h,cu}, other mappings of that K) and
#                  conv1d_{design}_q{Q}.{h,cu}; the K and Q benchmarked are the
#                  ones found there (a bench with none runs its peers at its
#                  default sizes)
#   OUT_DIR        binaries, logs and plots
# environment: NVCC (default nvcc), ARCH (default sm_90), CONV2D_SIZE (default
#   "8192 8192"), CONV1D_N (default 134217728 = 2^27), BUILD_ONLY=1 to stop
#   after building, JOBS (nvcc runs at once, default all); CUDNN_INCLUDE_DIR /
#   CUDNN_LIB_DIR where cuDNN is elsewhere.
set -uo pipefail
usage="usage: scripts/gpu_bench.sh GENERATED_DIR OUT_DIR"
gen="$(cd "${1:?$usage}" && pwd)" || exit 2
mkdir -p "${2:?$usage}" || exit 2
out="$(cd "$2" && pwd)"
# shellcheck source=scripts/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"

# ---- which generated kernels exist (header and source both) ----------------
ks=()
for f in "$gen"/conv2d_k*.cu; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f" .cu)"
  k="${name#conv2d_k}"
  [[ "$k" =~ ^[0-9]+$ && -f "$gen/$name.h" ]] && ks+=("$k")
done
variants=()  # K_tag: conv2d_k{K}_{tag}, other mappings of a K
for f in "$gen"/conv2d_k*_*.cu; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f" .cu)"
  [[ "$name" =~ ^conv2d_k([0-9]+)_([A-Za-z0-9]+)$ && -f "$gen/$name.h" && -f "$gen/conv2d_k${BASH_REMATCH[1]}.cu" ]] &&
    variants+=("${BASH_REMATCH[1]}_${BASH_REMATCH[2]}")
done
conv1d=()  # {design}_q{Q}
for f in "$gen"/conv1d_*_q*.cu; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f" .cu)"
  [[ "$name" =~ ^conv1d_[A-Za-z0-9_]+_q[0-9]+$ && -f "$gen/$name.h" ]] && conv1d+=("${name#conv1d_}")
done
mapfile -t ks < <(printf '%s\n' "${ks[@]+"${ks[@]}"}" | grep . | sort -n)
mapfile -t conv1d < <(printf '%s\n' "${conv1d[@]+"${conv1d[@]}"}" | grep . | sort -t q -k2,2n -k1,1)
mapfile -t qs < <(for n in "${conv1d[@]+"${conv1d[@]}"}"; do echo "${n##*_q}"; done | sort -nu)

conv2d_defs=() conv2d_sources=()
if [[ ${#ks[@]} -gt 0 ]]; then
  list=""
  for k in "${ks[@]}"; do
    list+="X($k) "
    conv2d_sources+=("conv2d_k$k")
    conv2d_defs+=(-include "conv2d_k$k.h")
  done
  vlist=""
  for v in "${variants[@]+"${variants[@]}"}"; do
    vlist+="V(${v%%_*}, ${v#*_}) "
    conv2d_sources+=("conv2d_k$v")
  done
  # nvcc splits -D values at commas: the variant list goes in a header.
  echo "#define PULSE_VARIANTS ${vlist% }" >"$build/pulse_variants.h"
  conv2d_defs+=(-DWITH_PULSE "-DPULSE_KS=${list% }" -include "$build/pulse_variants.h")
fi
conv1d_defs=() conv1d_sources=()
if [[ ${#conv1d[@]} -gt 0 ]]; then
  list="" qlist=""
  for n in "${conv1d[@]}"; do
    list+="X($n) "
    conv1d_sources+=("conv1d_$n")
    conv1d_defs+=(-include "conv1d_$n.h")
  done
  for q in "${qs[@]}"; do qlist+="X($q) "; done
  conv1d_defs+=(-DWITH_PULSE "-DPULSE_QS=${qlist% }" "-DPULSE_CONV1D=${list% }")
fi
echo "nvcc: $("$nvcc" --version | tail -1), -arch=$arch"
echo "generated kernels in $gen:"
echo "  conv2d K: ${ks[*]:-(none: peers only, default K)}"
echo "  conv2d variants (K_tag): ${variants[*]:-(none)}"
echo "  conv1d:   ${conv1d[*]:-(none: peers only, default Q)}"

# ---- libraries: NPP and cuDNN are optional peers ---------------------------
conv2d_libs=(-lcufft)
if find_npp; then
  conv2d_libs+=("${npp_libs[@]}")
else
  conv2d_defs+=(-DPULSE_BENCH_NO_NPP)
fi
cudnn_inc_dirs=("${CUDNN_INCLUDE_DIR:-}" /usr/include /usr/include/x86_64-linux-gnu "${cuda_includes[@]}")
cudnn_inc="$(find_in cudnn.h "${cudnn_inc_dirs[@]}")"
if [[ -z "$cudnn_inc" ]] && v9="$(find_in cudnn_v9.h "${cudnn_inc_dirs[@]}")"; then
  # Only the versioned headers (their alternatives links missing): link them
  # under the names cudnn.h includes.
  cudnn_inc="$build/cudnn_include"
  mkdir -p "$cudnn_inc"
  for h in "$v9"/cudnn*_v9.h; do ln -sf "$h" "$cudnn_inc/$(basename "${h/_v9.h/.h}")"; done
fi
if [[ -n "$cudnn_inc" ]] &&
   cudnn_lib="$(find_in libcudnn.so "${CUDNN_LIB_DIR:-}" "${system_libs[@]}" "${cuda_libs[@]}" || find_in libcudnn.so.9 "${CUDNN_LIB_DIR:-}" "${system_libs[@]}" "${cuda_libs[@]}")"; then
  [[ "$cudnn_inc" == /usr/include ]] || includes+=("-I$cudnn_inc")
  # libcudnn.so.9 without the unversioned link: name the file itself.
  cudnn_link=(-lcudnn)
  [[ -e "$cudnn_lib/libcudnn.so" ]] || cudnn_link=("$cudnn_lib/libcudnn.so.9")
  conv2d_libs+=("-L$cudnn_lib" "-Xlinker=-rpath=$cudnn_lib" "${cudnn_link[@]}")
  echo "cuDNN: $cudnn_inc, $cudnn_lib"
else
  conv2d_defs+=(-DPULSE_BENCH_NO_CUDNN)
  echo "cuDNN: not found, left out"
fi

# ---- build: every translation unit at once, then link ----------------------
for n in "${conv2d_sources[@]+"${conv2d_sources[@]}"}" "${conv1d_sources[@]+"${conv1d_sources[@]}"}"; do
  compile "$n" "$gen/$n.cu"
done
compile conv2d_bench "$root/benchmarks/conv2d_bench.cu" "${conv2d_defs[@]+"${conv2d_defs[@]}"}"
compile conv1d_bench "$root/benchmarks/conv1d_bench.cu" "${conv1d_defs[@]+"${conv1d_defs[@]}"}"
wait_compiles
report_resources "${conv2d_sources[@]+"${conv2d_sources[@]}"}" "${conv1d_sources[@]+"${conv1d_sources[@]}"}"

ok2=0 ok1=0
link conv2d_bench "${conv2d_sources[@]+"${conv2d_sources[@]}"}" -- "${conv2d_libs[@]}" && ok2=1 || failures=$((failures + 1))
link conv1d_bench "${conv1d_sources[@]+"${conv1d_sources[@]}"}" -- && ok1=1 || failures=$((failures + 1))
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
  ((ok2)) && echo "built $out/conv2d_bench"
  ((ok1)) && echo "built $out/conv1d_bench"
  exit $((failures != 0))
fi

# ---- run ---------------------------------------------------------------------
logs=()
if ((ok2)); then
  # shellcheck disable=SC2086  # CONV2D_SIZE is "W H"
  run_logged conv2d.log "$out/conv2d_bench" ${CONV2D_SIZE:-8192 8192}
  logs+=("$out/conv2d.log")
fi
if ((ok1)); then
  run_logged conv1d.log "$out/conv1d_bench" "${CONV1D_N:-134217728}"
  logs+=("$out/conv1d.log")
fi
[[ ${#logs[@]} -eq 0 ]] || plot "$root/benchmarks/plot_conv.py" "${logs[@]}"
if [[ $failures -ne 0 ]]; then
  echo "gpu_bench: $failures step(s) failed"
  exit 1
fi

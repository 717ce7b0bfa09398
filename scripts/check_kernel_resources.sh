#!/usr/bin/env bash
# Compiles every generated CUDA kernel in a folder (NAME.cu with NAME.h; check
# harnesses are left out) for sm_90 and fails if any uses local memory: a
# stack frame or spills. Prints one line per kernel with its registers.
# usage: scripts/check_kernel_resources.sh GENERATED_DIR   (environment: NVCC, ARCH, JOBS)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "${1:?usage: check_kernel_resources.sh GENERATED_DIR}" && pwd)"
nvcc="${NVCC:-nvcc}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
kernels=()
for f in "$dir"/*.cu; do
  name="$(basename "$f" .cu)"
  [[ "$name" == *_check || ! -f "$dir/$name.h" ]] && continue
  kernels+=("$name")
done
if [[ ${#kernels[@]} -eq 0 ]]; then echo "no kernels in $dir"; exit 1; fi
printf '%s\n' "${kernels[@]}" | xargs -P "${JOBS:-$(nproc)}" -I{} sh -c \
  "'$nvcc' -O3 -std=c++17 -arch='${ARCH:-sm_90}' -Xptxas -v -I'$root/runtime' -I'$dir' -c '$dir/{}.cu' -o '$logs/{}.o' > '$logs/{}.log' 2>&1 || echo FAIL > '$logs/{}.failed'"
status=0
for name in "${kernels[@]}"; do
  if [[ -e "$logs/$name.failed" ]]; then
    echo "FAIL $name: nvcc failed"; sed 's/^/  /' "$logs/$name.log" | head -10; status=1; continue
  fi
  line="$(grep -A2 "Function properties for .*${name}_kernel" "$logs/$name.log" | tr -s ' \n' ' ')"
  regs="$(grep -o "Used [0-9]* registers" "$logs/$name.log" | head -1)"
  if grep -q "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" <<<"$line"; then
    echo "ok   $name: $regs, no local memory"
  else
    echo "FAIL $name: local memory: $line"; status=1
  fi
done
exit $status

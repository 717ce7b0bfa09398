#!/usr/bin/env bash
# Installs what Pulse needs from Debian's packages, if it is missing.
# Idempotent and fast when everything is present.
set -euo pipefail
packages=(cmake ninja-build ccache g++ pkg-config libhalide14-0-dev libisl-dev libeigen3-dev catch2 python3-matplotlib
          libclang-cpp14-dev libclang-14-dev
          # Intel's offline GPU compiler and the road of CM kernels to it (tools/IntelCompile.h, ctest -L intel)
          intel-opencl-icd libigc-tools llvm-spirv-14 intel-vc-intrinsics-dev clang-14 llvm-14 ocl-icd-opencl-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

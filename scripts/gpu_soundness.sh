#!/usr/bin/env bash
# The soundness checks on a GPU, from what was generated on a machine with the compiler:
#   DIR/designs  accepted random designs (build/test/random_designs COUNT DIR/designs)
#   DIR/scalars  scalar-semantics batches (PULSE_SCALAR_CUDA_DIR=DIR/scalars build/test/test_scalar_semantics)
#   DIR/specs    the soundness regression specs' CUDA (soundness_specs -g NAME --emit cuda -o DIR/specs/NAME)
# Logs go to LOGS (default DIR). Exits 1 if anything fails.
#
# usage: scripts/gpu_soundness.sh DIR [LOGS]
set -uo pipefail
dir="${1:?usage: $0 DIR [LOGS]}"
logs="${2:-$dir}"
mkdir -p "$logs" || exit 1
here="$(cd "$(dirname "$0")" && pwd)"
runtime="$here/../runtime"
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$logs/gpu.txt"
date -u | tee -a "$logs/gpu.txt"
echo "== regression specs"
for d in "$dir"/specs/*/; do
    n="$(basename "$d")"
    if (cd "$d" && nvcc -arch=sm_90 -O2 -I "$runtime" "$n.cu" "${n}_check.cu" -o check > build.log 2>&1 && ./check && \
        compute-sanitizer --tool memcheck --error-exitcode 9 ./check > memcheck.log 2>&1); then
        echo "$n: PASS, memcheck clean"
    else
        echo "$n: FAIL"; tail -n 5 "$d"/*.log; status=1
    fi
done 2>&1 | tee "$logs/specs.log"
grep -q FAIL "$logs/specs.log" && status=1
echo "== scalar semantics"
"$here/gpu_scalar_semantics.sh" "$dir/scalars" 2>&1 | tee "$logs/scalars.log"
(( PIPESTATUS[0] == 0 )) || status=1
echo "== random designs"
"$here/gpu_random_designs.sh" "$dir/designs" 16 10 > "$logs/designs.log" 2>&1 || status=1
tail -n 30 "$logs/designs.log"
cp "$dir/designs/results.txt" "$logs/designs_results.txt" 2>/dev/null
exit $status

#!/usr/bin/env bash
# Builds and runs on a GPU the designs `random_designs COUNT DIR` wrote (build/test/random_designs):
# each DIR/NAME/NAME_check.cu checks the kernel against its C++ reference on random inputs,
# outputs poisoned, at the spec's sizes and with every output one smaller; every Nth design
# also runs under compute-sanitizer memcheck. Prints one line per failure and a summary;
# exits 1 if any design fails.
#
# usage: scripts/gpu_random_designs.sh DIR [JOBS (16)] [MEMCHECK_EVERY (10)]
set -uo pipefail
dir="${1:?usage: $0 DIR [JOBS] [MEMCHECK_EVERY]}"
jobs="${2:-16}"
every="${3:-10}"
runtime="$(cd "$(dirname "$0")/../runtime" && pwd)"
export runtime every

one() {
    local d="$1" index="$2" name
    name="$(basename "$d")"
    cd "$d" || return
    if ! nvcc -arch=sm_90 -O2 -I "$runtime" "$name.cu" "${name}_check.cu" -o check > build.log 2>&1; then
        echo "BUILD-FAIL $name"; return
    fi
    if ! ./check > run.log 2>&1; then echo "FAIL $name: $(tail -n 3 run.log | tr '\n' ' ')"; return; fi
    if (( index % every == 0 )); then
        if compute-sanitizer --tool memcheck --error-exitcode 9 ./check > memcheck.log 2>&1; then
            echo "PASS+MEMCHECK $name"
        else
            echo "MEMCHECK-FAIL $name: $(grep -m1 -E 'ERROR SUMMARY|Invalid' memcheck.log)"
        fi
        return
    fi
    echo "PASS $name"
}
export -f one

i=0
for d in "$dir"/design*/; do echo "$d $i"; i=$((i + 1)); done |
    xargs -P "$jobs" -n 2 bash -c 'one "$0" "$1"' > "$dir/results.txt"
total=$(wc -l < "$dir/results.txt")
pass=$(grep -c '^PASS' "$dir/results.txt")
memchecked=$(grep -c '^PASS+MEMCHECK\|^MEMCHECK-FAIL' "$dir/results.txt")
memclean=$(grep -c '^PASS+MEMCHECK' "$dir/results.txt")
grep -v '^PASS' "$dir/results.txt"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
echo "gpu random designs: $pass of $total pass (built, run at two sizes against the reference); memcheck clean on $memclean of $memchecked"
[[ "$pass" == "$total" && "$memclean" == "$memchecked" ]]

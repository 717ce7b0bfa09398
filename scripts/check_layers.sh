#!/usr/bin/env bash
# Checks the layering of the source tree: each folder includes headers of its
# own folder and of lower ones only. The layers, lowest first:
#
#   base      base/include/pulse   Error.h, Types.h (included as "pulse/...")
#   ir        compiler/ir          the IRs (URE program, systolic program, kernel IR)
#   exec      compiler/exec        CPU evaluators of the IRs, buffer element I/O
#   analysis  compiler/analysis    dependences, isl model, validator, reverse map, report
#   lower     compiler/lower       the pass lists and the lowerings
#   codegen   compiler/codegen     printers of the IRs (C, CUDA, CM, OpenCL, C++ reference); they
#                                  include only ir and base: a printer takes a finished kernel
#   frontend  frontend/include/pulse, frontend/src   the embedded language (pulse.h)
#   tools     tools                the generator command line
#
# tools/import (pulse-import, a C front end on Clang) and tools/vc (an opt-14
# plugin for Intel's compiler) stand beside the layers: they link neither
# Halide nor the compiler, so they include only their own headers.
#
# Headers are named by their folder ("ir/KernelIR.h", "pulse/pulse.h"); a
# quoted include that names no folder must be a file beside the includer. It
# fails on an include from a higher layer, on an include it cannot place, and
# on a source file outside the folders above (compiler/ has no files of its own).
#
# usage: scripts/check_layers.sh [ROOT]   (ROOT: the repository, default this script's)
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

layers=(base ir exec analysis lower codegen frontend tools)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

# The layer of a file by its folder (not a subfolder: CMake compiles these
# folders' .cpp files and no others); empty if it is in none.
layer_of() {
    case "$(dirname "$1")" in
        base/include/pulse) echo base ;;
        compiler/ir) echo ir ;;
        compiler/exec) echo exec ;;
        compiler/analysis) echo analysis ;;
        compiler/lower) echo lower ;;
        compiler/codegen) echo codegen ;;
        frontend/include/pulse | frontend/src) echo frontend ;;
        tools) echo tools ;;
        tools/import) echo import ;;
        tools/vc) echo vc ;;
        *) echo "" ;;
    esac
}

errors=0
files=0
includes=0
fail() { echo "FAIL $*"; errors=$((errors + 1)); }

while IFS= read -r file; do
    files=$((files + 1))
    from=$(layer_of "$file")
    if [[ -z "$from" ]]; then
        fail "$file: not in a layer folder (base/include/pulse, compiler/{ir,exec,analysis,lower,codegen}, frontend/{include/pulse,src}, tools, tools/import, tools/vc)"
        continue
    fi
    # Only directives at the start of a line: the backends print "#include" inside strings.
    while IFS=: read -r line spelling; do
        [[ -n "$line" ]] || continue
        quoted=0
        [[ "$spelling" == \"* ]] && quoted=1
        name="${spelling:1:${#spelling}-2}"
        target=""
        case "$name" in
            pulse/*)
                if [[ -f "base/include/$name" ]]; then target="base/include/$name"
                elif [[ -f "frontend/include/$name" ]]; then target="frontend/include/$name"
                else fail "$file:$line: $spelling: no such header in base/include or frontend/include"; continue
                fi ;;
            ir/* | exec/* | analysis/* | lower/* | codegen/*)
                if [[ -f "compiler/$name" ]]; then target="compiler/$name"
                else fail "$file:$line: $spelling: no such header in compiler/"; continue
                fi ;;
            *)
                if [[ $quoted -eq 0 ]]; then continue; fi  # a system or dependency header
                if [[ -f "$(dirname "$file")/$name" && "$name" != */* ]]; then target="$(dirname "$file")/$name"
                else fail "$file:$line: $spelling: name the header by its folder (\"ir/...\", \"pulse/...\")"; continue
                fi ;;
        esac
        includes=$((includes + 1))
        to=$(layer_of "$target")
        if [[ "$from" == import || "$to" == import || "$from" == vc || "$to" == vc ]]; then
            if [[ "$from" != "$to" ]]; then
                fail "$file:$line: includes $target: tools/$from includes only its own headers, and no layer includes it"
            fi
            continue
        fi
        # The printers print finished IR: they include the IRs and nothing that plans or evaluates.
        if [[ "$from" == codegen && "$to" != codegen && "$to" != ir && "$to" != base ]]; then
            fail "$file:$line: includes $target: codegen includes only ir and base (printers take a finished kernel; planning is lower's)"
            continue
        fi
        if (( ${rank[$to]} > ${rank[$from]} )); then
            fail "$file:$line: includes $target: $from must not include $to (layers, lowest first: ${layers[*]})"
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$file" |
             sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*(("[^"]*")|(<[^>]*>)).*/\1:\2/')
done < <(find base compiler frontend tools -type f \( -name '*.h' -o -name '*.cpp' \) | sort)

if (( errors > 0 )); then
    echo "layering: $errors error(s) in $files files"
    exit 1
fi
echo "layering ok: $includes project includes in $files files (lowest first: ${layers[*]})"

#!/usr/bin/env bash
# Checks that the documentation (README.md, docs/*.md) names only files that
# exist in this repository: every path under one of its top-level folders must
# exist (a trailing `.*` stands for "any extension"), and no design notes kept
# outside the repository may be cited.
#
# usage: scripts/check_docs.sh [ROOT]   (ROOT: the repository, default this script's)
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"
status=0
checked=0
for doc in README.md docs/*.md; do
  while IFS= read -r path; do
    path="${path%.}"
    path="${path%,}"
    checked=$((checked + 1))
    if [[ "$path" == *'.*' ]]; then
      compgen -G "${path%.*}.*" > /dev/null || { echo "$doc: names $path, which matches no file"; status=1; }
    elif [ ! -e "$path" ] && [ ! -e "$(dirname "$doc")/$path" ]; then  # from the root, or beside the page (links)
      echo "$doc: names $path, which is not in the repository"
      status=1
    fi
  done < <(grep -oE '(^|[^A-Za-z0-9_./-])(base|benchmarks|cmake|compiler|docs|examples|frontend|runtime|scripts|test|tools)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*]' "$doc" |
           sed -E 's/^[^a-z]//' | sort -u)
  if grep -nE 'DESIGN(\.md)?|LAYOUT\.md|papers/' "$doc"; then
    echo "$doc: cites design notes that are not in the repository (above)"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "docs ok: $checked paths checked"
exit "$status"

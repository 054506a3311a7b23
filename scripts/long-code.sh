#!/usr/bin/env bash
# scripts/long-code.sh [MAX_FUNCTION [MAX_FILE]]: lists the named functions longer than
# MAX_FUNCTION lines (default 80) and the source files longer than MAX_FILE lines (default 500)
# in the project's C++ (universal-ctags reads where each function ends; lambdas are counted in
# the function that holds them). Prints "N functions, M files" last; exit 1 if any.
# Issue 62 wants none, but for the declarative tables that docs/architecture.md names.
set -euo pipefail
cd "$(dirname "$0")/.."
max_fn=${1:-80} max_file=${2:-500}
command -v ctags > /dev/null || { echo "long-code: needs universal-ctags (apt-get install universal-ctags)" >&2; exit 2; }
dirs=(include core models protocols compressors actors runtime cli bench examples fuzz python)
files=$(find "${dirs[@]}" \( -name '*.cpp' -o -name '*.hpp' \) 2> /dev/null | sort)
# shellcheck disable=SC2086
fns=$(ctags --c++-kinds=f --fields=+ne --extras=-q -o - $files |
  awk -F'\t' -v max="$max_fn" '$1 !~ /^__anon/ {
    line = end = 0
    for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
    if (end && end - line + 1 > max) printf "%5d  %s:%d %s\n", end - line + 1, $2, line, $1
  }' | sort -rn)
# shellcheck disable=SC2086
long_files=$(wc -l $files | awk -v max="$max_file" '$2 != "total" && $1 > max { printf "%5d  %s\n", $1, $2 }' | sort -rn)
[ -z "$fns" ] || { echo "functions over $max_fn lines:"; echo "$fns"; }
[ -z "$long_files" ] || { echo "files over $max_file lines:"; echo "$long_files"; }
n_fn=$(grep -c . <<< "$fns" || true) n_file=$(grep -c . <<< "$long_files" || true)
echo "$n_fn functions, $n_file files"
[ "$n_fn" -eq 0 ] && [ "$n_file" -eq 0 ]

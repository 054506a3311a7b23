#!/usr/bin/env bash
# scripts/long-code.sh [--self-test] [MAX_FUNCTION [MAX_FILE]]: lists the named functions longer
# than MAX_FUNCTION lines (default 80) and the source files longer than MAX_FILE lines (default
# 500) in the project's C++ (universal-ctags reads where each function ends; lambdas are counted
# in the function that holds them). Prints "N functions, M files" last; exit 1 if any.
# A declarative table may be longer: docs/architecture.md's section "Declarative tables" names
# each as "- PATH `FUNCTION`", and those are left out (listed as allowed).
set -euo pipefail
root=${LONG_CODE_ROOT:-"$(dirname "$0")/.."}
if [ "${1:-}" = "--self-test" ]; then
  # A tree with one long function, then the same with it named a table: refused, then passed.
  t=$(mktemp -d)
  trap 'rm -rf "$t"' EXIT
  mkdir -p "$t/core" "$t/docs" "$t/scripts"
  cp "$0" "$t/scripts/long-code.sh"
  { echo "int long_one() {"; for i in $(seq 1 85); do echo "  int x$i = $i;"; done; echo "  return 0;"; echo "}"; } > "$t/core/a.cpp"
  printf '# Architecture notes\n\n## Declarative tables\n- core/b.cpp `other`: another\n' > "$t/docs/architecture.md"
  if LONG_CODE_ROOT="$t" bash "$t/scripts/long-code.sh" > "$t/out" 2>&1 || ! grep -q "core/a.cpp:1 long_one" "$t/out"; then
    echo "long-code self-test: a function of 88 lines was not refused:"; cat "$t/out"; exit 1
  fi
  printf '# Architecture notes\n\n## Declarative tables\n- core/a.cpp `long_one`: a table\n' > "$t/docs/architecture.md"
  if ! LONG_CODE_ROOT="$t" bash "$t/scripts/long-code.sh" > "$t/out" 2>&1 || ! grep -q "^allowed" "$t/out" || ! grep -q "core/a.cpp:1 long_one" "$t/out"; then
    echo "long-code self-test: a named table was refused:"; cat "$t/out"; exit 1
  fi
  echo "long-code self-test: a long function refused, a named table allowed"
  exit 0
fi
cd "$root"
max_fn=${1:-80} max_file=${2:-500}
# "PATH FUNCTION" for each table docs/architecture.md names.
tables=$(awk '/^## Declarative tables/ { on = 1; next } /^## / { on = 0 }
  on && /^- [^ ]+ `[^`]+`/ { name = $3; gsub(/[`:]/, "", name); print $2, name }' docs/architecture.md 2> /dev/null || true)
command -v ctags > /dev/null || { echo "long-code: needs universal-ctags (apt-get install universal-ctags)" >&2; exit 2; }
dirs=(include core models protocols compressors actors runtime cli bench examples tests fuzz python)
files=$( (find "${dirs[@]}" \( -name '*.cpp' -o -name '*.hpp' \) 2> /dev/null || true) | sort)  # (a folder may be absent)
# shellcheck disable=SC2086
fns=$(ctags --c++-kinds=f --fields=+ne --extras=-q -o - $files |
  awk -F'\t' -v max="$max_fn" '$1 !~ /^__anon/ {
    line = end = 0
    for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
    if (end && end - line + 1 > max) printf "%5d  %s:%d %s\n", end - line + 1, $2, line, $1
  }' | sort -rn)
# shellcheck disable=SC2086
long_files=$(wc -l $files | awk -v max="$max_file" '$2 != "total" && $1 > max { printf "%5d  %s\n", $1, $2 }' | sort -rn)
allowed=""
if [ -n "$tables" ] && [ -n "$fns" ]; then
  allowed=$(awk 'NR == FNR { t[$1 " " $2] = 1; next } { split($2, at, ":"); if ((at[1] " " $3) in t) print }' \
    <(echo "$tables") <(echo "$fns"))
  fns=$(awk 'NR == FNR { t[$1 " " $2] = 1; next } { split($2, at, ":"); if (!((at[1] " " $3) in t)) print }' \
    <(echo "$tables") <(echo "$fns"))
fi
[ -z "$allowed" ] || { echo "allowed, declarative tables (docs/architecture.md):"; echo "$allowed"; }
[ -z "$fns" ] || { echo "functions over $max_fn lines:"; echo "$fns"; }
[ -z "$long_files" ] || { echo "files over $max_file lines:"; echo "$long_files"; }
n_fn=$(grep -c . <<< "$fns" || true) n_file=$(grep -c . <<< "$long_files" || true)
echo "$n_fn functions, $n_file files"
[ "$n_fn" -eq 0 ] && [ "$n_file" -eq 0 ]

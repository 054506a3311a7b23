#!/usr/bin/env bash
# scripts/check-layers.sh [SRC]: fails on an #include that runs from a lower
# layer to a higher one (docs/architecture.md, "Layers"), printing each as
# FILE:LINE. Layers, from the ground up:
#  -1 include/syncpoint/         the public headers: they include only <syncpoint/...>,
#                                CAF, Torch and the standard library, never the tree
#   0 core/                      the vocabulary every layer shares
#   1 models/, protocols/        each on core only (not on each other)
#   2 actors/                    on core, models and protocols
#   3 runtime/                   what runs jobs in one process
#   4 runtime/cluster/           what runs jobs across processes
#   5 cli/ bench/ examples/ tests/ fuzz/   on anything
# A file may include its own folder's files (by a root-relative path, or by its
# bare name); a file or an include in no layer is an error too, so a new folder
# gets a layer here first.
# `--self-test` checks that a planted upward include is caught.
set -euo pipefail

check() {
  local dirs=()
  for d in include core models protocols actors runtime cli bench examples tests fuzz; do
    [ -d "$1/$d" ] && dirs+=("$d")
  done
  (cd "$1" && find "${dirs[@]}" \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \) -print | sort | xargs awk '
  function layer(p) {
    if (p ~ /^include\//) return -1
    if (p ~ /^core\//) return 0
    if (p ~ /^(models|protocols)\//) return 1
    if (p ~ /^actors\//) return 2
    if (p ~ /^runtime\/cluster\//) return 4
    if (p ~ /^runtime\//) return 3
    if (p ~ /^(cli|bench|examples|tests|fuzz)\//) return 5
    return -2
  }
  function folder(p) { sub(/\/[^\/]*$/, "", p); sub(/^protocols\/.*/, "protocols", p); return p }
  FNR == 1 { file = FILENAME; from = layer(file) }
  from == -1 && /^[ \t]*#[ \t]*include[ \t]*("|<(core|models|protocols|actors|runtime|cli|bench|examples|tests|fuzz)\/)/ {
    printf "%s:%d: a public header includes the tree (%s): only <syncpoint/...>, CAF, Torch and the standard library\n", file, FNR, $0
    bad = 1; next
  }
  /^[ \t]*#[ \t]*include[ \t]*"/ {
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    if (inc !~ /\//) { dir = file; sub(/\/[^\/]*$/, "", dir); inc = dir "/" inc }  # beside the file
    to = layer(inc)
    if (to < -1) { printf "%s:%d: #include \"%s\" names no project folder\n", file, FNR, inc; bad = 1; next }
    if (to < from || folder(inc) == folder(file) || (from == 5 && to == 5)) next
    printf "%s:%d: #include \"%s\" runs up (layer %d includes layer %d)\n", file, FNR, inc, from, to; bad = 1
  }
  END { exit bad }')
}

if [ "${1:-}" = --self-test ]; then
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree"/{include/syncpoint,core,models,actors,runtime/cluster,cli}
  echo '#include <syncpoint/d.hpp>' > "$tree/include/syncpoint/p.hpp"  # public on public: fine
  echo '#include <syncpoint/p.hpp>' > "$tree/core/b.hpp"              # the tree on public: fine
  echo '#include "core/a.hpp"' > "$tree/models/m.hpp"            # down: fine
  echo '#include "runtime/cluster/h.hpp"' > "$tree/cli/c.cpp"    # down: fine
  echo '#include "runtime/j.hpp"' > "$tree/runtime/cluster/h.hpp"  # down: fine
  check "$tree" || { echo "check-layers: self-test: a clean tree was refused"; exit 1; }
  echo '#include "actors/w.hpp"' > "$tree/core/a.hpp"              # up: must be caught
  echo '#include "runtime/cluster/h.hpp"' > "$tree/runtime/j.hpp"  # up: must be caught
  echo '#include "core/a.hpp"' > "$tree/include/syncpoint/q.hpp"      # public on the tree: caught
  echo '#include <runtime/j.hpp>' > "$tree/include/syncpoint/r.hpp"   # the same with <>: caught
  out=$(check "$tree" || true)
  [[ "$out" == *'core/a.hpp:1: #include "actors/w.hpp" runs up'* &&
     "$out" == *'runtime/j.hpp:1: #include "runtime/cluster/h.hpp" runs up'* &&
     "$out" == *'include/syncpoint/q.hpp:1: a public header includes the tree'* &&
     "$out" == *'include/syncpoint/r.hpp:1: a public header includes the tree'* ]] \
    || { echo "check-layers: self-test: an upward include was not caught: $out"; exit 1; }
  echo "check-layers: self-test passed"
  exit 0
fi
check "${1:-$(dirname "$0")/..}" && echo "check-layers: no include runs up"

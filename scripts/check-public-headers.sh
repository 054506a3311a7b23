#!/usr/bin/env bash
# scripts/check-public-headers.sh [SRC]: fails, naming the header, when a public header
# (include/syncpoint/*.hpp) is missing from <syncpoint/syncpoint.hpp> (but those it leaves out
# on purpose, below, with why) or from include/README.md's table, or when either names a header
# that does not exist. `--self-test` checks that a planted header of neither is caught.
set -euo pipefail
# Left out of syncpoint.hpp: LibTorch's (a program that includes them needs its headers), cereal's,
# and the command's (another library, syncpoint::command).
left_out="torch_model.hpp torch_data.hpp torch_loop.hpp protocol_archive.hpp command.hpp"

check() {
  local dir=$1/include/syncpoint readme=$1/include/README.md bad=0 h name
  for h in "$dir"/*.hpp; do
    name=$(basename "$h")
    [ "$name" = syncpoint.hpp ] && continue
    if [[ " $left_out " != *" $name "* ]] && ! grep -q "^#include <syncpoint/$name>" "$dir/syncpoint.hpp"; then
      echo "check-public-headers: <syncpoint/syncpoint.hpp> does not include <syncpoint/$name>"; bad=1
    fi
    grep -q "\`$name\`" "$readme" || { echo "check-public-headers: include/README.md's table does not name $name"; bad=1; }
  done
  for name in $(sed -n 's|^#include <syncpoint/\([a-z_]*\.hpp\)>.*|\1|p' "$dir/syncpoint.hpp"); do
    [ "$name" = version.hpp ] || [ -f "$dir/$name" ] ||
      { echo "check-public-headers: <syncpoint/syncpoint.hpp> includes <syncpoint/$name>, which is not a public header"; bad=1; }
  done
  return $bad
}

if [ "${1:-}" = --self-test ]; then
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  cp -r "$(dirname "$0")/../include" "$tree/"
  check "$tree" > /dev/null || { echo "check-public-headers: self-test: the tree's own headers were refused"; exit 1; }
  echo '#pragma once' > "$tree/include/syncpoint/planted.hpp"
  out=$(check "$tree" || true)
  [[ "$out" == *"does not include <syncpoint/planted.hpp>"* && "$out" == *"does not name planted.hpp"* ]] ||
    { echo "check-public-headers: self-test: a planted header was not caught: $out"; exit 1; }
  echo "check-public-headers: self-test passed"
  exit 0
fi
check "${1:-$(dirname "$0")/..}" && echo "check-public-headers: every public header is in syncpoint.hpp (or left out on purpose) and in include/README.md"

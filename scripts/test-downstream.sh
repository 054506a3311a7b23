#!/usr/bin/env bash
# scripts/test-downstream.sh BUILD: installs BUILD into an empty prefix, copies the examples it
# installed (share/doc/syncpoint/examples) out of it, and builds and runs examples/downstream and
# examples/ there, each a project of its own, against that prefix alone, as projects outside this
# tree would (issue 27; docs/api.md). Fails, naming what is wrong, when:
#   - the prefix holds headers other than include/syncpoint/, or a public header includes a
#     path of the tree or does not compile alone against the prefix;
#   - the CMake package or the .pc file names a path of the source or build tree;
#   - the downstream project or the examples' project does not configure, build or run (a
#     missing usage requirement fails its link: they use CAF through syncpoint::syncpoint alone);
#   - the installed command or a program built with `pkg-config --cflags --libs syncpoint` fails.
# The prefix, the copied examples and their builds are BUILD/downstream/{prefix,examples,build,
# build-examples}: fixed paths, so that ccache finds their objects again.
#
# `--plant header` or `--plant config` spoils the installed prefix first (a public header that
# includes an internal one; a package config without CAF), in BUILD/downstream-KIND: the
# checks must then fail, naming it. The test suite runs both.
set -euo pipefail
plant=
if [ "${1:-}" = --plant ]; then
  plant=${2:-}; shift 2 || true
  case $plant in header|config) ;; *) echo "test-downstream: --plant header|config" >&2; exit 2;; esac
fi
if [ $# -ne 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: scripts/test-downstream.sh [--plant header|config] BUILD   (a configured and built build folder)" >&2
  exit 2
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
WORK=$BUILD/downstream${plant:+-$plant}
PREFIX=$WORK/prefix
fail() { echo "test-downstream: $*" >&2; exit 1; }

rm -rf "$PREFIX" "$WORK/pc"
mkdir -p "$WORK/pc"
cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log"
case $plant in
  header) sed -i '0,/^#include </s||#include "core/saved_state.hpp"\n#include <|' "$PREFIX/include/syncpoint/train.hpp" ;;
  config) sed -i 's/caf_io;caf_core;//' "$PREFIX/lib/cmake/syncpoint/syncpointTargets.cmake"
          grep -q 'INTERFACE_LINK_LIBRARIES "Threads::Threads"' "$PREFIX/lib/cmake/syncpoint/syncpointTargets.cmake" ||
            fail "--plant config: the exported link libraries are not as expected" ;;
esac

# Only the public headers, and nothing in them that reaches back into the tree.
others=$(cd "$PREFIX/include" && find . -mindepth 1 -maxdepth 1 ! -name syncpoint)
[ -z "$others" ] || fail "the prefix's include/ holds more than syncpoint/: $others"
if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("|<(core|models|protocols|actors|runtime|cli|bench|tests|fuzz)/)' \
     "$PREFIX"/include/syncpoint/*.hpp; then
  fail "a public header includes a path of the tree (above)"
fi
# Each header alone, against the prefix and CAF only (LibTorch's two: in the downstream build).
# A prefix planted with a config without CAF has the same headers: the unplanted run checks them.
[ "$plant" = config ] || for h in "$PREFIX"/include/syncpoint/*.hpp; do
  case $h in */torch_*) ;; *) printf '%s\0' "$(basename "$h")" ;; esac
done | xargs -0 -P 2 -n 1 sh -c \
  'echo "#include <syncpoint/$1>" | c++ -std=c++17 -fsyntax-only -I"$0/include" -x c++ - ||
   { echo "test-downstream: <syncpoint/$1> does not compile alone against the prefix" >&2; exit 255; }' "$PREFIX"
if grep -rlF -e "$SRC" -e "$BUILD" "$PREFIX/lib/cmake/syncpoint" "$PREFIX"/lib*/pkgconfig 2>/dev/null; then
  fail "the installed package files above name the source or build tree"
fi

# (each output is read whole before grep: grep -q stops at its match, and a writer still writing would die of SIGPIPE)
grep -q "^syncpoint " <<< "$("$PREFIX/bin/syncpoint" --version)" || fail "the installed command does not run"

# The examples as a user gets them (share/doc/syncpoint/examples), copied out of the prefix:
# examples/downstream and examples/ are projects of their own, with nothing of this tree on
# their paths.
rm -rf "$WORK/examples" "$WORK/build" "$WORK/build-examples"
cp -r "$PREFIX/share/doc/syncpoint/examples" "$WORK/examples"
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
build_project() {  # build_project SOURCE BUILD NAME
  CCACHE_BASEDIR=$WORK cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "${launcher[@]}" > "$2.configure.log" 2>&1 ||
    { cat "$2.configure.log" >&2; fail "$3 does not configure against the prefix"; }
  CCACHE_BASEDIR=$WORK cmake --build "$2" -j 2 > "$2.build.log" 2>&1 ||
    { cat "$2.build.log" >&2; fail "$3 does not build against the prefix"; }
}
build_project "$WORK/examples/downstream" "$WORK/build" "the downstream project"
"$WORK/build/downstream" || fail "the downstream program failed (exit $?)"
build_project "$WORK/examples" "$WORK/build-examples" "the examples' project"
grep -q '^bsp ' <<< "$("$WORK/build-examples/own_node" protocols)" ||
  fail "examples/own_node.cpp, built against the prefix, is not the syncpoint command"
for loop in linear_regression bandit; do  # (the rest run in the tree's ctest, from the same sources)
  "$WORK/build-examples/$loop" > "$WORK/$loop.log" 2>&1 ||
    { cat "$WORK/$loop.log" >&2; fail "examples/$loop.cpp, built against the prefix, failed"; }
done

# pkg-config: a program that names no library but syncpoint.
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
# shellcheck disable=SC2046
c++ -std=c++17 -O1 "$SRC/examples/train.cpp" -o "$WORK/pc/train" $(pkg-config --cflags --libs syncpoint) \
  -Wl,-rpath,"$(pkg-config --variable=libdir syncpoint)" || fail "examples/train.cpp does not build with pkg-config's flags"
(cd "$WORK/pc" && ./train > train.log 2>&1) || { cat "$WORK/pc/train.log" >&2; fail "the pkg-config build of examples/train.cpp failed"; }
echo "test-downstream: the installed package works: headers, CMake package, pkg-config, command"

#!/usr/bin/env bash
# scripts/test-package.sh BUILD: makes the Debian package with `cpack -G DEB` in BUILD/package and
# checks it (issue 27; docs/api.md, "The Debian package"). Fails, naming what is wrong, when:
#   - the file is not syncpoint_<version>_amd64.deb, or lacks the command, the library or the headers;
#   - a library the command or libsyncpoint loads (readelf NEEDED) belongs to a Debian package that
#     Depends does not name;
#   - apt, given an empty package database (nothing installed), cannot resolve the package's
#     dependencies from the archive's lists: `apt-get install -s -o Dir::State::status=/dev/null`.
# The last is how close the test suite comes to "installs on a machine with nothing else": a real
# install into a bare Debian root is scripts/test-deb-chroot.sh (by hand: it downloads ~300 MB).
#
# `--plant depends` drops libtorch's package from the Depends it reads (in BUILD/package-depends):
# the check must then fail, naming it. The test suite runs it.
set -euo pipefail
plant=
if [ "${1:-}" = --plant ]; then
  plant=${2:-}; shift 2 || true
  [ "$plant" = depends ] || { echo "test-package: --plant depends" >&2; exit 2; }
fi
if [ $# -ne 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: scripts/test-package.sh [--plant depends] BUILD   (a configured and built build folder)" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/package${plant:+-$plant}
fail() { echo "test-package: $*" >&2; exit 1; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$version" ] || fail "no project version in $BUILD/CMakeCache.txt"

rm -rf "$OUT"
mkdir -p "$OUT"
deb=$OUT/syncpoint_${version}_amd64.deb
made=$BUILD/package/$(basename "$deb")
if [ "$plant" = depends ] && [ -f "$made" ]; then
  cp "$made" "$deb"  # the unplanted run's package (the test suite runs it first): its Depends are spoiled below
else
  (cd "$BUILD" && cpack -G DEB -B "$OUT" > "$OUT/cpack.log" 2>&1) || { cat "$OUT/cpack.log" >&2; fail "cpack failed"; }
fi
[ -f "$deb" ] || fail "no $(basename "$deb") in $OUT: $(ls "$OUT")"

root=$OUT/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/syncpoint usr/include/syncpoint/syncpoint.hpp usr/include/syncpoint/version.hpp \
         usr/lib/cmake/syncpoint/syncpointConfig.cmake usr/lib/pkgconfig/syncpoint.pc; do
  [ -e "$root/$f" ] || fail "the package lacks /$f"
done
lib=$(ls "$root"/usr/lib/libsyncpoint.so.* 2> /dev/null | head -1 || true)
[ -n "$lib" ] || fail "the package lacks /usr/lib/libsyncpoint.so.*"
command_lib=$(ls "$root"/usr/lib/libsyncpoint-command.so.* 2> /dev/null | head -1 || true)
[ -n "$command_lib" ] || fail "the package lacks /usr/lib/libsyncpoint-command.so.* (the command as a library)"

depends=$(dpkg-deb -f "$deb" Depends)
[ "$plant" != depends ] || depends=$(echo "$depends" | sed 's/libtorch1\.13 ([^)]*),* *//')
echo "test-package: $(basename "$deb"): Depends: $depends"
# Every NEEDED library but the package's own, by the Debian package that holds it on this machine.
missing=()
known=$(ldconfig -p)
for soname in $(readelf -d "$root/usr/bin/syncpoint" "$lib" "$command_lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  case $soname in libsyncpoint.so.* | libsyncpoint-command.so.*) continue ;; esac
  path=$(awk -v s="$soname" '$1 == s && /x86-64/ { print $NF; exit }' <<< "$known")
  [ -n "$path" ] || fail "cannot find $soname on this machine to name its package"
  pkg=$({ dpkg -S "$(readlink -f "$path")" || dpkg -S "$path"; } 2> /dev/null | sed -n '1s/:.*//p') || true
  [ -n "$pkg" ] || fail "no Debian package holds $path ($soname)"
  # The package, or a name it provides (libspdlog1.10 provides libspdlog1.10-fmt9, the name its
  # shlibs file gives dpkg-shlibdeps: the library's ABI with fmt's).
  names=$(printf '%s\n' "$pkg"; dpkg-query -W -f='${Provides}' "$pkg" 2> /dev/null | tr ',' '\n' | sed 's/^ *//; s/[ (].*//')
  echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep -qxF "$names" || missing+=("$pkg ($soname)")
done
[ ${#missing[@]} -eq 0 ] || fail "Depends does not name: ${missing[*]}"

# Resolve the Depends as apt would on a machine where nothing is installed.
ls /var/lib/apt/lists/*_Packages* > /dev/null 2>&1 ||
  fail "apt has no package lists (/var/lib/apt/lists): scripts/setup.sh fetches them"
apt-get install -s -o Dir::State::status=/dev/null -o Debug::NoLocking=1 "$deb" > "$OUT/apt.log" 2>&1 ||
  { cat "$OUT/apt.log" >&2; fail "apt cannot resolve the package's dependencies on an empty system"; }
grep -q '^Inst syncpoint ' "$OUT/apt.log" || { cat "$OUT/apt.log" >&2; fail "apt's plan does not install syncpoint"; }
echo "test-package: apt would install $(grep -c '^Inst ' "$OUT/apt.log") packages on an empty system, syncpoint among them"

# python3-syncpoint, where the build made the Python package: its files, its Depends resolved with
# syncpoint's, and `import syncpoint` from the unpacked files (the extension finds the library
# through its RUNPATH, as it will under /usr).
grep -q '^SYNCPOINT_PYTHON_BUILT:INTERNAL=ON' "$BUILD/CMakeCache.txt" || { echo "test-package: no Python package in this build"; exit 0; }
[ "$plant" != depends ] || exit 0
pydeb=$OUT/python3-syncpoint_${version}_amd64.deb
[ -f "$pydeb" ] || fail "no $(basename "$pydeb") in $OUT: $(ls "$OUT")"
dpkg-deb -x "$pydeb" "$root"
site=$root/usr/lib/python3/dist-packages
for f in __init__.py __init__.pyi __main__.py flat.py local.py py.typed; do
  [ -e "$site/syncpoint/$f" ] || fail "python3-syncpoint lacks /usr/lib/python3/dist-packages/syncpoint/$f"
done
ls "$site"/syncpoint/_syncpoint.cpython-*.so > /dev/null 2>&1 || fail "python3-syncpoint lacks the extension _syncpoint"
apt-get install -s -o Dir::State::status=/dev/null -o Debug::NoLocking=1 "$deb" "$pydeb" > "$OUT/apt-python.log" 2>&1 ||
  { cat "$OUT/apt-python.log" >&2; fail "apt cannot resolve python3-syncpoint's dependencies on an empty system"; }
grep -q '^Inst python3-torch ' "$OUT/apt-python.log" || fail "apt's plan for python3-syncpoint does not install python3-torch"
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
imported=$(cd "$OUT" && PYTHONPATH="$site" "${python:-/usr/bin/python3}" -c \
  'import syncpoint, sys; print(syncpoint.__file__, len(syncpoint.protocols()))') ||
  fail "the unpacked python3-syncpoint does not import"
case $imported in "$site"/syncpoint/__init__.py\ *) ;; *) fail "imported another syncpoint: $imported" ;; esac
echo "test-package: $(basename "$pydeb"): Depends: $(dpkg-deb -f "$pydeb" Depends); imports from the package: $imported"

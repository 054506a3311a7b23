#!/usr/bin/env bash
# bench/expect_refusal.sh WORDS PROGRAM ARGS...: PROGRAM must exit with status 2 and say WORDS
# (on stderr or stdout). A ctest of the benchmarks' command lines (CMakeLists.txt).
set -u
words=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\nexit status %d\n' "$out" "$rc"
[ "$rc" -eq 2 ] || { echo "expected exit status 2"; exit 1; }
grep -qF -- "$words" <<< "$out" || { echo "expected the words: $words"; exit 1; }

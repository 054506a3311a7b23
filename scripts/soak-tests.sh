#!/usr/bin/env bash
# scripts/soak-tests.sh [N]: runs every test that starts processes or runs on the
# real clock N times (default 5), one at a time, while a busy loop keeps one of the
# two cores busy (a loaded machine, as CI's is). Prints each test's pass/fail counts
# and a last line "P passed, F failed" (test runs). Exit 0 only if nothing failed.
#
# The tests are taken from the test binaries: every case of syncpoint_cluster_tests,
# and the cases of syncpoint_tests in the doctest suites "process" (they start the
# syncpoint command) and "real-clock" (their actors run on the real clock). A
# failure's output is kept in build/soak/. Not part of scripts/test.sh: it takes
# about N x 6 minutes (docs/hardening.md, "Soak").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
if ! [[ "$rounds" =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "usage: scripts/soak-tests.sh [N]   (N rounds, 1..9999, default 5; got '$rounds')" >&2
  exit 2
fi
scripts/setup.sh

list() {  # the test case names a doctest binary lists, one a line
  "$@" --list-test-cases --no-version | grep -v -e '^\[doctest\]' -e '^=\{10,\}$' -e '^$'
}
mapfile -t tests < <(list build/syncpoint_tests --test-suite=process,real-clock; list build/syncpoint_cluster_tests)
[ ${#tests[@]} -gt 0 ] || { echo "soak: no tests found in build/" >&2; exit 1; }

# One core busy for the whole soak, ended with the script.
bash -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null || true' EXIT

logs=build/soak
rm -rf "$logs" && mkdir -p "$logs"
declare -A passed failed
for t in "${tests[@]}"; do passed[$t]=0; failed[$t]=0; done
regex_of() { printf '^%s$' "$(printf '%s' "$1" | sed 's/[][\.*^$?+(){}|/]/\\&/g')"; }
start=$(date +%s)
for ((round = 1; round <= rounds; round++)); do
  for i in "${!tests[@]}"; do
    t=${tests[$i]}
    log="$logs/round$round-test$i.log"
    t0=$(date +%s)
    if (cd build && ctest -R "$(regex_of "$t")" --output-on-failure --timeout 900) > "$log" 2>&1 \
       && grep -q "100% tests passed, 0 tests failed out of 1" "$log"; then
      passed[$t]=$((passed[$t] + 1))
      rm -f "$log"
      verdict=pass
    else
      failed[$t]=$((failed[$t] + 1))
      verdict="FAIL ($log)"
    fi
    echo "soak: round $round/$rounds, $((i + 1))/${#tests[@]}: $verdict in $(($(date +%s) - t0)) s: $t"
  done
done

echo
echo "soak: $rounds rounds of ${#tests[@]} tests with one core kept busy, $(( ($(date +%s) - start) / 60 )) min"
printf '%6s %6s  %s\n' pass fail test
total_pass=0 total_fail=0
for t in "${tests[@]}"; do
  printf '%6d %6d  %s\n' "${passed[$t]}" "${failed[$t]}" "$t"
  total_pass=$((total_pass + passed[$t]))
  total_fail=$((total_fail + failed[$t]))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]

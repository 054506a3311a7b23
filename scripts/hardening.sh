#!/usr/bin/env bash
# The hardening steps of the test suite (docs/hardening.md), after scripts/setup.sh:
#  1. build-asan: clang with AddressSanitizer + UndefinedBehaviorSanitizer (and
#     libFuzzer coverage), running the unit and protocol tests;
#  2. a short libFuzzer run of every fuzz target from its seeds and its kept
#     findings (fuzz/regressions/); a new finding fails the step and is kept
#     in build-asan/findings/ to be added to fuzz/regressions/;
#  3. build-tsan: clang with ThreadSanitizer, running the actor tests.
# FUZZ_SECONDS sets each target's run (default 15). Longer runs: docs/hardening.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${FUZZ_SECONDS:-15}

CXX=clang++ cmake -S . -B build-asan -DSYNCPOINT_SANITIZE=address -DSYNCPOINT_FUZZ=ON > build-asan.log 2>&1 \
  || { cat build-asan.log; exit 1; }
cmake --build build-asan -j2 --target syncpoint_tests fuzzers >> build-asan.log 2>&1 || { tail -50 build-asan.log; exit 1; }
echo "hardening: built build-asan (log: build-asan.log)"

# A ctest per test file, each one process; the runs left out for time are named, with why, in
# CMakeLists.txt (SYNCPOINT_ASAN_SKIPS). The Release run has them all.
(cd build-asan && ctest --output-on-failure -j2)

rm -rf build-asan/findings && mkdir -p build-asan/findings
targets=(straggler zipline_csv schedule checkpoint messages)
run_target() {
  local t=$1 corpus=build-asan/corpus/$1 kept=fuzz/regressions/${1//_/-}
  mkdir -p "$corpus"
  [ -d "$kept" ] || kept=""
  # Seeds are written by the target itself; -timeout turns a hang into a finding.
  if SYNCPOINT_FUZZ_SEEDS="$corpus" timeout $((fuzz_seconds + 120)) build-asan/fuzz_"$t" "$corpus" \
       ${kept:+"$kept"} -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=3072 \
       -artifact_prefix=build-asan/findings/"$t"- > build-asan/fuzz_"$t".log 2>&1; then
    echo "hardening: fuzz_$t: $(grep -E '^#[0-9]+.*DONE' build-asan/fuzz_"$t".log | tail -1)"
  else
    echo "hardening: fuzz_$t FAILED (build-asan/fuzz_$t.log):"
    grep -E "ERROR|SUMMARY|invariant|Test unit written" build-asan/fuzz_"$t".log | head -8
    # CI keeps only this output: print each finding so it can be kept from there
    # (base64 -d > fuzz/regressions/<target>/<name>).
    for f in build-asan/findings/"$t"-*; do
      [ -f "$f" ] && echo "hardening: finding $(basename "$f") as base64: $(head -c 4096 "$f" | base64 -w0)"
    done
    return 1
  fi
}
status=0
pids=()
for t in "${targets[@]}"; do  # two at a time: the machine has two cores
  run_target "$t" & pids+=($!)
  if [ ${#pids[@]} -eq 2 ]; then
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done

# 3. build-tsan: clang with ThreadSanitizer, running the tests whose actors run on
# threads, and the canary that shows TSan still sees a race across a message.
CXX=clang++ cmake -S . -B build-tsan -DSYNCPOINT_SANITIZE=thread > build-tsan.log 2>&1 \
  || { cat build-tsan.log; exit 1; }
cmake --build build-tsan -j2 --target syncpoint_tests tsan_canary tsan_canary_unannotated >> build-tsan.log 2>&1 \
  || { tail -50 build-tsan.log; exit 1; }
echo "hardening: built build-tsan (log: build-tsan.log)"
# A ctest per test file; the runs only on the virtual clock are left out (CMakeLists.txt,
# SYNCPOINT_TSAN_SKIPS: TSan has nothing to look at there), and the Release run has them.
(cd build-tsan && ctest --output-on-failure -j2 --timeout 300) || status=1
exit $status

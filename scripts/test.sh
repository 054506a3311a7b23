#!/usr/bin/env bash
# Set up, build, and run the whole test suite (doctest through ctest), then
# the same tests under sanitizers and a short fuzzing run (scripts/hardening.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd build && ctest --output-on-failure -j2 --timeout 600)
# Sanitizers and fuzzing (docs/hardening.md); SYNCPOINT_SKIP_HARDENING=1 skips them locally.
if [ "${SYNCPOINT_SKIP_HARDENING:-0}" != 1 ]; then
  scripts/hardening.sh
fi

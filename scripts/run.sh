#!/usr/bin/env bash
# The main job: set up, build, and compare bsp, asp and ssp on Fashion-MNIST
# with 4 workers and one 4x straggler (virtual clock). Report in ./results.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
./build/syncpoint "$@"

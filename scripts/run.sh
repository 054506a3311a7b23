#!/usr/bin/env bash
# The main job: set up, build, and compare every protocol of the papers and
# the baselines on Fashion-MNIST with 4 workers and one 4x straggler (virtual
# clock). Report: ./results/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
./build/syncpoint "$@"

#!/usr/bin/env bash
# Regenerates docs/fidelity.md: the papers' headline claims against our figures.
#   bench/fidelity.sh --quick   one seed per cell, under 10 minutes on 2 cores
#   bench/fidelity.sh           3 seeds per cell, mean (min–max)
#   bench/fidelity.sh --deep    the deeper-model column: each claim on the MLP and on the ResNet
#                               under one recipe, 3 seeds, one process per core; finished cells
#                               stay in build/fidelity-deep, so a stopped run resumes
# Set-up and build as scripts/run.sh does; then the tables between the
# mode's markers in docs/fidelity.md are replaced (the rest is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
args=("$@")
if [[ " $* " == *" --deep "* && " $* " != *" --jobs "* ]]; then
  args+=(--jobs "$(nproc)")
fi
./build/bench_fidelity "${args[@]}" --out docs/fidelity.md

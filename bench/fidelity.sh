#!/usr/bin/env bash
# Regenerates docs/fidelity.md: the papers' headline claims against our figures.
#   bench/fidelity.sh --quick   one seed per cell, about 2 minutes on 2 cores (after the build)
#   bench/fidelity.sh           3 seeds per cell, mean (min–max), about 6 minutes on 2 cores
#   bench/fidelity.sh --deep    the deeper-model column: each claim on the MLP and on the ResNet
#                               under one recipe, 3 seeds, one process per core; finished cells
#                               stay in build/fidelity-deep, so a stopped run resumes
# The runs of --quick and the full mode are sweeps, in stages (a capped run needs its
# reference's time, a Sync-Switch search its last run): bench_fidelity --plan writes each
# stage's sweep file into build/fidelity-quick (or build/fidelity-full), `syncpoint sweep` runs
# it, and bench_fidelity --from computes the claims. Other options go to every sweep:
#   bench/fidelity.sh --jobs 1                                   one run at a time
#   bench/fidelity.sh --head HOST:4242 --token-file cluster.token  on a cluster's free slots
# Finished runs stay in their stage's folder, so a stopped run resumes; remove the folder to
# start over. Set-up and build as scripts/run.sh does; then the tables between the mode's
# markers in docs/fidelity.md are replaced (the rest is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mode=() sweep=() deep=()
for a in "$@"; do
  case $a in
    --quick) mode=(--quick) ;;
    --deep) deep=(--deep) ;;
    *) sweep+=("$a") ;;
  esac
done
if [[ ${#deep[@]} -gt 0 ]]; then
  args=("$@")
  if [[ " $* " != *" --jobs "* ]]; then
    args+=(--jobs "$(nproc)")
  fi
  exec ./build/bench_fidelity "${args[@]}" --out docs/fidelity.md
fi

dir=build/fidelity-$([[ ${#mode[@]} -gt 0 ]] && echo quick || echo full)
bench/fidelity_runs.sh "$dir" "${mode[@]}" "${sweep[@]}"
./build/bench_fidelity "${mode[@]}" --from "$dir" --out docs/fidelity.md

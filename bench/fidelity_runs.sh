#!/usr/bin/env bash
# The runs of bench/fidelity.sh, as sweeps in stages (bench/fidelity_runs.hpp):
#   bench/fidelity_runs.sh DIR [--quick] [SWEEP OPTIONS...]
# asks `bench_fidelity --plan DIR` for the next stage's sweep file, runs it with
# `syncpoint sweep` into the folder of its name, and again, until every run
# the claims need is in DIR. SWEEP OPTIONS go to every sweep (--jobs N, or
# --head HOST:P with --token-file, --tls ...). Finished runs stay, so a stopped
# run resumes. Needs the build (scripts/setup.sh); prints the wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
mode=() sweep=()
for a in "$@"; do
  if [[ $a == --quick ]]; then mode=(--quick); else sweep+=("$a"); fi
done
start=$SECONDS last=
while true; do
  stage=$(./build/bench_fidelity "${mode[@]}" --plan "$dir")
  [[ -z $stage ]] && break
  if [[ $stage == "$last" ]]; then
    echo "fidelity: $stage did not finish: see ${stage%.toml}/sweep.md" >&2
    exit 1
  fi
  last=$stage
  ./build/syncpoint sweep "$stage" --out "${stage%.toml}" "${sweep[@]}"
done
echo "fidelity: the runs in $dir took $((SECONDS - start)) s" >&2

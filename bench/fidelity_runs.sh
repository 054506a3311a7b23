#!/usr/bin/env bash
# The runs of bench/fidelity.sh, as sweeps in stages (bench/fidelity_runs.hpp):
#   bench/fidelity_runs.sh DIR [--quick] [SWEEP OPTIONS...]
# asks `bench_fidelity --plan DIR` for the next stage's sweep file, runs it with
# `syncpoint sweep` into the folder of its name, and again, until every run
# the claims need is in DIR. SWEEP OPTIONS say where the runs go and go to
# every sweep (--jobs N, or --head HOST:P with --token-file, --tls ...); any
# other option is refused, since it would change the runs. Finished runs stay,
# so a stopped run resumes; runs of another build are removed first. Needs the
# build (scripts/setup.sh); prints the wall time.
set -euo pipefail
if [[ $# -lt 1 || $1 == -* ]]; then
  echo "usage: bench/fidelity_runs.sh DIR [--quick] [--jobs N | --head HOST:P [--token-file F] [--tls --cert C --key K --ca A]]" >&2
  exit 2
fi
dir=$(realpath -m "$1")
shift
cd "$(dirname "$0")/.."
# Only where the runs go: an option that reached the runs would change them.
mode=() sweep=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) mode=(--quick) ;;
    --tls) sweep+=("$1") ;;
    --jobs | --head | --token | --token-file | --cert | --key | --ca)
      [[ $# -ge 2 ]] || { echo "fidelity: $1 needs a value" >&2; exit 2; }
      sweep+=("$1" "$2")
      shift ;;
    --jobs=* | --head=* | --token=* | --token-file=* | --cert=* | --key=* | --ca=*) sweep+=("$1") ;;
    *)
      echo "fidelity: unknown option '$1' (known: --quick, --jobs, --head, --token, --token-file, --tls, --cert, --key, --ca)" >&2
      exit 2 ;;
  esac
  shift
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

#!/usr/bin/env bash
# Local updates on the real clock (docs/performance.md, "Local updates"): a
# head and two nodes on loopback, one worker each (2 workers across
# processes), the MLP on Fashion-MNIST for one epoch: samples/s of bsp and of
# diloco at H = 1, 10 and 50 (inner plain SGD at bsp's rate; outer sgd at
# rate 1 without momentum: the mean model), runs interleaved K times
# (default 3), the medians side by side and each against bsp.
#
#   bench/local_updates.sh [K]
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
[ -x build/syncpoint ] || { echo "bench/local_updates.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
samples_per_s() { sed -n 's/.*samples (\([0-9.]*\)\/s).*/\1/p' | tail -1; }
source bench/cluster_procs.sh
start_head
for n in a b; do
  start_node "$n" 1
done
job() {  # samples/s of one job: protocol options...
  build/syncpoint submit --head "$head" -w 2 --epochs 1 --eval-every 0 --progress=false "$@" 2>&1 | samples_per_s
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A runs
names=(bsp h1 h10 h50)
for ((i = 0; i < repeat; i++)); do
  runs[bsp]+="$(job -p bsp) "
  for h in 1 10 50; do
    runs[h$h]+="$(job -p diloco --local-steps $h --inner-optimizer sgd --inner-lr 0.05 --optimizer sgd --lr 1 --momentum 0) "
  done
done
base=$(echo ${runs[bsp]} | tr ' ' '\n' | median)
printf '%-28s %12s %10s   %s\n' "2 workers across processes" "samples/s" "vs bsp" "runs"
for n in "${names[@]}"; do
  m=$(echo ${runs[$n]} | tr ' ' '\n' | median)
  label=$n; [ "$n" != bsp ] && label="diloco H=${n#h}"
  printf '%-28s %12.0f %9.2fx   %s\n' "$label" "$m" "$(echo "$m / $base" | bc -l)" "${runs[$n]}"
done

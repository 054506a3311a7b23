#!/usr/bin/env bash
# CPU time per sample of a whole job, summed over every process (issue 47):
# syncpoint's head and nodes (`syncpoint launch`, three ranks: the head and
# two nodes, or five for 4 workers) against PyTorch DDP's ranks (bench/ddp.py,
# gloo). User + system time of every process, from the kernel's accounting of
# reaped children (bash's `times`: what /proc/PID/stat holds at exit, summed over
# the tree). Contention does not inflate it, so 2 cores measure it fairly.
#
# Start-up (loading LibTorch, the data, Python's imports) is taken out: each
# job runs for E1 and E2 epochs, and the figure is the difference in CPU over
# the difference in samples. Median of K interleaved runs.
#
#   bench/cpu_per_sample.sh [K] [E1] [E2]      (default 3, 1, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3} e1=${2:-1} e2=${3:-3}
[ -x build/syncpoint ] || { echo "bench/cpu_per_sample.sh: build first" >&2; exit 1; }
/usr/bin/python3 -c "import torch" 2> /dev/null || { echo "bench/cpu_per_sample.sh: needs python3-torch (bench/ddp.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU seconds (user + system) of everything `$@` started and reaped.
cpu_of() {
  ( "$@" > /dev/null 2>&1; times ) | tail -1 | awk '{
      split($1, u, "m"); split($2, s, "m");
      sub("s", "", u[2]); sub("s", "", s[2]);
      print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
# A syncpoint job of `workers` workers, one per node, on a head and that many nodes (launch).
syncpoint_job() {  # protocol workers epochs
  local world=$(($2 + 1)) port=$((20000 + RANDOM % 20000)) r
  for ((r = world - 1; r >= 0; r--)); do
    RANK=$r WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port build/syncpoint launch -- \
      -p "$1" -w "$2" --epochs "$3" --eval-every 0 --progress=false &
  done
  wait
}
ddp_job() { /usr/bin/python3 bench/ddp.py --procs "$1" --epochs "$2"; }
samples() { awk -v e="$1" 'BEGIN { print e * 60000 }'; }
declare -A runs
for ((i = 0; i < repeat; i++)); do
  for w in 2 4; do
    for what in "ddp $w" "syncpoint bsp $w" "syncpoint asp $w"; do
      set -- $what
      if [ "$1" = ddp ]; then
        a=$(cpu_of ddp_job "$2" "$e1"); b=$(cpu_of ddp_job "$2" "$e2")
      else
        a=$(cpu_of syncpoint_job "$2" "$3" "$e1"); b=$(cpu_of syncpoint_job "$2" "$3" "$e2")
      fi
      runs[$what]+="$(awk -v a="$a" -v b="$b" -v n="$(samples $((e2 - e1)))" 'BEGIN { printf "%.2f", (b - a) / n * 1e6 }') "
    done
  done
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "CPU ms per 1000 samples, every process of the job summed (user + system), start-up taken out"
echo "(epochs $e2 minus epochs $e1), median of $repeat interleaved runs; MLP 784-256-10, batch 64 per worker"
printf '| job | workers | CPU ms / 1000 samples | vs DDP |\n|---|---|---|---|\n'
for w in 2 4; do
  d=$(median "${runs[ddp $w]}")
  for what in "ddp $w" "syncpoint bsp $w" "syncpoint asp $w"; do
    m=$(median "${runs[$what]}")
    label=${what% *}; [ "$label" = ddp ] && label="PyTorch DDP (gloo), one process a worker" || label="$label, a head and $w nodes (launch)"
    awk -v l="$label" -v w="$w" -v m="$m" -v d="$d" 'BEGIN { printf "| %s | %d | %.1f | %.2fx |\n", l, w, m, m / d }'
  done
done

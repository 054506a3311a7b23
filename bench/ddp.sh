#!/usr/bin/env bash
# syncpoint against PyTorch DDP (docs/performance.md, "Throughput"): the same
# MLP, data and batch, 2 workers. DDP is 2 processes with gloo on loopback
# (bench/ddp.py, Debian's python3-torch, installed here if missing: the tests
# do not need it); syncpoint is `syncpoint train --clock real -w 2` with bsp
# and with asp. Runs interleaved, K times (default 3); prints the medians and
# the ratios.
#
#   bench/ddp.sh [K]
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-torch python3-numpy
fi
[ -x build/syncpoint ] || { echo "bench/ddp.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
rate() {  # samples/s of one syncpoint run
  build/syncpoint train --clock real -w 2 -p "$1" --epochs 1 --eval-every 0 --progress=false \
    | sed -n 's/.*samples (\([0-9.]*\)\/s).*/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ddp=() bsp=() asp=()
for ((i = 0; i < repeat; i++)); do
  ddp+=("$(/usr/bin/python3 bench/ddp.py --epochs 1 --procs 2)")
  bsp+=("$(rate bsp)")
  asp+=("$(rate asp)")
done
d=$(printf '%s\n' "${ddp[@]}" | median)
b=$(printf '%s\n' "${bsp[@]}" | median)
a=$(printf '%s\n' "${asp[@]}" | median)
echo "Fashion-MNIST MLP 784-256-10, batch 64 per worker, 2 workers, 1 epoch, median of $repeat interleaved runs"
printf '| run | samples/s | vs DDP |\n|---|---|---|\n'
printf '| PyTorch DDP, 2 processes (gloo) | %.0f | 1.00x |\n' "$d"
awk -v d="$d" -v b="$b" -v a="$a" 'BEGIN {
  printf "| syncpoint bsp, 2 workers | %.0f | %.2fx |\n", b, b / d
  printf "| syncpoint asp, 2 workers | %.0f | %.2fx |\n", a, a / d }'
echo "target: syncpoint bsp with 2 workers at least 2x DDP"

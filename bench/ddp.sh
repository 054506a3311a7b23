#!/usr/bin/env bash
# syncpoint against PyTorch DDP (docs/performance.md, "Throughput"): the same
# MLP, data and batch. DDP is N processes with gloo on loopback (bench/ddp.py,
# Debian's python3-torch, installed here if missing: the tests do not need it).
# Rows:
#  - one process: `syncpoint train --clock real` with 2 workers, bsp and asp,
#    against DDP with 2 processes;
#  - across processes: a head and two nodes on loopback (`syncpoint head`,
#    `node`, `submit`), one worker per node (2 workers) or two (4 workers),
#    the PS on the head or as one shard on each node (--ps-placement nodes),
#    against DDP with 2 or 4 processes.
# Runs interleaved, K times (default 3); prints the medians and the ratios.
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
samples_per_s() { sed -n 's/.*samples (\([0-9.]*\)\/s).*/\1/p' | tail -1; }
rate() {  # samples/s of one syncpoint run in one process
  build/syncpoint train --clock real -w 2 -p "$1" --epochs 1 --eval-every 0 --progress=false | samples_per_s
}

# A head and two nodes with `slots` slots each, on loopback; killed by pid on exit.
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
await_line() {  # file, text: wait up to 60 s for a line containing text
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "bench/ddp.sh: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}
start_cluster() {  # slots per node
  build/syncpoint head --host 127.0.0.1 --port 0 > "$tmp/head.out" 2> "$tmp/head.err" & pids+=($!)
  await_line "$tmp/head.out" "listening on"
  head=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$tmp/head.out" | head -1)
  for n in a b; do
    build/syncpoint node --join "$head" --name "$n" --slots "$1" > "$tmp/$n.out" 2> "$tmp/$n.err" & pids+=($!)
    await_line "$tmp/$n.out" "joined the head"
  done
}
stop_cluster() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
remote() {  # protocol, workers, placement: samples/s of one job across processes
  build/syncpoint submit --head "$head" -w "$2" -p "$1" --epochs 1 --eval-every 0 --progress=false \
    --ps-placement "$3" 2>&1 | samples_per_s
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A runs
add() { runs[$1]+="$2 "; }
for ((i = 0; i < repeat; i++)); do
  add ddp2 "$(/usr/bin/python3 bench/ddp.py --epochs 1 --procs 2)"
  add bsp "$(rate bsp)"
  add asp "$(rate asp)"
  start_cluster 1
  for p in bsp asp; do
    add "$p-2-head" "$(remote $p 2 head)"
    add "$p-2-nodes" "$(remote $p 2 nodes)"
  done
  stop_cluster
  add ddp4 "$(/usr/bin/python3 bench/ddp.py --epochs 1 --procs 4)"
  start_cluster 2
  add bsp-4-head "$(remote bsp 4 head)"
  add bsp-4-nodes "$(remote bsp 4 nodes)"
  stop_cluster
done
med() { printf '%s\n' ${runs[$1]} | median; }
row() {  # label, key, DDP key
  awk -v l="$1" -v r="$(med "$2")" -v d="$(med "$3")" 'BEGIN { printf "| %s | %.0f | %.2fx |\n", l, r, r / d }'
}
echo "Fashion-MNIST MLP 784-256-10, batch 64 per worker, 1 epoch, median of $repeat interleaved runs"
printf '| run | samples/s | vs DDP (same worker count) |\n|---|---|---|\n'
row "PyTorch DDP, 2 processes (gloo)" ddp2 ddp2
row "syncpoint bsp, 2 workers, one process" bsp ddp2
row "syncpoint asp, 2 workers, one process" asp ddp2
row "syncpoint bsp, 2 workers on two nodes, PS on the head" bsp-2-head ddp2
row "syncpoint bsp, 2 workers on two nodes, a PS shard on each node" bsp-2-nodes ddp2
row "syncpoint asp, 2 workers on two nodes, PS on the head" asp-2-head ddp2
row "syncpoint asp, 2 workers on two nodes, a PS shard on each node" asp-2-nodes ddp2
row "PyTorch DDP, 4 processes (gloo)" ddp4 ddp4
row "syncpoint bsp, 4 workers on two nodes, PS on the head" bsp-4-head ddp4
row "syncpoint bsp, 4 workers on two nodes, a PS shard on each node" bsp-4-nodes ddp4
echo "targets: bsp with 2 workers in one process at least 2x DDP; across processes at least 1.0x DDP"

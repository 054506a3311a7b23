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
#    against DDP with 2 or 4 processes;
#  - the cross-process rows again over a veth link between two network namespaces
#    shaped with tc to 1 Gbit/s and 10 Gbit/s, where namespaces are permitted
#    (root with CAP_NET_ADMIN); skipped with a message elsewhere or with
#    SYNCPOINT_BENCH_VETH=0.
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

# Runs a command in a network namespace, or here when the first argument is "-".
in_ns() { local ns=$1; shift; if [ "$ns" = - ]; then exec "$@"; else exec ip netns exec "$ns" "$@"; fi; }

# A head and two nodes with `slots` slots each; killed by pid on exit. On loopback by
# default; start_cluster slots host ns_a ns_b puts the head and node a in ns_a, node b in ns_b.
tmp=$(mktemp -d)
pids=()
namespaces=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
await_line() {  # file, text: wait up to 60 s for a line containing text
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "bench/ddp.sh: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}
start_cluster() {  # slots [host ns_a ns_b]
  local host=${2:-127.0.0.1} ns_a=${3:--} ns_b=${4:--}
  in_ns "$ns_a" build/syncpoint head --host "$host" --port 0 --dashboard any > "$tmp/head.out" 2> "$tmp/head.err" & pids+=($!)
  await_line "$tmp/head.out" "listening on"
  head=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$tmp/head.out" | head -1)
  head_ns=$ns_a
  for n in a b; do
    local ns=$ns_a; [ $n = b ] && ns=$ns_b
    in_ns "$ns" build/syncpoint node --join "$head" --name "$n" --slots "$1" > "$tmp/$n.out" 2> "$tmp/$n.err" & pids+=($!)
    await_line "$tmp/$n.out" "joined the head"
  done
}
stop_cluster() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
remote() {  # protocol, workers, placement: samples/s of one job across processes
  in_ns "$head_ns" build/syncpoint submit --head "$head" -w "$2" -p "$1" --epochs 1 --eval-every 0 \
    --progress=false --ps-placement "$3" 2>&1 | samples_per_s
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

# Over a link shaped with tc: two network namespaces, "machines" A (10.77.0.1) and B
# (10.77.0.2), joined by one veth pair whose ends both send at most the rate (tbf). DDP runs
# half its ranks on each; syncpoint the head and node a on A, node b on B. Both move the same
# bytes over the link: DDP's ring all-reduce and syncpoint's pushes and pulls to the other
# machine's shard (with the PS on the head, all of node b's).
if [ "${SYNCPOINT_BENCH_VETH:-1}" = 0 ]; then
  echo "veth rows skipped (SYNCPOINT_BENCH_VETH=0)"; exit 0
fi
if ! { [ "$(id -u)" -eq 0 ] && command -v tc > /dev/null && ip netns add "spddp_probe$$" 2> /dev/null &&
       ip netns del "spddp_probe$$"; }; then
  echo "veth rows skipped: network namespaces are not permitted here (they need root and CAP_NET_ADMIN)"
  exit 0
fi
source bench/veth_link.sh
link_up() {  # rate, burst
  A=spddp_a$$ B=spddp_b$$ va=spva$$ vb=spvb$$
  namespaces=("$A" "$B")
  veth_up "$A" "$B" "$va" "$vb" 10.77.0 "$rate" "$burst"
}
link_down() { for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done; namespaces=(); }
ddp_veth() {  # processes: half on A (with rank 0), half on B
  local half=$(($1 / 2)) master="10.77.0.1:$((20000 + RANDOM % 20000))"
  GLOO_SOCKET_IFNAME=$va timeout 600 ip netns exec "$A" /usr/bin/python3 bench/ddp.py --epochs 1 --procs "$1" \
    --ranks "$(seq -s, 0 $((half - 1)))" --master "$master" > "$tmp/ddp.out" &
  local on_a=$!
  GLOO_SOCKET_IFNAME=$vb timeout 600 ip netns exec "$B" /usr/bin/python3 bench/ddp.py --epochs 1 --procs "$1" \
    --ranks "$(seq -s, "$half" $(($1 - 1)))" --master "$master" > /dev/null
  wait "$on_a"
  cat "$tmp/ddp.out"
}
rates=(1gbit 10gbit)
bursts=(128kb 1280kb)  # about 1 ms at the rate
for ((i = 0; i < repeat; i++)); do
  for r in 0 1; do
    rate=${rates[$r]} burst=${bursts[$r]}
    link_up
    add "$rate-ddp2" "$(ddp_veth 2)"
    start_cluster 1 10.77.0.1 "$A" "$B"
    for p in bsp asp; do
      add "$rate-$p-2-head" "$(remote $p 2 head)"
      add "$rate-$p-2-nodes" "$(remote $p 2 nodes)"
    done
    stop_cluster
    add "$rate-ddp4" "$(ddp_veth 4)"
    start_cluster 2 10.77.0.1 "$A" "$B"
    add "$rate-bsp-4-head" "$(remote bsp 4 head)"
    add "$rate-bsp-4-nodes" "$(remote bsp 4 nodes)"
    stop_cluster
    link_down
  done
done
for rate in "${rates[@]}"; do
  echo
  echo "Two machines joined by a veth link shaped to $rate (tc tbf), median of $repeat interleaved runs"
  printf '| run | samples/s | vs DDP (same worker count) |\n|---|---|---|\n'
  row "PyTorch DDP, 2 processes (one per machine)" "$rate-ddp2" "$rate-ddp2"
  row "syncpoint bsp, 2 workers on two nodes, PS on the head" "$rate-bsp-2-head" "$rate-ddp2"
  row "syncpoint bsp, 2 workers on two nodes, a PS shard on each node" "$rate-bsp-2-nodes" "$rate-ddp2"
  row "syncpoint asp, 2 workers on two nodes, PS on the head" "$rate-asp-2-head" "$rate-ddp2"
  row "syncpoint asp, 2 workers on two nodes, a PS shard on each node" "$rate-asp-2-nodes" "$rate-ddp2"
  row "PyTorch DDP, 4 processes (two per machine)" "$rate-ddp4" "$rate-ddp4"
  row "syncpoint bsp, 4 workers on two nodes, PS on the head" "$rate-bsp-4-head" "$rate-ddp4"
  row "syncpoint bsp, 4 workers on two nodes, a PS shard on each node" "$rate-bsp-4-nodes" "$rate-ddp4"
done

#!/usr/bin/env bash
# The critical path of a bsp round per worker count and placement
# (bench/round_path.py; docs/performance.md, "The round's critical path"):
# bsp, the MLP, 1 epoch with a trace, for 2, 4 and 8 workers:
#  - in one process (`syncpoint train --clock real`);
#  - across processes on loopback: a head and two nodes, half the workers on
#    each, the PS on the head, or a shard on each node (--ps-placement nodes).
# Prints one table per worker count, a column per placement. On a machine with
# fewer cores than processes and workers the columns measure contention too.
#
#   bench/round_path.sh [WORKERS...]     (default: 2 4 8)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/syncpoint ] || { echo "bench/round_path.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(2 4 8)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
await_line() {  # file, text: wait up to 60 s for a line containing text
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "bench/round_path.sh: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
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
job=(-p bsp --epochs 1 --eval-every 0 --progress=false)
for w in "${counts[@]}"; do
  build/syncpoint train --clock real -w "$w" "${job[@]}" -o "$tmp/one-$w" > /dev/null
  start_cluster $(((w + 1) / 2))
  for placement in head nodes; do
    build/syncpoint submit --head "$head" -w "$w" "${job[@]}" --ps-placement "$placement" -o "$tmp/$placement-$w" > /dev/null
  done
  stop_cluster
  echo
  echo "bsp, $w workers, MLP 784-256-10, batch 64, 1 epoch, $(nproc) cores"
  python3 bench/round_path.py "one process=$tmp/one-$w/trace.jsonl" \
    "head + 2 nodes, PS on the head=$tmp/head-$w/trace.jsonl" \
    "head + 2 nodes, a shard per node=$tmp/nodes-$w/trace.jsonl"
done

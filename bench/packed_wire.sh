#!/usr/bin/env bash
# Compressed gradients on a real link (docs/compression.md, "On the wire"):
# bsp with 2 workers across processes, `--compress` each of none, bf16, fp16,
# topk:0.01 and onebit, with the bulk channel packing a compressed push
# (runtime/cluster/dataplane/float_packing.hpp) and without
# (SYNCPOINT_BULK_PACK=0), side by side. Two network namespaces, "machines" A
# (the head and node a) and B (node b), joined by a veth pair shaped with tc
# to RATE (default 1gbit): node b's pushes and pulls cross it. Needs root
# (network namespaces); prints why and stops elsewhere.
#
#   bench/packed_wire.sh [K] [RATE]     (K interleaved runs, median; default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3} rate=${2:-1gbit}
[ -x build/syncpoint ] || { echo "bench/packed_wire.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
if ! { [ "$(id -u)" -eq 0 ] && command -v tc > /dev/null && ip netns add "sppw_probe$$" 2> /dev/null &&
       ip netns del "sppw_probe$$"; }; then
  echo "bench/packed_wire.sh: network namespaces are not permitted here (they need root and CAP_NET_ADMIN)"
  exit 0
fi
tmp=$(mktemp -d)
pids=()
A=sppw_a$$ B=sppw_b$$ va=sppwa$$ vb=sppwb$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
source bench/veth_link.sh
veth_up "$A" "$B" "$va" "$vb" 10.78.0 "$rate" 256kb

await_line() {  # file, text: wait up to 60 s for a line containing text
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "bench/packed_wire.sh: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}
in_ns() { local ns=$1; shift; exec ip netns exec "$ns" "$@"; }
# One job on a fresh head and two nodes; PACK=0 in the environment turns packing off.
job() {  # pack (1 or 0), compressor: prints samples/s and the final accuracy
  local pack=$1 spec=$2
  SYNCPOINT_BULK_PACK=$pack in_ns "$A" build/syncpoint head --host 10.78.0.1 --port 0 > "$tmp/head.out" 2>&1 & pids+=($!)
  await_line "$tmp/head.out" "listening on"
  local head; head=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$tmp/head.out" | head -1)
  SYNCPOINT_BULK_PACK=$pack in_ns "$A" build/syncpoint node --join "$head" --name a --slots 1 > "$tmp/a.out" 2>&1 & pids+=($!)
  await_line "$tmp/a.out" "joined the head"
  SYNCPOINT_BULK_PACK=$pack in_ns "$B" build/syncpoint node --join "$head" --name b --slots 1 > "$tmp/b.out" 2>&1 & pids+=($!)
  await_line "$tmp/b.out" "joined the head"
  ip netns exec "$A" build/syncpoint submit --head "$head" -w 2 -p bsp --epochs 1 --eval-every 0 --progress=false \
    --compress "$spec" -o "$tmp/run" > /dev/null 2>&1
  python3 -c "import json; s = json.load(open('$tmp/run/summary.json')); print(s['samples_per_s'], s['final_accuracy'])"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=()
  rm -rf "$tmp/run"
}
specs=(none bf16 fp16 topk:0.01 onebit)
declare -A rate_of acc_of
for ((i = 0; i < repeat; i++)); do
  for spec in "${specs[@]}"; do
    for pack in 1 0; do
      job "$pack" "$spec" > "$tmp/result"  # in this shell: its processes are killed on exit
      read -r r a < "$tmp/result"
      rate_of[$spec-$pack]+="$r "; acc_of[$spec-$pack]+="$a "
    done
  done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "bsp, 2 workers (head + node a on one side of a $rate veth link, node b on the other), MLP, 1 epoch, median of $repeat"
printf '| --compress | samples/s, packed | samples/s, as floats | packed / floats | accuracy, packed | accuracy, as floats |\n'
printf '|---|---|---|---|---|---|\n'
for spec in "${specs[@]}"; do
  p=$(median "${rate_of[$spec-1]}") f=$(median "${rate_of[$spec-0]}")
  awk -v s="$spec" -v p="$p" -v f="$f" -v ap="$(median "${acc_of[$spec-1]}")" -v af="$(median "${acc_of[$spec-0]}")" \
    'BEGIN { printf "| %s | %.0f | %.0f | %.2fx | %.4f | %.4f |\n", s, p, f, p / f, ap, af }'
done
echo "(none is never packed: its row shows the noise between the two columns)"

#!/usr/bin/env bash
# The fidelity quick sweep (the runs of bench/fidelity.sh --quick) three ways on
# this machine, side by side: `--jobs 1`, `--jobs 2`, and `--head` on a head and
# two nodes of one slot each (loopback, free ports). Prints each wall time, the
# ratios, and whether the three give the same summaries, byte for byte. One run each.
#   bench/fidelity_sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
work=$(mktemp -d /tmp/fidelity-sweep.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Waits (at most 60 s: a deadline for a hang) until FILE holds TEXT.
await() {
  for _ in $(seq 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "fidelity_sweep: no '$2' in $1:" >&2
  cat "$1" >&2
  exit 1
}

# Runs the quick runs into DIR with the sweep options given; prints the seconds.
timed() {
  local dir=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  # 30 minutes: a deadline for a hang (each way takes 2 to 4 minutes on 2 cores).
  timeout --kill-after=30 1800 bench/fidelity_runs.sh "$dir" --quick "$@" > "$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "fidelity_sweep: --jobs 1 ..." >&2
j1=$(timed "$work/jobs1" --jobs 1)
echo "fidelity_sweep: --jobs 2 ..." >&2
j2=$(timed "$work/jobs2" --jobs 2)

echo "fidelity_sweep: a head and two nodes ..." >&2
./build/syncpoint head --port 0 --dashboard any > "$work/head.log" 2>&1 &
pids+=($!)
await "$work/head.log" "listening on"
head=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/head.log" | head -1 | cut -d' ' -f3)
for n in a b; do
  TMPDIR=$work ./build/syncpoint node --join "$head" --slots 1 --name "$n" > "$work/node-$n.log" 2>&1 &
  pids+=($!)
done
await "$work/node-a.log" "joined the head"
await "$work/node-b.log" "joined the head"
cl=$(timed "$work/cluster" --head "$head")

same=0 differ=0
for f in "$work"/jobs1/stage-*/cells/*/summary.json; do
  rel=${f#"$work"/jobs1/}
  if cmp -s "$f" "$work/jobs2/$rel" && cmp -s "$f" "$work/cluster/$rel"; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "fidelity_sweep: $rel differs" >&2
  fi
done
count() { find "$1" -path '*/cells/*' -name summary.json | wc -l; }
if [[ $(count "$work/jobs1") != $(count "$work/jobs2") || $(count "$work/jobs1") != $(count "$work/cluster") ]]; then
  echo "fidelity_sweep: the three ways made $(count "$work/jobs1"), $(count "$work/jobs2") and $(count "$work/cluster") runs" >&2
  differ=$((differ + 1))
fi
stages=$(ls -d "$work"/jobs1/stage-*/ | wc -l)
echo
echo "The fidelity quick sweep: $((same + differ)) runs in $stages stages, wall time on this machine ($(nproc) cores)"
printf '  %-42s %7.1f s   1.00x\n' "--jobs 1" "$j1"
printf '  %-42s %7.1f s   %.2fx of --jobs 1\n' "--jobs 2" "$j2" "$(ratio "$j1" "$j2")"
printf '  %-42s %7.1f s   %.2fx of --jobs 1, %.2fx of --jobs 2\n' "--head, two nodes of one slot (loopback)" "$cl" \
  "$(ratio "$j1" "$cl")" "$(ratio "$j2" "$cl")"
if [[ $differ -eq 0 ]]; then
  echo "  summaries: the same bytes all three ways ($same runs)"
else
  echo "  summaries: $differ of $((same + differ)) runs differ"
  exit 1
fi

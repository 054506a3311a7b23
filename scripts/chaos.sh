#!/usr/bin/env bash
# scripts/chaos.sh [options]: a cluster trained on while processes are killed
# (issue 59; docs/hardening.md, "Chaos"). A soak, not part of scripts/test.sh.
#
# On this machine, on loopback: a head with --state, NODES nodes (2 slots each),
# and for each protocol an elastic job of WORKERS workers (a lost node's workers
# come back on the node started again) with PS shards on the nodes.
#   1. Fault-free runs of the job, one per seed (SEEDS), give the reference:
#      final accuracy (its spread over the seeds) and samples/s (the first
#      seed's run, run last, and the fastest seed's, both shown).
#   2. The same job with the first seed while, every INTERVAL s, one random
#      process (a node, or the head) is SIGKILLed and started again 2 s later,
#      until the job ends. Nodes and the submitter wait for a lost head
#      (--head-wait), and the head, started again on its --state, carries the
#      job on from its newest checkpoint.
# It prints, per protocol: faults injected (head, nodes), whether the job
# finished, its final accuracy against the reference's spread, its samples/s
# against the fault-free run's with the same seed, the work redone (samples computed again after a
# restart from a checkpoint) and the checkpoint restarts, and whether every
# file in the output folder reads whole. Exit 0 only if every target is met:
# every job finishes, accuracy within the spread (widened by --accuracy-slack),
# >= 80% of the samples/s, no checkpoint restart for a node's loss, nothing torn.
#
# Options (defaults in brackets):
#   --build DIR [build]  --protocols "bsp asp"  --nodes 4  --workers 8
#   --interval 10  --seeds "1 2"  --replicas 1  --checkpoint-every 2
#     (a head's loss goes on from the newest checkpoint: with a fault every 10 s, one in 5 of them
#     the head's, Young's interval sqrt(2 x cost x mean time between) is about 2 s; a checkpoint
#     every 1 s cost these jobs nothing measurable against every 5 s: docs/hardening.md, "Chaos")
#   --accuracy-slack 0.01  --keep (keep the work folder)
#   --no-rereplicate (a lost shard copy is not made again: --ps-rereplicate is off)
#   -- JOB OPTIONS [--model mlp --dataset fashion-mnist --epochs 48: about 3 minutes a run on 2 cores]
set -euo pipefail
source "$(dirname "$0")/process-helpers.sh"
cd "$(dirname "$0")/.."

build=build protocols="bsp asp" nodes=4 workers=8 interval=10 seeds="1 2" replicas=1
checkpoint_every=2 slack=0.01 keep="" rereplicate=(--ps-rereplicate)
job=(--model mlp --dataset fashion-mnist --epochs 48)
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --protocols) protocols=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --checkpoint-every) checkpoint_every=$2; shift 2 ;;
    --accuracy-slack) slack=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --no-rereplicate) rereplicate=(); shift ;;
    --) shift; job=("$@"); break ;;
    *) echo "chaos: unknown option '$1' (see the head of scripts/chaos.sh)" >&2; exit 2 ;;
  esac
done
for n in "$nodes" "$workers" "$interval"; do
  [[ "$n" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "chaos: --nodes, --workers and --interval take 1..9999, got '$n'" >&2; exit 2; }
done
bin=$(realpath "$build")/syncpoint
[ -x "$bin" ] || { echo "chaos: no $bin (build first: scripts/test.sh or cmake --build $build)" >&2; exit 2; }

work=$(mktemp -d /tmp/syncpoint-chaos.XXXXXX)
declare -A pid=()  # by process name: head, n1, n2, ...
cleanup() {
  for p in "${pid[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  [ -n "${submit_pid:-}" ] && kill -9 "$submit_pid" 2> /dev/null || true
  [ -n "$keep" ] && echo "chaos: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
# A number of a summary.json ("samples": 123 -> 123).
figure() { grep -o "\"$2\": [^,}]*" "$1/summary.json" | head -1 | cut -d' ' -f2; }

port=$(free_port)
start() {  # NAME: the head, or node nN, in the background, appending to its log
  local name=$1
  if [ "$name" = head ]; then
    "$bin" head --port "$port" --dashboard off --state "$work/state" --rejoin-wait 30 >> "$work/head.log" 2>&1 &
  else
    "$bin" node --join "127.0.0.1:$port" --name "$name" --slots 2 --wait-for-head 30 --head-wait 120 \
      >> "$work/$name.log" 2>&1 &
  fi
  pid[$name]=$!
}
start head
await "grep -q 'listening on' '$work/head.log'" 60 || { cat "$work/head.log" >&2; exit 1; }
for i in $(seq "$nodes"); do start "n$i"; done
await "[ \"\$(cat \"$work\"/n*.log | grep -c 'joined the head')\" -ge $nodes ]" 60 ||
  { tail -n 5 "$work"/n*.log >&2; echo "chaos: the nodes did not join" >&2; exit 1; }

# SUBMIT NAME OUT SEED PROTOCOL: the job, in the background ($submit_pid), its stderr in NAME.err.
submit() {
  "$bin" submit --head "127.0.0.1:$port" --head-wait 120 --protocol "$4" --workers "$workers" --seed "$3" \
    --elastic --ps-placement nodes --ps-replicas "$replicas" "${rereplicate[@]}" --checkpoint-every "$checkpoint_every" \
    --checkpoint-dir "$work/ck-$1" --out "$2" "${job[@]}" > "$work/$1.out" 2> "$work/$1.err" &
  submit_pid=$!
}

# Whether every file a run wrote reads whole: summary.json and run.json as JSON, each trace line as JSON.
whole() {
  python3 - "$1" << 'EOF'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
for name in ("summary.json", "run.json"):
    json.loads((d / name).read_text())
for line in (d / "trace.jsonl").read_text().splitlines():
    json.loads(line)
EOF
}

failed=0
table="| protocol | faults (head, nodes) | finished | accuracy (fault-free, seeds) | samples/s (vs fault-free, same seed) | work redone (head+nodes) | checkpoint restarts (node losses) | files whole |\n|---|---|---|---|---|---|---|---|"
for proto in $protocols; do
  # 1. The reference, fault-free, one run per seed.
  accs=() fast_rate=0 same_rate=0
  seed=${seeds%% *}  # the chaos run's
  # The chaos run's seed last: its reference then starts on nodes that hold the data, as the chaos
  # run does (the first run after the nodes' start pays their loading of it).
  for s in ${seeds#"$seed"} $seed; do
    t0=$(now_ms)
    submit "ref-$proto-$s" "$work/ref-$proto-$s" "$s" "$proto"
    if ! wait "$submit_pid"; then
      cat "$work/ref-$proto-$s.err" >&2
      echo "chaos: the fault-free $proto run (seed $s) failed" >&2
      exit 1
    fi
    accs+=("$(figure "$work/ref-$proto-$s" final_accuracy)")
    # samples/s over the submitter's wall time (start and evaluation included), as for the chaos run
    r=$(awk -v n="$(figure "$work/ref-$proto-$s" samples)" -v w="$(($(now_ms) - t0))" \
          'BEGIN { printf "%.0f", 1000 * n / (w > 0 ? w : 1) }')
    [ "$r" -gt "$fast_rate" ] && fast_rate=$r
    [ "$s" = "$seed" ] && same_rate=$r
  done
  lo=$(printf '%s\n' "${accs[@]}" | sort -g | head -1)
  hi=$(printf '%s\n' "${accs[@]}" | sort -g | tail -1)
  # 2. The same job, first seed, a process killed every $interval s until it ends.
  out="$work/chaos-$proto"
  submit "chaos-$proto" "$out" "$seed" "$proto"
  heads=0 node_kills=0
  start_s=$SECONDS
  t0=$(now_ms)
  while kill -0 "$submit_pid" 2> /dev/null; do
    # The next fault's time, or the job's end if it comes first (its wall time is the rate's).
    next=$((SECONDS + interval))
    while [ $SECONDS -lt $next ] && kill -0 "$submit_pid" 2> /dev/null; do sleep 0.2; done
    kill -0 "$submit_pid" 2> /dev/null || break
    victim=$([ $((RANDOM % (nodes + 1))) -eq 0 ] && echo head || echo "n$((RANDOM % nodes + 1))")
    kill -9 "${pid[$victim]}" 2> /dev/null || true
    wait "${pid[$victim]}" 2> /dev/null || true
    if [ "$victim" = head ]; then heads=$((heads + 1)); else node_kills=$((node_kills + 1)); fi
    echo "chaos: $proto: t=$((SECONDS - start_s)) s: killed $victim" >&2
    sleep 2
    start "$victim"
  done
  rc=0
  wait "$submit_pid" || rc=$?
  wall_ms=$(($(now_ms) - t0))
  finished=no acc=- rate=- whole_files=no
  if [ "$rc" -eq 0 ] && [ -f "$out/summary.json" ]; then
    finished=yes
    acc=$(figure "$out" final_accuracy)
    # samples/s over the wall time of the whole job, restarts and waits included
    rate=$(awk -v s="$(figure "$out" samples)" -v w="$wall_ms" 'BEGIN { printf "%.0f", 1000 * s / (w > 0 ? w : 1) }')
    whole "$out" && whole_files=yes
  fi
  # Work redone: at each restart, the samples reported last before it minus those of the checkpoint
  # gone on from: named by a node loss's restart; after the head's, the newest one the job reported
  # (a restored job goes on from its newest checkpoint). "head+nodes" samples.
  redone=$(awk '
    function ck_of(line) { match(line, /checkpoint-[0-9]+/); return substr(line, RSTART + 11, RLENGTH - 11) + 0 }
    /samples=/ { match($0, /samples= *[0-9]+/); last = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", last); last += 0 }
    /checkpoint at .*checkpoint-[0-9]+\.bin/ { newest = ck_of($0) }
    /checkpoint-[0-9]+\.bin/ && (/goes on from|restarting from/) { ck = ck_of($0); if (last > ck) nodes += last - ck }
    /the head is back: job [0-9]+ reattached/ { if (last > newest) head += last - newest }
    END { printf "%d+%d", head, nodes }' "$work/chaos-$proto.err")
  restarts=$(grep -c "restarting from the newest checkpoint" "$work/chaos-$proto.err" || true)
  # Against the fault-free run of the same seed (the issue's measure), and the fastest seed's too.
  # (3 places, cut not rounded: 0.7967 is not shown as 0.80, and the target is checked on it so)
  share=$([ "$rate" = - ] && echo - || awk -v a="$rate" -v b="$same_rate" 'BEGIN { printf "%.3f", int(1000 * a / b) / 1000 }')
  fast=$([ "$rate" = - ] && echo - || awk -v a="$rate" -v b="$fast_rate" 'BEGIN { printf "%.3f", int(1000 * a / b) / 1000 }')
  table+="\n| $proto | $((heads + node_kills)) ($heads, $node_kills) | $finished (exit $rc) | $acc ($lo..$hi) | $rate/s ($share x $same_rate/s; fastest seed: $fast x $fast_rate/s) | $redone samples | $restarts | $whole_files |"
  ok=1
  [ "$finished" = yes ] || ok=0
  [ "$acc" = - ] || awk -v a="$acc" -v l="$lo" -v s="$slack" 'BEGIN { exit !(a >= l - s) }' || ok=0
  [ "$share" = - ] || awk -v x="$share" 'BEGIN { exit !(x >= 0.8) }' || ok=0
  [ "$restarts" -eq 0 ] || ok=0
  [ "$whole_files" = yes ] || ok=0
  [ "$ok" = 1 ] || failed=1
done
echo
echo "scripts/chaos.sh: $nodes nodes x 2 slots, $workers workers, --ps-replicas $replicas ${rereplicate[*]}, checkpoints every" \
     "$checkpoint_every s, a kill every $interval s; job: ${job[*]}"
echo -e "$table"
echo
[ "$failed" = 0 ] && echo "chaos: every target met" || echo "chaos: a target missed (see the table)"
exit "$failed"

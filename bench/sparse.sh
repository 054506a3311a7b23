#!/usr/bin/env bash
# Sparse tables across processes (docs/sparse.md, "Figures"): the ctr model
# with a 10^7-key x 32 table (1.28 GB of rows when every key is touched) on
# 3 PS shards, each on a node process with one worker, a head coordinating,
# all on this machine (loopback); against the same model pushed densely.
#
# A dense push of the 10^7-row table is 1.28 GB a step each way, which no
# run here could sustain: the dense twin (`ctr:table=dense`) runs at a
# reduced vocabulary of KEYS_SMALL keys, beside the sparse model on the same
# data, and its bytes per step are scaled to 10^7 keys by the count of floats
# (the MLP's and the table's) it would carry. Printed side by side:
#   - bytes per step (pushed + pulled, from the trace) and samples/s;
#   - AUC and log loss at equal samples (sparse and dense on the same data);
#   - each process's peak resident memory (VmHWM) and the rows its shard kept.
#
# And a fourth run that fills the table: ids near uniform (clicks' zipf=0.01)
# over FILL examples, so that most of the 10^7 keys get a row, for the
# memory each process holds with the whole table on the shards (FILL=0: not run).
#
#   [FILL=N] bench/sparse.sh [TRAIN] [KEYS] [KEYS_SMALL]   (defaults 60000, 10000000, 100000; FILL 1200000)
set -euo pipefail
cd "$(dirname "$0")/.."
train=${1:-60000} keys=${2:-10000000} small=${3:-100000} fill=${FILL:-1200000}
fields=26 width=32
[ -x build/syncpoint ] || { echo "bench/sparse.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
source bench/cluster_procs.sh
hwm() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }  # MB

# One job on a fresh head and three nodes, a shard and a worker on each.
# Prints: samples/s, bytes/step, auc, logloss, the head's and each node's VmHWM (MB), and each
# shard's rows and their bytes (0 for the dense twin: no table).
job() {  # model, dataset, name[, examples]
  local model=$1 data=$2 name=$3 examples=${4:-$train}
  start_head --dashboard any
  for n in a b c; do
    start_node "$n" 1
  done
  build/syncpoint submit --head "$head" -w 3 -p bsp --model "$model" --dataset "$data" --train-limit "$examples" \
    --test-limit 10000 --batch 256 --lr 0.05 --momentum 0 --epochs 1 --eval-every 0 --ps-placement nodes \
    --ps-shards 3 --progress=false -o "$tmp/$name" > "$tmp/$name.submit" 2>&1 ||
    { echo "bench/sparse.sh: the $name job failed:" >&2; cat "$tmp/$name.submit" >&2; exit 1; }
  python3 - "$tmp/$name" <<'EOF'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
pushes = bytes_ = 0
for line in open(d + "/trace.jsonl"):
    e = json.loads(line)
    if e.get("kind") in ("push", "pull"):
        bytes_ += e.get("value", 0)
    if e.get("kind") == "push":
        pushes += 1
m = s.get("final_metrics") or {}
print(s["samples_per_s"], bytes_ / max(1, pushes), m.get("auc", -1), m.get("logloss", -1), end=" ")
EOF
  for p in "${pids[@]}"; do printf '%s ' "$(hwm "$p")"; done
  # The rows and bytes each shard's table held at the end, from the head's /metrics.
  python3 - "$url" <<'EOF'
import re, sys, time, urllib.request
for _ in range(600):
    text = urllib.request.urlopen(sys.argv[1] + "metrics").read().decode()
    if 'state="done"' in text:
        break
    time.sleep(0.1)
def per_shard(name):
    got = {}
    for m in re.finditer(name + r'\{[^}]*shard="(\d+)"[^}]*\} (\S+)', text):
        got[int(m.group(1))] = float(m.group(2))
    return [got.get(k, 0) for k in range(3)]
print(*per_shard("syncpoint_table_rows"), *per_shard("syncpoint_table_bytes"), end="")
EOF
  echo
  stop_all
}

vocab_small=$(( (small + fields - 1) / fields ))
# (In this shell, not $(...): its processes are killed on exit.)
job "ctr:fields=$fields,width=$width,hidden=64" "clicks:keys=$keys,fields=$fields" sparse_big > "$tmp/big"
job "ctr:fields=$fields,width=$width,hidden=64" "clicks:keys=$small,fields=$fields" sparse_small > "$tmp/sparse"
job "ctr:fields=$fields,width=$width,hidden=64,table=dense,vocab=$vocab_small" "clicks:keys=$small,fields=$fields" \
  dense_small > "$tmp/dense"
echo "-1 -1 -1 -1 0 0 0 0 0 0 0 0 0 0" > "$tmp/fill"
[ "$fill" -gt 0 ] &&
  job "ctr:fields=$fields,width=$width,hidden=64" "clicks:keys=$keys,fields=$fields,zipf=0.01" sparse_fill "$fill" > "$tmp/fill"
big=$(cat "$tmp/big") sparse=$(cat "$tmp/sparse") dense=$(cat "$tmp/dense") filled=$(cat "$tmp/fill")
python3 - "$big" "$sparse" "$dense" "$filled" "$keys" "$small" "$fields" "$width" "$train" "$fill" <<'EOF'
import sys
big, sparse, dense, filled = (list(map(float, a.split())) for a in sys.argv[1:5])
keys, small, fields, width, train, fill = map(int, sys.argv[5:11])
# The dense twin carries the MLP and its table each way: scaled to `keys` by floats.
vocab_small = -(-small // fields)
vocab_big = -(-keys // fields)
table_small = fields * vocab_small * width
mlp = dense[1] / 2 / 4 - table_small          # floats a push carries, less the table
dense_big = dense[1] * (mlp + fields * vocab_big * width) / (mlp + table_small)
print(f"ctr, {fields} fields x width {width}, bsp, 3 workers, 3 shards on 3 node processes and a head; "
      f"{train} examples, batch 256")
print("| run | keys | samples/s | bytes/step | AUC | log loss | VmHWM head / nodes (MB) | rows a shard | MB of rows a shard |")
print("|---|---|---|---|---|---|---|---|---|")
def row(name, k, r):
    print(f"| {name} | {k:,} | {r[0]:.0f} | {r[1] / 1e6:.3f} MB | {r[2]:.4f} | {r[3]:.4f} | "
          f"{int(r[4])} / {' '.join(str(int(x)) for x in r[5:8])} | {' '.join(str(int(x)) for x in r[8:11])} | "
          f"{' '.join(f'{x / 1e6:.1f}' for x in r[11:14])} |")
row("sparse", keys, big)
row("sparse", small, sparse)
row("dense", small, dense)
if fill > 0:
    row(f"sparse, ids near uniform, {fill:,} examples", keys, filled)
print(f"dense at {keys:,} keys (scaled by floats): {dense_big / 1e6:.1f} MB a step; "
      f"sparse carries {dense_big / big[1]:.0f}x fewer bytes")
print(f"at {small:,} keys, equal samples: AUC sparse - dense = {sparse[2] - dense[2]:+.4f}")
print("(rows a shard: the dashboard's last reading of the running job, up to a second before its end)")
EOF

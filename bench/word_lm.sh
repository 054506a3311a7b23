#!/usr/bin/env bash
# A word-level language model on a real text (docs/sparse.md, "Figures"):
# tinylm on Debian's fortunes word by word (--dataset text:tokens=words), its
# token embedding a sparse table of the PS (embed=table) against the same
# model holding it densely, the same job and seed otherwise. Printed side by
# side: the held-out loss (nats a word) and perplexity, samples/s, and bytes
# per step (pushed + pulled, from the trace).
#
#   bench/word_lm.sh [EPOCHS] [VOCAB] [CONTEXT]   (defaults 2, 4096, 32)
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-2} vocab=${2:-4096} context=${3:-32}
[ -x build/syncpoint ] || { echo "bench/word_lm.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
[ -e /usr/share/games/fortunes ] || { echo "bench/word_lm.sh: needs Debian's fortunes (apt-get install fortunes)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # embed
  build/syncpoint train --model "tinylm:layers=2,width=64,heads=4,embed=$1" --dataset "text:tokens=words,vocab=$vocab" \
    --context "$context" --batch 32 --optimizer adam --lr 0.003 --epochs "$epochs" --eval-every 0 -w 2 -p bsp \
    --ps-shards 2 --clock real --seed 1 --progress=false -o "$tmp/$1" > "$tmp/$1.log" 2>&1 ||
    { echo "bench/word_lm.sh: the embed=$1 run failed:" >&2; cat "$tmp/$1.log" >&2; exit 1; }
  python3 - "$tmp/$1" <<'EOF'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
pushes = moved = 0
for line in open(d + "/trace.jsonl"):
    e = json.loads(line)
    if e.get("kind") in ("push", "pull"):
        moved += e.get("value", 0)
    if e.get("kind") == "push":
        pushes += 1
m = s["final_metrics"]
print(m["loss"], m["perplexity"], s["samples_per_s"], moved / max(1, pushes), s["samples"])
EOF
}

read -r t_loss t_ppl t_rate t_bytes t_samples < <(run table)
read -r d_loss d_ppl d_rate d_bytes d_samples < <(run dense)
python3 - "$vocab" "$context" "$t_loss" "$t_ppl" "$t_rate" "$t_bytes" "$t_samples" "$d_loss" "$d_ppl" "$d_rate" "$d_bytes" "$d_samples" <<'EOF'
import sys
vocab, context = sys.argv[1], sys.argv[2]
t = [float(x) for x in sys.argv[3:8]]
d = [float(x) for x in sys.argv[8:13]]
print("tinylm (2 layers, width 64) on fortunes word by word: vocabulary %s, context %s, bsp, 2 workers, 2 PS shards" % (vocab, context))
print("%-22s %12s %12s %12s %14s %10s" % ("token embedding", "loss (nats)", "perplexity", "samples/s", "bytes/step", "samples"))
for name, r in (("table (embed=table)", t), ("dense", d)):
    print("%-22s %12.4f %12.1f %12.0f %14.0f %10.0f" % (name, r[0], r[1], r[2], r[3], r[4]))
print("table / dense: loss %+.4f nats, samples/s %.2fx, bytes/step %.2fx (%.0f fewer bytes)"
      % (t[0] - d[0], t[2] / d[2], t[3] / d[3], d[3] - t[3]))
EOF

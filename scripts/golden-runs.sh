#!/usr/bin/env bash
# scripts/golden-runs.sh BIN OUT: the runs whose bytes a refactoring must not
# change: the README's main job, every protocol trained with its final model
# saved, and a checkpointed run resumed from a middle checkpoint (virtual clock
# throughout, about a minute). Run it with the binary before and after a change,
# into the same OUT (so that paths match), and compare:
#
#   scripts/golden-runs.sh old/syncpoint /tmp/golden && mv /tmp/golden /tmp/golden-old
#   scripts/golden-runs.sh build/syncpoint /tmp/golden
#   diff -r -q /tmp/golden-old /tmp/golden    # only run.json and index.html: the version
#
# Traces, summaries, models and checkpoints must be the same bytes.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ]; then
  echo "usage: scripts/golden-runs.sh BIN OUT   (BIN: a syncpoint binary; OUT: a folder, replaced)" >&2
  exit 2
fi
BIN=$(realpath "$1"); OUT=$(realpath -m "$2")
rm -rf "$OUT"; mkdir -p "$OUT"
(cd "$OUT" && "$BIN" > main.log 2> main.err)  # the README main job: ./results
job=(--workers 4 --model mlp --straggler 3:x4 --epochs 1 --iter-cost 10 --progress=false)
for p in bsp asp ssp elastic-bsp wbsp wbsp-overlap r2sp sync-switch dssp; do
  "$BIN" train --protocol "$p" "${job[@]}" --save-model "$OUT/model-$p.bin" --out "$OUT/train-$p" > /dev/null
done
"$BIN" train --protocol ssp "${job[@]}" --checkpoint-every 1 --checkpoint-dir "$OUT/ck" --checkpoint-keep 0 \
  --save-model "$OUT/ck-whole.bin" --out "$OUT/ck-whole" > /dev/null
files=("$OUT"/ck/checkpoint-*.bin)
mkdir -p "$OUT/from" && cp "${files[${#files[@]} / 2]}" "$OUT/from/"
"$BIN" train --protocol ssp "${job[@]}" --checkpoint-every 1 --checkpoint-dir "$OUT/from" --checkpoint-keep 0 \
  --resume "$OUT/from" --save-model "$OUT/ck-resumed.bin" --out "$OUT/ck-resumed" > /dev/null
echo "runs: ${#files[@]} checkpoints; resumed from $(basename "${files[${#files[@]} / 2]}")"

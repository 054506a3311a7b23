#!/usr/bin/env bash
# The local-update protocols' claims against our figures (docs/fidelity.md,
# "Local updates"): tinylm on Debian's fortunes, 8 workers, the virtual clock,
# seeds 1, 2, 3 (SEEDS=1 for one), as sweeps on every core:
#   (a) DiLoCo at H = 50 against bsp at equal samples: loss and bytes;
#   (b) Streaming DiLoCo (F = 4) against DiLoCo: peak link use at the same loss;
#   (c) one worker 4x slower: time to a target loss, async-diloco against
#       diloco, elastic-bsp and bsp, with no link cost and with the 100 MB/s link;
#   (d) DiLoCo's outer gradients in int4 against fp32: loss.
# Then bench/fidelity_local.py writes the tables into docs/fidelity.md between
# its markers. About 40 minutes on 2 cores after the build.
#
#   bench/fidelity_local.sh [OUT]        (default build/fidelity-local; finished cells stay)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/fidelity-local}
[ -x build/syncpoint ] || { echo "bench/fidelity_local.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
seeds=${SEEDS:-1,2,3}
# 8 workers of batch 16 windows of 32 characters; 1 epoch of fortunes is about 560 inner steps a
# worker (11 DiLoCo rounds at H = 50), and the runs take 2; 10 ms charged a step (measured once, so that
# the run is the same anywhere). bsp and elastic-bsp step AdamW on the PS at the inner rate of the
# local-update protocols; those take the outer Nesterov step (lr 0.7, momentum 0.9).
common=(--model tinylm --dataset text --context 32 --batch 16 --workers 8 --epochs 2 --test-limit 256
        --eval-every 0.05 --iter-cost 10 --seeds "$seeds" --progress=false)
adam=(--optimizer adamw --lr 0.002)
inner=(--inner-lr 0.002 --local-steps 50)
link=(--ps-bandwidth 100e6)
run() {  # a sweep into $out/NAME, with the rest of the arguments
  local name=$1
  shift
  build/syncpoint sweep "${common[@]}" "$@" --out "$out/$name" > /dev/null
}
run bsp --grid protocol=bsp "${adam[@]}" "${link[@]}"
run diloco --grid protocol=diloco,streaming-diloco "${inner[@]}" "${link[@]}"
run int4 --grid protocol=diloco --compress int4 "${inner[@]}" "${link[@]}"
run straggler-sync --grid protocol=bsp,elastic-bsp "${adam[@]}" --straggler 7:x4
run straggler-local --grid protocol=diloco,async-diloco "${inner[@]}" --straggler 7:x4
run straggler-sync-link --grid protocol=bsp,elastic-bsp "${adam[@]}" --straggler 7:x4 "${link[@]}"
run straggler-local-link --grid protocol=diloco,async-diloco "${inner[@]}" --straggler 7:x4 "${link[@]}"
python3 bench/fidelity_local.py "$out" docs/fidelity.md

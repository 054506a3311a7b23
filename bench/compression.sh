#!/usr/bin/env bash
# The compression lab (docs/compression.md): every compressor with bsp, ssp
# and asp, three seeds each, on the virtual clock with a 400 MB/s PS link and
# a 4x straggler; then a table of traffic saved and accuracy lost against
# uncompressed, per compressor and protocol (bench/compression_table.py).
#
#   bench/compression.sh [mlp|resnet|both] [OUT]     (default mlp, /tmp/syncpoint-compression)
#
# The MLP grid (54 cells of 3 epochs) takes about 5 minutes on 2 cores; the
# ResNet's (18 cells of 2 epochs on 12,000 examples) about 5.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-mlp}
out=${2:-/tmp/syncpoint-compression}
[ -x build/syncpoint ] || { echo "bench/compression.sh: build first (scripts/run.sh or cmake --build build)" >&2; exit 1; }
compressors=none,fp16,bf16,topk:0.01,randomk:0.01,onebit
common=(--workers 4 --straggler 3:x4 --ps-bandwidth 400e6 --latency 0.2 --seeds 1,2,3 --progress=false)
if [ "$which" = mlp ] || [ "$which" = both ]; then
  build/syncpoint sweep --grid compress=$compressors --grid protocol=bsp,ssp,asp "${common[@]}" \
    --model mlp --epochs 3 --eval-every 0.25 --target-accuracy 0.86 --out "$out/mlp" > /dev/null
  python3 bench/compression_table.py "$out/mlp" 0.86
fi
if [ "$which" = resnet ] || [ "$which" = both ]; then
  build/syncpoint sweep --grid compress=$compressors --grid protocol=bsp "${common[@]}" \
    --model resnet --epochs 2 --train-limit 12000 --test-limit 2000 --eval-every 0.25 --target-accuracy 0.75 \
    --out "$out/resnet" > /dev/null
  python3 bench/compression_table.py "$out/resnet" 0.75
fi

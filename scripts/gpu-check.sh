#!/usr/bin/env bash
# Issue 44's GPU check, on a machine with a GPU, a pip PyTorch and no network: builds against
# that LibTorch with ../shared/gpu/build.sh, runs the tests labelled gpu, and bench_devices
# (1 GPU worker against a plain LibTorch loop, resnet18 at batch 128 and the cnn at batch 64;
# 2 and 4 workers sharing the GPU; the host copies of a step), and a scripted mlp against the built-in
# one on cuda (issue 60). From the project root:
#   scripts/gpu-check.sh DEBS [BUILD_DIR]
# DEBS: the .deb files of ../shared/gpu/fetch-debs.sh, plus libspdlog-dev libspdlog1.10
# libfmt-dev libfmt9 libcli11-dev (its list predates them: docs/gpu.md, "Checking on a GPU
# machine"). GPU_SCRIPTS: the folder of build.sh and check.sh (default ../shared/gpu). Output
# goes to stdout and to $OUT/gpu-check.log where OUT is set. Takes about 3 minutes on an H100
# machine with 16 cores.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DEBS [BUILD_DIR]" >&2; exit 2; }
DEBS=$1
B=${2:-build/gpu}
S=${GPU_SCRIPTS:-../shared/gpu}
[ -x "$S/build.sh" ] || { echo "gpu-check: no $S/build.sh (set GPU_SCRIPTS)" >&2; exit 2; }
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; exec > >(tee "$OUT/gpu-check.log") 2>&1; fi
T0=$(date +%s)
say() { echo; echo "=== [$(($(date +%s) - T0)) s] $*"; }

say "the machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi: none"
echo "cores $(nproc); $(g++ --version | head -1)"
python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.is_available())'

say "build"
JOBS=${JOBS:-$(nproc)} EXTRA_CMAKE_ARGS="-DSYNCPOINT_BENCHMARKS=ON ${EXTRA_CMAKE_ARGS:-}" timeout 900 \
  "$S/build.sh" "$DEBS" "$B" syncpoint_cli syncpoint_gpu_tests bench_devices || exit 1
# shellcheck disable=SC1091  # written by build.sh
. "$B/gpu-env.sh"
failed=0

say "the tests labelled gpu"
(cd "$B" && timeout 600 ./syncpoint_gpu_tests) || failed=1

say "bench_devices: resnet18, batch 128"
timeout 600 "$B/bench_devices" --device cuda:0 --model resnet18 --batch 128 --samples 12800 --repeat 3 || failed=1
say "bench_devices: cnn, batch 64"
timeout 300 "$B/bench_devices" --device cuda:0 --model cnn --batch 64 --samples 12800 --repeat 3 || failed=1
say "the mlp scripted in PyTorch (--model script:FILE.pt) against the built-in mlp on cuda (issue 60)"
script_dir=$(mktemp -d)
cat >"$script_dir/make_mlp.py" <<'PY'
import sys, torch, torch.nn.functional as F
class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 10)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))
torch.manual_seed(1)
torch.jit.script(Mlp()).save(sys.argv[1])
PY
"${SYNCPOINT_PYTHON:-python3}" "$script_dir/make_mlp.py" "$script_dir/mlp.pt" || failed=1
for i in 1 2 3; do  # alternated pairs: 4 workers, asp, 8 s each
  for m in mlp "script:$script_dir/mlp.pt"; do
    out=$script_dir/run-$i-${m%%:*}
    timeout 60 "$B/syncpoint" train --model "$m" --device cuda --workers 4 --protocol asp --clock real --max-time 8 \
      --dataset synthetic --seed 1 --progress=false --out "$out" >"$out.log" 2>&1 || { tail -5 "$out.log"; failed=1; }
    "${SYNCPOINT_PYTHON:-python3}" -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[2], round(d['samples_per_s']), 'samples/s, accuracy', d.get('final_accuracy'))" "$out/summary.json" "${m%%:*}" || failed=1
  done
done
rm -rf "$script_dir"
say "done (failed: $failed)"
exit $failed

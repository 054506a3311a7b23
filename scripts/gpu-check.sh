#!/usr/bin/env bash
# Issue 44's GPU check, on a machine with a GPU, a pip PyTorch and no network: builds against
# that LibTorch with ../shared/gpu/build.sh, runs the tests labelled gpu, and bench_devices
# (1 GPU worker against a plain LibTorch loop, resnet18 at batch 128 and the cnn at batch 64;
# 2 and 4 workers sharing the GPU; the host copies of a step). From the project root:
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
say "done (failed: $failed)"
exit $failed

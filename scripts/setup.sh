#!/usr/bin/env bash
# Installs the Debian packages syncpoint needs (only those missing), then
# configures and builds it in ./build with -j2. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ccache zlib1g-dev libcaf-dev libtorch-dev libeigen3-dev
          libcereal-dev rapidjson-dev doctest-dev libboost-dev libopenblas0-pthread dataset-fashion-mnist
          fortunes  # --dataset text's default corpus: about 2.6 MB of English (/usr/share/games/fortunes)
          libdeflate-dev  # gzip data sets, inflated whole (models/dataset.cpp)
          libjemalloc-dev  # the command's allocator (docs/performance.md)
          libtomlplusplus-dev  # sweep spec files (docs/sweeps.md)
          prometheus-cpp-dev  # the dashboard's /metrics (docs/dashboard.md)
          libspdlog-dev  # the head's and node's event log (cli/log.cpp)
          libcli11-dev  # the command lines (cli/option_table.cpp, bench/args.hpp)
          pkgconf  # the installed package's .pc file, tried by scripts/test-downstream.sh
          doxygen  # the API reference (cmake --build build --target docs), checked by the test suite
          openmpi-bin  # mpirun, which starts syncpoint launch in tests/test_cluster_launch.cpp (no MPI library is linked)
          slurm-wlm munge  # a Slurm of the test's own, which starts syncpoint launch (scripts/test-slurm.sh)
          libyaml-cpp-dev  # the Kubernetes manifests, read by tests/test_deploy.cpp
          podman runc netavark aardvark-dns iptables mmdebstrap python3-yaml  # the image and the Job as containers (scripts/test-container.sh)
          universal-ctags  # where each function ends, for scripts/long-code.sh
          python3-dev pybind11-dev python3-torch python3-pytest  # the Python package and its tests (python/, docs/python.md)
          clang libclang-rt-14-dev lld)  # clang and lld: the sanitizer and fuzz builds (scripts/hardening.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
# The package lists: for what is missing, and for the Debian package's check, which asks apt to
# resolve its Depends on an empty system (scripts/test-package.sh).
if [ ${#missing[@]} -gt 0 ] || ! ls /var/lib/apt/lists/*_Packages* > /dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CI runs tests only: the benchmarks (bench/) are not built there (docs/hardening.md, "Time").
benchmarks=ON
[ "${CI:-}" = true ] && benchmarks=OFF
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSYNCPOINT_BENCHMARKS=$benchmarks > build.log 2>&1 \
  || { cat build.log; exit 1; }
cmake --build build -j2 >> build.log 2>&1 || { tail -50 build.log; exit 1; }
echo "setup: built in ./build (log: build.log)"

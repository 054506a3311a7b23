#include "models/blas.hpp"

#include <atomic>
#include <cstdio>
#include <dlfcn.h>

namespace syncpoint {

namespace {

// OpenBLAS's own entry points, when it is the BLAS (looked up, not linked:
// the reference BLAS has none of them).
template <class F>
F* openblas_symbol(const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
}

blas_library find_blas() {
  blas_library b;
  if (torch_uses_mkl()) {  // MKL is thread-safe, and LibTorch calls it rather than libblas.so.3
    b.name = "MKL (inside LibTorch)";
    return b;
  }
  auto parallel = openblas_symbol<int()>("openblas_get_parallel");
  auto config = openblas_symbol<char*()>("openblas_get_config");
  if (!parallel || !config) {
    // The reference BLAS keeps no state between calls.
    b.name = "reference or other BLAS";
    if (void* f = dlsym(RTLD_DEFAULT, "sgemm_")) {
      Dl_info info{};
      if (dladdr(f, &info) && info.dli_fname)
        b.path = info.dli_fname;
    }
    return b;
  }
  std::string version = config();  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Zen SINGLE_THREADED"
  version = version.substr(0, version.find(' ', version.find(' ') + 1));
  // 0: serial, 1: pthreads, 2: OpenMP. Only the pthreads build is known to
  // lock around its buffers for every caller (a serial build may have been
  // made with USE_LOCKING=1, which it does not report: taken as unsafe).
  int kind = parallel();
  b.name = version + (kind == 0 ? " (serial build)" : kind == 1 ? " (pthreads build)" : " (OpenMP build)");
  b.concurrent_calls_safe = kind == 1;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(parallel), &info) && info.dli_fname)
    b.path = info.dli_fname;
  return b;
}

std::mutex blas_mutex;

}  // namespace

const blas_library& blas() {
  static const blas_library found = find_blas();
  return found;
}

std::unique_lock<std::mutex> blas_turn() {
  if (blas().concurrent_calls_safe)
    return {};
  std::unique_lock<std::mutex> turn(blas_mutex, std::try_to_lock);
  if (turn)
    return turn;
  static std::atomic<bool> said{false};  // said when two models first want it at once
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "syncpoint: the BLAS in use, %s at %s, is not safe to call from two threads at once, so "
                 "models compute one at a time; install libopenblas0-pthread (scripts/setup.sh does) to "
                 "compute in parallel\n",
                 blas().name.c_str(), blas().path.c_str());
  turn.lock();
  return turn;
}

void set_blas_threads(int n) {
  if (auto set = openblas_symbol<void(int)>("openblas_set_num_threads"))
    set(n);
}

}  // namespace syncpoint

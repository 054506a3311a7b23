// The BLAS under LibTorch. Debian's LibTorch calls whatever libblas.so.3 the
// alternatives system points to; pip's carries MKL inside, which is safe to
// call from any number of threads. Not every BLAS may be called from two
// threads at once: OpenBLAS's serial build shares its work buffers without a
// lock, and two workers computing gradients together then corrupt each other
// (measured: losses of 10^9 from a model at 85% accuracy). The models take
// blas_turn() around their work, which serializes it only on such a BLAS.
//
//   auto turn = blas_turn();  // held while torch runs matrix products
//   loss.backward();
#pragma once

#include <mutex>
#include <string>

namespace syncpoint {

struct blas_library {
  std::string name;  // "OpenBLAS 0.3.21 (pthreads build)", "MKL (inside LibTorch)", or "reference or other BLAS"
  std::string path;  // the shared object, when known
  bool concurrent_calls_safe = true;
};

/// Whether the LibTorch linked carries MKL as its BLAS (defined beside the torch models).
bool torch_uses_mkl();

/// The BLAS this process calls, found once.
const blas_library& blas();

/// A turn at the BLAS: holds a process-wide lock if blas() is not safe for
/// concurrent calls, else nothing. The first time two threads want it at
/// once on such a BLAS, it says so on stderr, with the package that lifts it.
std::unique_lock<std::mutex> blas_turn();

/// Threads the BLAS itself may use per call (OpenBLAS's own pool). The
/// runtime uses 1, as for LibTorch: parallelism comes from the workers.
void set_blas_threads(int n);

}  // namespace syncpoint

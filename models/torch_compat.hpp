// Where the LibTorch versions syncpoint builds with differ: Debian's 1.13 (the
// default) and pip's or an archive's 2.x (README, "Build with the PyTorch you
// have"). Everything else in models/ uses the API both share; what differs is
// here, and only here.
//
//   autocast_scope bf16(on);        // forward and backward in bf16 on CUDA while it lives
//   bool cuda = built_with_cuda();  // the LibTorch has CUDA, whatever devices are visible
#pragma once

#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

namespace syncpoint {

#define SYNCPOINT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

/// CUDA autocast to bf16 on this thread while it lives (nothing when `on` is
/// false). Autocast state is thread-local, and a worker's gradient runs on
/// one thread from the forward to the backward, so the scope covers both.
class autocast_scope {
 public:
  explicit autocast_scope(bool on) : on_(on) {
    if (!on_)
      return;
#if SYNCPOINT_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~autocast_scope() {
    if (!on_)
      return;
#if SYNCPOINT_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();  // the casts of this step's weights: next step's differ
  }
  autocast_scope(const autocast_scope&) = delete;
  autocast_scope& operator=(const autocast_scope&) = delete;

 private:
  bool on_;
};

/// Whether this LibTorch carries CUDA (libtorch_cuda is loaded), even with no
/// device visible: what tells "built without CUDA" from "no GPU here".
inline bool built_with_cuda() {
  return at::detail::getCUDAHooks().hasCUDART();
}

}  // namespace syncpoint

// The baseline a framework must be compared with: a single-process LibTorch
// training loop (same MLP, same batch, torch::optim::SGD), no actors.
#pragma once

#include <syncpoint/dataset.hpp>

namespace syncpoint::bench {

struct plain_result {
  double samples_per_s = 0;
  double final_loss = 0;
};

plain_result plain_torch_loop(const dataset& train, int batch, int64_t samples, double lr,
                              double momentum, uint64_t seed);

}  // namespace syncpoint::bench

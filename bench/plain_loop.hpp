// The baseline a framework must be compared with: a single-process LibTorch
// training loop (same MLP, same batch, torch::optim::SGD), no actors.
#pragma once

#include <syncpoint/dataset.hpp>

#include <string>

namespace syncpoint::bench {

struct plain_result {
  double samples_per_s = 0;
  double final_loss = 0;
};

plain_result plain_torch_loop(const dataset& train, int batch, int64_t samples, double lr,
                              double momentum, uint64_t seed);

/// The same loop for a built-in network (models/torch_nets.hpp) made for
/// `train`'s examples, on `device` ("cpu", "cuda:0"): batches gathered on the
/// host, through pinned memory to a device, as a syncpoint worker's go.
plain_result plain_model_loop(const std::string& model, const dataset& train, int batch, int64_t samples, double lr,
                              double momentum, uint64_t seed, const std::string& device);

/// What a GPU worker's copies of `values` floats cost on `device`, in µs, the
/// median of `repeat`: device to host (its gradient) and host to device (the
/// pulled weights), from pinned and from pageable host memory.
struct copy_times {
  double to_host_pinned = 0, to_host_pageable = 0, to_device_pinned = 0, to_device_pageable = 0;
};
copy_times time_copies(int64_t values, const std::string& device, int repeat);

}  // namespace syncpoint::bench

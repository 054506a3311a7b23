// A small network with BatchNorm for the tests of buffers: 784 -> 32 ->
// BatchNorm1d -> ReLU -> 10, registered as "test-bn-net" (25,450 parameters
// and 64 running statistics).
#pragma once

#include <syncpoint/torch_model.hpp>

namespace syncpoint::testing {

struct bn_net : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(784, 32))};
  torch::nn::BatchNorm1d bn{register_module("bn", torch::nn::BatchNorm1d(32))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(32, 10))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(bn(fc1(x.flatten(1))))); }
};

/// Registers the net once; returns its name.
inline std::string bn_net_model() {
  static bool registered = register_model("test-bn-net", [] { return wrap_module(std::make_shared<bn_net>()); });
  (void)registered;
  return "test-bn-net";
}

}  // namespace syncpoint::testing

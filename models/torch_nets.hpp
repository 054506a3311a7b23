// The built-in LibTorch networks as plain modules, for what must run them
// without syncpoint's wrapper: the benchmarks' plain LibTorch loop.
//
//   auto net = make_torch_net("resnet18", in);  // in: shape 3x32x32, 10 classes
//   auto logits = net.forward(x);               // x: [batch, 3, 32, 32]
#pragma once

#include <syncpoint/torch_model.hpp>

namespace syncpoint {

struct torch_net {
  std::shared_ptr<torch::nn::Module> module;
  torch_model::forward_fn forward;
};

/// The built-in network `name` ("mlp", "cnn", "resnet", "resnet18") for `in`'s
/// examples, on the CPU; throws std::invalid_argument as make_model does.
torch_net make_torch_net(const std::string& name, const model_input& in);

}  // namespace syncpoint

// An autoencoder on Fashion-MNIST and its loss, a level-(b) loop
// (<syncpoint/torch_loop.hpp>): a registered module ("autoencoder"), the
// mean squared error of its reconstruction, and the job's data set as the
// batch source (loop "reconstruct"), evaluated by the held-out reconstruction
// error ("mse"). Used by examples/autoencoder.cpp, and by examples/own_node.cpp,
// the program that runs it on a cluster.
//
//   register_autoencoder();
//   cfg.model = "autoencoder"; cfg.loop = "reconstruct";
#pragma once

#include <syncpoint/torch_loop.hpp>  // brings in LibTorch: only for files that define a module or loop

#include <algorithm>
#include <vector>

// 784 -> 128 -> 32 -> 128 -> 784: [batch, 1, 28, 28] in, [batch, 784] out.
struct autoencoder : torch::nn::Module {
  torch::nn::Linear enc1{register_module("enc1", torch::nn::Linear(784, 128))};
  torch::nn::Linear enc2{register_module("enc2", torch::nn::Linear(128, 32))};
  torch::nn::Linear dec1{register_module("dec1", torch::nn::Linear(32, 128))};
  torch::nn::Linear dec2{register_module("dec2", torch::nn::Linear(128, 784))};

  torch::Tensor forward(const torch::Tensor& x) {
    auto code = enc2(torch::relu(enc1(x.flatten(1))));
    return dec2(torch::relu(dec1(torch::relu(code))));
  }
};

inline void register_autoencoder() {
  syncpoint::register_model("autoencoder", [] { return syncpoint::wrap_module(std::make_shared<autoencoder>()); });
  syncpoint::torch_loop_spec spec;
  spec.loss = [](syncpoint::torch_model& m, const syncpoint::torch_batch& b) {
    return torch::mse_loss(m.forward(b.data), b.data.flatten(1));
  };
  spec.evaluate = [](syncpoint::torch_model& m, const syncpoint::dataset& test, const syncpoint::loop_context&) {
    torch::NoGradGuard no_grad;
    auto n = std::min<int64_t>(test.size, 2000);
    auto x = torch::from_blob(const_cast<float*>(test.x.data()), {n, 1, 28, 28}).to(m.device());  // where m computes
    return std::vector<syncpoint::metric>{{"mse", torch::mse_loss(m.forward(x), x.flatten(1)).item<double>()}};
  };
  syncpoint::register_torch_loop("reconstruct", spec);
}

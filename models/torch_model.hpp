// Bring any torch::nn::Module to syncpoint. Its parameters are re-seated as
// views into one contiguous buffer, so loading weights is one copy and the
// gradient is written by autograd straight into the caller's buffer.
//
//   struct net : torch::nn::Module {
//     torch::nn::Linear fc{register_module("fc", torch::nn::Linear(784, 10))};
//     torch::Tensor forward(const torch::Tensor& x) { return fc(x); }  // x: [B, 784]
//   };
//   syncpoint::register_model("my-net", [] { return syncpoint::wrap_module(std::make_shared<net>()); });
//
// Only files that wrap their own module include this header (it pulls in LibTorch).
#pragma once

#include "models/model.hpp"

#include <torch/torch.h>

namespace syncpoint {

class torch_model : public model {
 public:
  /// `forward` maps a [batch, 784] float tensor to [batch, classes] logits.
  using forward_fn = std::function<torch::Tensor(const torch::Tensor&)>;

  torch_model(std::shared_ptr<torch::nn::Module> module, forward_fn forward);

  size_t size() const override;
  /// Torch's default init (uniform in +-1/sqrt(fan_in)), seeded.
  std::vector<float> initial_weights(uint64_t seed) override;
  void load(const float* w) override;
  /// Re-seats the parameters as views of `w`: no copy.
  void adopt(std::shared_ptr<const std::vector<float>> w) override;
  void local_step(const float* grad, float lr) override;
  std::vector<float> current_weights() const override;
  float gradient(const batch_view& b, float* grad) override;
  void predict(const batch_view& b, int64_t* labels) override;

 private:
  std::shared_ptr<torch::nn::Module> module_;
  forward_fn forward_;
  std::vector<torch::Tensor> params_;
  void seat_parameters();  // makes params_ views of flat_

  torch::Tensor flat_;  // every parameter, contiguous; params_ are views of it
  std::shared_ptr<const std::vector<float>> adopted_;  // flat_'s storage after adopt()
  torch::Tensor own_;  // storage of our own
};

template <class Module>
std::unique_ptr<model> wrap_module(std::shared_ptr<Module> m) {
  return std::make_unique<torch_model>(m, [m](const torch::Tensor& x) { return m->forward(x); });
}

}  // namespace syncpoint

/// \file
/// Bring any torch::nn::Module to syncpoint. Its parameters are re-seated as
/// views into one contiguous buffer, so loading weights is one copy and the
/// gradient is written by autograd straight into the caller's buffer.
///
/// ```cpp
/// struct net : torch::nn::Module {
///   torch::nn::Linear fc{register_module("fc", torch::nn::Linear(784, 10))};
///   torch::Tensor forward(const torch::Tensor& x) { return fc(x.flatten(1)); }  // x: [B, 1, 28, 28]
/// };
/// syncpoint::register_model("my-net", [] { return syncpoint::wrap_module(std::make_shared<net>()); });
/// ```
///
/// Only files that wrap their own module include this header (it pulls in LibTorch).
#pragma once

#include <syncpoint/model.hpp>

#include <torch/torch.h>

namespace syncpoint {

/// A torch::nn::Module as a syncpoint model: its parameters and float buffers flattened
/// into one vector. wrap_module() makes one for register_model.
class torch_model : public model {
 public:
  /// `forward` maps a [batch, example shape...] float tensor to [batch,
  /// classes] logits. It runs in training mode for gradients and in
  /// evaluation mode (module->eval()) for predictions.
  using forward_fn = std::function<torch::Tensor(const torch::Tensor&)>;

  /// Wraps `module`, whose forward pass is `forward`.
  torch_model(std::shared_ptr<torch::nn::Module> module, forward_fn forward);

  /// The parameters, then the float buffers (BatchNorm's running mean and
  /// variance; an integer buffer such as its batch count stays the worker's).
  size_t size() const override;
  size_t buffers() const override;
  /// Torch's default init (uniform in +-1/sqrt(fan_in)), seeded; a
  /// normalization layer's parameters and every buffer as constructed (1, 0).
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
  std::vector<torch::Tensor> buffers_;  ///< views of buffer_store_
  std::vector<bool> keep_initial_;      ///< per parameter: a normalization layer's (not drawn)
  std::vector<float> constructed_;      ///< every value as constructed: parameters, then buffers
  void seat_parameters();  ///< makes params_ views of flat_
  void load_buffers(const float* b);
  int64_t parameter_count() const { return flat_.numel(); }

  torch::Tensor buffer_store_;  ///< the buffers, always the model's own (the forward pass writes them)

  torch::Tensor flat_;  ///< every parameter, contiguous; params_ are views of it
  std::shared_ptr<const std::vector<float>> adopted_;  ///< flat_'s storage after adopt()
  torch::Tensor own_;  ///< storage of our own
};

/// A model of `m`, whose forward() maps a batch to logits: what register_model's factory returns.
template <class Module>
std::unique_ptr<model> wrap_module(std::shared_ptr<Module> m) {
  return std::make_unique<torch_model>(m, [m](const torch::Tensor& x) { return m->forward(x); });
}

}  // namespace syncpoint

/// \file
/// Bring any torch::nn::Module to syncpoint. Its parameters are re-seated as
/// views into one contiguous buffer, so loading weights is one copy and the
/// gradient is written by autograd straight into that buffer's twin: on the
/// CPU the caller's, on a GPU one on the device, copied to the host once.
///
/// ```cpp
/// struct net : torch::nn::Module {
///   torch::nn::Linear fc;
///   net(int64_t features, int64_t classes) : fc(register_module("fc", torch::nn::Linear(features, classes))) {}
///   torch::Tensor forward(const torch::Tensor& x) { return fc(x.flatten(1)); }  // x: [B, shape...]
/// };
/// syncpoint::register_model("my-net", [](const syncpoint::model_input& in) {
///   int64_t features = 1;
///   for (auto d : in.shape) features *= d;
///   return syncpoint::wrap_module(std::make_shared<net>(features, in.classes));
/// });
/// ```
///
/// Only files that wrap their own module include this header (it pulls in LibTorch).
#pragma once

#include <syncpoint/model.hpp>

#include <torch/torch.h>

namespace syncpoint {

/// A batch for a loss of your own (<syncpoint/torch_loop.hpp>): `data` (the
/// inputs, [batch, ...]) and `target` (anything else; may be undefined).
using torch_batch = torch::data::Example<>;

/// A torch::nn::Module as a syncpoint model: its parameters and float buffers flattened
/// into one vector. wrap_module() makes one for register_model.
class torch_model : public model {
 public:
  /// `forward` maps a [batch, example shape...] float tensor to [batch,
  /// classes] logits. It runs in training mode for gradients and in
  /// evaluation mode (module->eval()) for predictions.
  using forward_fn = std::function<torch::Tensor(const torch::Tensor&)>;

  /// A loss of the model on a batch, as a scalar tensor (a loop's own,
  /// <syncpoint/torch_loop.hpp>).
  using loss_fn = std::function<torch::Tensor(torch_model& m, const torch_batch& b)>;

  /// A loss of the logits and the labels, as a scalar tensor: what gradient(batch_view) differentiates.
  using criterion_fn = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

  /// Wraps `module`, whose forward pass is `forward`.
  torch_model(std::shared_ptr<torch::nn::Module> module, forward_fn forward);
  ~torch_model() override;

  /// The parameters, then the float buffers (BatchNorm's running mean and
  /// variance; an integer buffer such as its batch count stays the worker's).
  size_t size() const override;
  size_t buffers() const override;
  /// Each parameter's length, in named_parameters() order.
  std::vector<size_t> tensor_sizes() const override;
  /// Torch's default init (uniform in +-1/sqrt(fan_in)), seeded; a
  /// normalization layer's parameters and every buffer as constructed (1, 0).
  std::vector<float> initial_weights(uint64_t seed) override;
  void load(const float* w) override;
  /// Re-seats the parameters as views of `w`: no copy.
  void adopt(std::shared_ptr<const std::vector<float>> w) override;
  void local_step(const float* grad, float lr) override;
  std::vector<float> current_weights() const override;
  /// The mean cross-entropy of the logits forward() gives (or the criterion set).
  float gradient(const batch_view& b, float* grad) override;
  /// Replaces the cross-entropy of gradient(batch_view) (--loss script:FILE.pt sets a scripted one).
  void set_criterion(criterion_fn c) { criterion_ = std::move(c); }
  /// As above, for `loss` on `b` instead: b's tensors go to the model's
  /// device first, and `loss(*this, b)` is differentiated.
  float gradient(const loss_fn& loss, const torch_batch& b, float* grad);
  /// The module's forward pass (`forward` as wrapped), for a loss or an evaluation.
  torch::Tensor forward(const torch::Tensor& x) { return forward_(x); }
  /// The wrapped module as its own type (a loss that needs more than forward()).
  /// Throws std::bad_cast for another type.
  template <class Module>
  Module& module() {
    return dynamic_cast<Module&>(*module_);
  }
  /// Where it computes.
  torch::Device device() const { return device_; }
  /// On a device: copies `b` there on a stream of its own (nothing on the CPU).
  void stage(const batch_view& b) override;
  void predict(const batch_view& b, int64_t* labels) override;
  /// Moves the module to `device` ("cpu", "cuda", "cuda:N"); "bf16" runs the
  /// forward and backward under CUDA autocast. Throws std::invalid_argument
  /// for a device this LibTorch or machine lacks, or bf16 on the CPU.
  void place(const std::string& device, const std::string& precision) override;

 private:
  std::shared_ptr<torch::nn::Module> module_;
  forward_fn forward_;
  criterion_fn criterion_;  ///< empty: cross-entropy
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

  // Off the CPU (place()): the device, the gradient on it, and pinned host
  // buffers that batches come from and the gradient goes to.
  torch::Device device_{torch::kCPU};
  bool bf16_ = false;
  torch::Tensor device_grad_;  ///< parameters' gradient on the device
  torch::Tensor pinned_grad_;  ///< gradient and buffers, pinned on the host
  torch::Tensor pinned_w_;     ///< pulled weights on their way to the device, pinned
  torch::Tensor pinned_x_;     ///< a batch's examples, pinned (grows to the largest batch)
  struct staging;              ///< a batch stage() copied ahead, and the stream that copies it
  std::unique_ptr<staging> staged_;
  bool on_cpu() const { return device_.is_cpu(); }
  torch::Tensor examples_on_device(const batch_view& b);
  bool take_staged(const batch_view& b, torch::Tensor& x, torch::Tensor& y);
  /// Backpropagates loss() into `grad` (the parameters' gradient, then the buffers).
  float backpropagate(const std::function<torch::Tensor()>& loss, float* grad, bool staged);
};

/// A model of `m`, whose forward() maps a batch to logits: what register_model's factory returns.
template <class Module>
std::unique_ptr<model> wrap_module(std::shared_ptr<Module> m) {
  return std::make_unique<torch_model>(m, [m](const torch::Tensor& x) { return m->forward(x); });
}

}  // namespace syncpoint

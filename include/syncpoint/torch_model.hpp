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
#include <syncpoint/table.hpp>

#include <torch/torch.h>

#include <unordered_map>

namespace syncpoint {

/// A batch for a loss of your own (<syncpoint/torch_loop.hpp>): `data` (the
/// inputs, [batch, ...]) and `target` (anything else; may be undefined).
using torch_batch = torch::data::Example<>;

/// An embedding whose rows the parameter server keeps by key, a sparse table
/// (docs/sparse.md): a worker holds only the rows of its batch's keys. Register
/// it in a module as any submodule; the torch_model wrapping that module
/// reports it in tables(), loads each pull's rows into it and hands the rows'
/// gradients back with each push. Its rows are not among the model's dense
/// weights.
///
/// ```cpp
/// struct bag : torch::nn::Module {
///   syncpoint::ps_embedding words{nullptr};
///   torch::nn::Linear out{nullptr};
///   bag(syncpoint::table_spec t, int64_t classes) {
///     words = register_module("words", syncpoint::ps_embedding(t));
///     out = register_module("out", torch::nn::Linear(t.width, classes));
///   }
///   // x: [batch, ids] word ids as floats; each example's mean row, then a linear layer
///   torch::Tensor forward(const torch::Tensor& x) { return out(words(x.to(torch::kLong)).mean(1)); }
/// };
/// ```
class ps_embedding_impl : public torch::nn::Module {
 public:
  /// An embedding of `spec`'s table (its name, row width, and how the PS makes, moves and keeps its rows).
  explicit ps_embedding_impl(table_spec spec) : spec_(std::move(spec)) {}
  /// The rows of `keys` (int64, any shape): [keys' shape..., width]. Each
  /// key's row must have been loaded (the keys the model's keys() gave).
  torch::Tensor forward(const torch::Tensor& keys);
  /// The table it reads.
  const table_spec& spec() const { return spec_; }
  /// The rows forward() reads from now on, on `device` (torch_model::load_rows).
  void load(const row_block& rows, torch::Device device);
  using torch::nn::Module::load;  // (a module's saved state, as any module's)
  /// The last backward pass's gradient of the loaded rows, by key in the
  /// order load() gave (a row forward() did not read: zeros).
  row_block gradient() const;
  /// Forgets the last backward pass's gradient (before the next one).
  void clear_gradient();

 private:
  table_spec spec_;
  std::vector<uint64_t> keys_;
  std::unordered_map<uint64_t, int64_t> local_;  ///< key -> its row of weight_
  torch::Tensor weight_;  ///< the loaded rows [keys, width], a leaf that autograd differentiates
};
/// The module holder, as torch::nn::Embedding is: `ps_embedding(spec)` makes one, `ps_embedding{nullptr}` none yet.
TORCH_MODULE_IMPL(ps_embedding, ps_embedding_impl);

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

  // -- a sparse model: a module holding ps_embeddings --

  /// Which keys each table's rows a batch's examples `x` read (by table, repeats allowed).
  using keys_fn = std::function<std::vector<std::vector<uint64_t>>(const torch::Tensor& x)>;
  /// The ps_embeddings' tables, in the module's order (modules()).
  std::vector<table_spec> tables() const override;
  /// The keys set_keys() gives for b's examples; by default, for a module of
  /// one ps_embedding, every value of the examples (ids as floats) as a key.
  std::vector<std::vector<uint64_t>> keys(const batch_view& b) override;
  /// As above, for examples as a tensor (a torch loop's batch).
  std::vector<std::vector<uint64_t>> keys(const torch::Tensor& x);
  /// Sets how keys() reads a batch's keys (a module of several
  /// ps_embeddings, or one whose inputs are not all ids, needs it).
  void set_keys(keys_fn f) { keys_ = std::move(f); }
  void load_rows(std::vector<row_block> rows) override;
  const std::vector<row_block>& row_gradients() const override { return row_grads_; }

 private:
  std::vector<std::shared_ptr<ps_embedding_impl>> embeddings_;  ///< in tables()' order
  keys_fn keys_;
  std::vector<row_block> row_grads_;  ///< the last gradient's, by table
  void find_embeddings();
  void clear_row_gradients();
  void take_row_gradients();
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

/// \file
/// A model seen through one flat float parameter vector: the PS stores and
/// updates that vector, workers load it and return gradients of the same length.
/// A model is made for its data set's examples (their shape and classes, by
/// default Fashion-MNIST's 1x28x28 and 10) and takes them as a [batch, shape...]
/// tensor; it computes on a device ("cpu" by default, or a GPU: docs/gpu.md),
/// while weights and gradients always cross the seam as host floats.
///
/// ```cpp
/// auto m = syncpoint::make_model("mlp", syncpoint::input_of(train_set));  // fits train_set's examples
/// std::vector<float> w = m->initial_weights(/*seed=*/1);
/// std::vector<float> g(m->size());
/// m->load(w.data());
/// float loss = m->gradient(batch, g.data());  // batch: a batch_view, e.g. train_set.view(0, 64)
/// ```
#pragma once

#include <syncpoint/dataset.hpp>
#include <syncpoint/table.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace syncpoint {

struct metric;  // <syncpoint/messages.hpp>

/// A model over one flat vector of floats: its weights (parameters, then buffers), the
/// gradient of a batch's loss at given weights, and predictions. Workers and the evaluator
/// use it; register your own with register_model (a torch::nn::Module: <syncpoint/torch_model.hpp>).
class model {
 public:
  virtual ~model() = default;
  /// Length of the weights and gradients: the trained parameters, then the
  /// model's buffers (e.g. BatchNorm's running statistics).
  virtual size_t size() const = 0;
  /// How many of the last values are buffers: no optimizer trains them.
  /// gradient() writes their values after its forward pass there, and the PS
  /// combines the pushed values by the weight rule (docs/buffers.md).
  virtual size_t buffers() const { return 0; }
  /// The lengths of the model's parameter tensors, in the order of the
  /// weights (they sum to size() - buffers()): where a local-update protocol
  /// may cut the model into fragments (<syncpoint/local_work.hpp>). Default: one.
  virtual std::vector<size_t> tensor_sizes() const { return {size() - buffers()}; }
  /// Fresh weights, deterministic in `seed`.
  virtual std::vector<float> initial_weights(uint64_t seed) = 0;
  /// Replaces the model's parameters with `w[0..size())`.
  virtual void load(const float* w) = 0;
  /// As load, but the model may read `w` in place instead of copying it
  /// (it never writes to it).
  virtual void adopt(std::shared_ptr<const std::vector<float>> w) { load(w->data()); }
  /// Updates the model's own copy: w <- w - lr * grad for the parameters, and
  /// the buffers take grad's values (local training, WBSP).
  virtual void local_step(const float* grad, float lr) = 0;
  /// The parameters as they are now (after load, adopt and local steps):
  /// what a checkpoint keeps of a worker's copy. The default throws
  /// std::logic_error: a model without it cannot be checkpointed.
  virtual std::vector<float> current_weights() const;
  /// Writes the gradient of the mean cross-entropy over `b` into `grad`
  /// (overwriting it; the buffers' places get the buffers as the forward pass
  /// left them) and returns that loss.
  virtual float gradient(const batch_view& b, float* grad) = 0;
  /// Starts moving `b` to the model's device ahead of gradient(b), e.g. while
  /// a push waits for its reply; the caller leaves b's memory as it is until
  /// then. gradient() on the same memory finds the batch there; on any other
  /// batch it copies as usual. The default does nothing (nothing to move).
  virtual void stage(const batch_view& b) { (void) b; }
  /// Writes the predicted class of each example into `labels`.
  virtual void predict(const batch_view& b, int64_t* labels) = 0;
  /// What the evaluator measures of the weights the model holds on the
  /// held-out `test` (the built-in loop's evaluation): by default the share
  /// it classifies right, "accuracy"; a language model its "loss" per
  /// character and "perplexity" instead (a run without accuracy reports
  /// the first of them where accuracy would be).
  virtual std::vector<metric> evaluate(const dataset& test);
  /// Moves the model to `device` ("cpu", "cuda:N") computing in `precision`
  /// ("fp32", "bf16"); make_model calls it. Weights and gradients stay host
  /// floats. The default accepts only "cpu" and "fp32" and throws
  /// std::invalid_argument naming what it cannot do.
  virtual void place(const std::string& device, const std::string& precision);

  // -- a sparse model: rows of tables by key beside the dense vector (docs/sparse.md) --

  /// The model's sparse tables, whose rows the PS keeps by key and a worker
  /// pulls for its batch alone (<syncpoint/table.hpp>). Default: none.
  virtual std::vector<table_spec> tables() const { return {}; }
  /// The keys of each table that `b`'s examples read: one list a table, in
  /// tables()' order, repeats allowed. Default: none.
  virtual std::vector<std::vector<uint64_t>> keys(const batch_view& b);
  /// The rows the next gradient(), predict() and evaluate() read, as load()
  /// gives the weights: one block a table, holding at least the keys their
  /// batch reads. The default throws std::logic_error (a model without tables).
  virtual void load_rows(std::vector<row_block> rows);
  /// The row gradients of the last gradient(): one block a table, the keys
  /// load_rows gave in their order (a row the batch did not read: zeros).
  /// The default throws std::logic_error (a model without tables).
  virtual const std::vector<row_block>& row_gradients() const;
};

/// What a model is made for: its data set's examples and where it computes.
struct model_input {
  std::vector<int64_t> shape{1, 28, 28};  ///< one example's (rank 1: a vector; rank 3: channels x height x width)
  int64_t classes = 10;                   ///< labels 0 .. classes - 1
  std::string device = "cpu";             ///< "cpu" or "cuda:N" (docs/gpu.md)
  std::string precision = "fp32";         ///< "fp32", or "bf16" (autocast, on CUDA only)
  std::string options;                    ///< what follows ':' in the model's name ("tinylm:layers=4": "layers=4")
  std::string loss;                       ///< a loss of its own for a LibTorch model: "script:FILE.pt" (empty: cross-entropy)
};

/// What a model for `data`'s examples takes (its shape and classes, on the CPU in fp32).
model_input input_of(const dataset& data);

/// An example shape as text, e.g. "3x32x32".
std::string shape_text(const std::vector<int64_t>& shape);

/// Makes a fresh model for an input (make_model moves it to in.device afterwards).
using model_factory = std::function<std::unique_ptr<model>(const model_input&)>;

/// Builds the model registered as `name` for `in`'s examples and places it on
/// in.device; throws std::invalid_argument listing the known names, or naming
/// the shape, device or precision the model cannot take. A name may carry the
/// model's options after a colon, handed to it as in.options:
/// "tinylm:layers=4,width=128,heads=4" (a decoder-only transformer for
/// --dataset text, 2 layers of width 64 and 4 heads by default; embed=table
/// keeps its token embedding in the PS as a sparse table, opt=sgd|adagrad|adam
/// its rows' optimizer, adam by default). Built in: "softmax"
/// (Eigen), "mlp" (one hidden layer of 256), "cnn" (two 5x5 conv layers),
/// "resnet" (three residual blocks with BatchNorm, 308k parameters at 1x28x28),
/// "resnet18" (ResNet-18's CIFAR variant, 11.2M parameters), the last four
/// LibTorch, each sized by in.shape and in.classes; "timing-only" (one
/// parameter, a zero gradient, no work: what `syncpoint simulate` runs);
/// "script:FILE.pt", a TorchScript module Python saved
/// (torch.jit.script(net).save(FILE)), starting from the weights it holds
/// (docs/python.md). With in.loss "script:LOSS.pt", a LibTorch model
/// differentiates that scripted function of (output, target) instead of
/// cross-entropy.
std::unique_ptr<model> make_model(const std::string& name, const model_input& in = {});

/// Adds a model under `name`, e.g. one wrapping any torch::nn::Module (see
/// <syncpoint/torch_model.hpp>), sized by the input it is made for. Returns
/// false if the name is taken.
bool register_model(const std::string& name, model_factory factory);

/// As above, for a model of a fixed shape: its factory takes no input, and a
/// data set its shape does not fit is refused when a job starts.
bool register_model(const std::string& name, std::function<std::unique_ptr<model>()> factory);

/// Every registered model's name, sorted.
std::vector<std::string> model_names();

/// Fraction of `data` (first `limit` examples if limit > 0) that `m` with
/// weights `w` (null: the weights `m` holds) classifies correctly.
double accuracy(model& m, const float* w, const dataset& data, int64_t limit = 0);

/// The "timing-only" model.
std::unique_ptr<model> make_timing_model();

/// Builds a softmax regression on Eigen only (no LibTorch): fast tests.
std::unique_ptr<model> make_softmax_model(int64_t dim = 784, int64_t classes = 10);

/// Sets the number of LibTorch intra-op threads for every thread that runs a
/// torch model from now on, and the BLAS's threads per call (the runtime uses
/// 1: parallelism comes from workers).
void set_torch_threads(int n);

/// The LibTorch version built against, e.g. "1.13.0".
std::string torch_version();

/// Whether the LibTorch built against has CUDA (whatever devices this machine has).
bool torch_has_cuda();

/// The CUDA devices this process sees (0 without CUDA): "cuda:0" .. "cuda:N-1".
int cuda_device_count();

}  // namespace syncpoint

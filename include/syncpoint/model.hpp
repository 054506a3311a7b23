/// \file
/// A model seen through one flat float parameter vector: the PS stores and
/// updates that vector, workers load it and return gradients of the same length.
/// A model takes examples of the shape its data set gives (Fashion-MNIST:
/// 1x28x28), as a [batch, shape...] tensor.
///
/// ```cpp
/// auto m = syncpoint::make_model("mlp");
/// std::vector<float> w = m->initial_weights(/*seed=*/1);
/// std::vector<float> g(m->size());
/// m->load(w.data());
/// float loss = m->gradient(batch, g.data());  // batch: a batch_view, e.g. train_set.view(0, 64)
/// ```
#pragma once

#include <syncpoint/dataset.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace syncpoint {

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
  /// Writes the predicted class of each example into `labels`.
  virtual void predict(const batch_view& b, int64_t* labels) = 0;
};

/// Makes a fresh model.
using model_factory = std::function<std::unique_ptr<model>()>;

/// Builds the model registered as `name`; throws std::invalid_argument listing
/// the known names otherwise. Built in: "softmax" (Eigen), "mlp" (784-256-10),
/// "cnn" (two conv layers), "resnet" (three residual blocks with BatchNorm,
/// 308k parameters), all three LibTorch; "timing-only" (one parameter, a
/// zero gradient, no work: what `syncpoint simulate` runs).
std::unique_ptr<model> make_model(const std::string& name);

/// Adds a model under `name`, e.g. one wrapping any torch::nn::Module (see
/// <syncpoint/torch_model.hpp>). Returns false if the name is taken.
bool register_model(const std::string& name, model_factory factory);

/// Every registered model's name, sorted.
std::vector<std::string> model_names();

/// Fraction of `data` (first `limit` examples if limit > 0) that `m` with
/// weights `w` (null: the weights `m` holds) classifies correctly.
double accuracy(model& m, const float* w, const dataset& data, int64_t limit = 0);

/// The cost of one gradient on `batch` examples on the reference core, in ms:
/// the virtual clock's default per-iteration cost, so that a virtual run is
/// reproducible from its command line. Built-in models come from a table
/// measured once (one core of the development VM, LibTorch 1.13 with serial
/// OpenBLAS, batch 64: mlp 0.70 ms, cnn 3.80 ms, softmax 0.075 ms, resnet 76 ms); any other
/// model costs like the mlp per parameter. Linear in `batch`. `source` (if
/// given) says which: "model table" or "parameter formula".
double reference_gradient_ms(const std::string& model, int batch, std::string* source = nullptr);

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

}  // namespace syncpoint
